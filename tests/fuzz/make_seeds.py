#!/usr/bin/env python3
"""Writes tests/fuzz/seeds/: scenarios derived from scenarios/ and configs/ that reach every
schema (each config file given inline as an override of its reference), small layouts that
reach a valid plan, and tests/fuzz/moesim.dict (every key of `moesim schema`, the names in
configs/, the enum values and the layout alphabet) for libFuzzer's -dict.

Usage: tests/fuzz/make_seeds.py [path/to/moesim]   (the binary gives the key list)
Re-run it when configs/ or the schema change; the seeds are inputs, not expectations."""
import json
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parents[2]
seeds = root / "tests" / "fuzz" / "seeds"
seeds.mkdir(exist_ok=True)
for old in seeds.glob("*.json"):
    old.unlink()

record = json.loads((root / "scenarios" / "gb300-256-record.json").read_text())
configs = root / "configs"


def without_sources(doc):
    return {k: v for k, v in doc.items() if k != "sources"}


def write(name, doc):
    (seeds / f"{name}.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n")


def small(**layout):
    s = json.loads(json.dumps(record))
    s.pop("published", None)
    s["gpus"] = layout.pop("gpus", 64)
    s["training"]["global_batch"] = layout.pop("global_batch", 128)
    s["training"]["mtp_layers"] = 0
    s["model"] = {"base": "deepseek-v3", "layers": layout.pop("layers", 4),
                  "moe": {"first_dense_layers": 1}}
    s["layout"] = {"tp": 1, "pp": 2, "vpp": 1, "ep": 32, "etp": 1, "cp": 1, "gpus_per_domain": 32}
    s["layout"].update(layout)
    return s


# Each config file, inline, as the override of the reference that names it.
for kind, key in (("systems", "system"), ("models", "model"), ("stacks", "stack")):
    for f in sorted((configs / kind).glob("*.json")):
        s = json.loads(json.dumps(record))
        s[key] = {"base": f.stem, **without_sources(json.loads(f.read_text()))}
        write(f"{key}-{f.stem}", s)
for f in sorted((configs / "hardware").glob("*.json")):
    s = json.loads(json.dumps(record))
    s["system"] = {"base": "gb300-nvl72", "gpu": {"base": f.stem, **without_sources(json.loads(f.read_text()))}}
    write(f"gpu-{f.stem}", s)
for f in sorted((configs / "dispatchers").glob("*.json")):
    s = json.loads(json.dumps(record))
    s["stack"] = {"base": "megatron-bridge-26.06",
                  "deepep": {"base": f.stem, **without_sources(json.loads(f.read_text()))}}
    write(f"dispatcher-{f.stem}", s)

# Small layouts that pass the plan stage (so the fuzzer starts beside valid layouts).
write("small-pp2-ep32", small())
write("small-tp2-cp2", small(tp=2, cp=2, pp=2, ep=8, gpus=64))
write("small-vpp2", small(pp=2, vpp=2, global_batch=256, layers=6))
write("small-explicit-layout", small(pipeline_layout="Ett|ttL", layers=4))
write("small-repeat-layout", small(pipeline_layout="E(t|)*3tL", layers=4, pp=4, ep=16, gpus=64))
dense = small(ep=1, pp=2)
dense["model"] = {"base": "llama-3.1-405b", "layers": 4}
dense["layout"]["tp"] = 8
write("small-dense-tp8", dense)
write("small-published", {**small(), "published": record["published"]})

# Dictionary: schema keys, config names, enum values, layout alphabet.
binary = sys.argv[1] if len(sys.argv) > 1 else str(root / "build" / "moesim")
schema = subprocess.run([binary, "schema"], check=True, capture_output=True, text=True).stdout
tokens = set()
for dotted in re.findall(r"^\| `([a-z0-9_.]+)` \|", schema, re.M):
    tokens.update(dotted.split("."))
tokens.update(re.findall(r'"([a-z0-9_]+)"', schema))
for choices in re.findall(r"one of ([^|]*)", schema):  # enum values, e.g. layout.schedule's
    tokens.update(re.findall(r"`([^`]+)`", choices))
for kind in ("systems", "models", "stacks", "hardware", "dispatchers"):
    tokens.update(f.stem for f in (configs / kind).glob("*.json"))
tokens.update(["base", "sources", "*", "E", "L", "t", "m", "|", "(", ")", "*", "Et|", "(tt|)*"])
tokens.discard("")
numbers = ["0", "-1", "1", "2147483647", "2147483648", "-2147483648", "1e12", "1e308", "0.5",
           "4294967296", "18446744073709551616", "1e306", "1e-308", "1e-300", "-0.5"]
lines = [f'"{json.dumps(t)[1:-1]}"' for t in sorted(tokens)]
lines += [f'"{json.dumps(t)[1:-1]}"' for t in ('":', '{"base":"', '":{', '[]', '{}', 'null', 'true', 'false')]
lines += [f'"{n}"' for n in numbers]
(root / "tests" / "fuzz" / "moesim.dict").write_text(
    "# libFuzzer dictionary for moesim scenarios; written by tests/fuzz/make_seeds.py\n" + "\n".join(lines) + "\n")
print(f"{len(list(seeds.glob('*.json')))} seeds, {len(lines)} dictionary entries")
