#!/usr/bin/env python3
"""Writes tests/fuzz/seeds/: scenarios derived from scenarios/ and configs/ that reach every
schema (each config file given inline as an override of its reference), small layouts that
reach a valid plan, the bundled search and sweep files and small variants of them ({"search":
...}, {"sweep": ...}), option sets of `moesim collective` ({"collective": ...}), and
tests/fuzz/moesim.dict (every key of `moesim schema`, the names in configs/, the enum values,
the layout alphabet, the keys of search and sweep files and the collective options) for
libFuzzer's -dict.

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
    # Megatron overlaps EP only with virtual stages when it pipelines, and delays weight
    # gradients only with that overlap (the record's stack enables both): off without virtual
    # stages, so the seed stays valid.
    if s["layout"].get("vpp", 1) == 1 and s["layout"]["pp"] > 1:
        s["recipe"] = {"ep_overlap": False, "delay_wgrad": False}
    return s


# Each config file, inline, as the override of the reference that names it.
for kind, key in (("systems", "system"), ("models", "model"), ("stacks", "stack")):
    for f in sorted((configs / kind).glob("*.json")):
        s = json.loads(json.dumps(record))
        doc = without_sources(json.loads(f.read_text()))
        s[key] = {"base": f.stem, **doc}
        if doc.get("nvlink_domain_gpus", 72) < s["layout"]["gpus_per_domain"]:
            s["layout"]["gpus_per_domain"] = 0  # the record's 64 per domain do not fit an HGX node
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

# Search files (tests/fuzz/fuzz_batches.hpp reads them as if they stood in scenarios/search/):
# the bundled ones, and small spaces over each kind of axis so that mutations start near inputs
# whose candidates are enumerated and screened.
for f in sorted((root / "scenarios" / "search").glob("*.json")):
    write(f"search-{f.stem}", {"search": json.loads(f.read_text())})


def search(name, **fields):
    write(f"search-{name}", {"search": {"name": name, "base": "../gb300-256-record.json", **fields}})


search("small-layouts", space={"layout": {"tp": [1, 2], "pp": [2, 4], "vpp": [1, 2], "ep": [16, 32]},
                               "training": {"micro_batch": [1]},
                               "recipe": {"recompute": [[]], "ep_overlap": [False], "delay_wgrad": [False]}})
search("schedules", simulate=3,
       space={"layout": {"tp": [1], "pp": [2, 4], "vpp": [1, 2], "ep": [32], "schedule": ["1f1b", "zb-h1", "dualpipev"],
                         "pipeline_layout": ["", "Et*3|(tt|)*5tL"]},
              "training": {"micro_batch": [1]},
              "recipe": {"recompute": [[], ["moe_act"], ["mla_up_proj", "moe_act"]], "ep_overlap": [True],
                         "delay_wgrad": [False]}})
search("set-and-gpus", gpus=512, set={"layout.gpus_per_domain": 64, "training.global_batch": 8192},
       space={"layout": {"tp": [1], "pp": [2], "ep": [32, 64]}, "training": {"micro_batch": [1, 2]},
              "recipe": {"recompute": [[]], "ep_overlap": [False, True], "delay_wgrad": [False],
                         "dispatcher": ["deepep", "hybridep"]}})
search("gb200-base", base="../published/gb200-bf16-2511.json",
       space={"layout": {"pp": [4, 8], "ep": [32, 64], "cp": [1]}, "recipe": {"recompute": [[]]}})

# Sweep files (as if they stood in scenarios/sweeps/): the bundled ones, and variants with
# scenario-path axes, listed points with their own settings, and strong scaling.
for f in sorted((root / "scenarios" / "sweeps").glob("*.json")):
    write(f"sweep-{f.stem}", {"sweep": json.loads(f.read_text())})


def sweep(name, **fields):
    write(f"sweep-{name}", {"sweep": {"name": name, **fields}})


sweep("path-axes", base="../gb300-256-record.json",
      axes=[{"path": "layout.pp", "values": [2, 4]}, {"path": "system.nic_gbits_per_s", "values": [400, 800],
                                                       "name": "nic"}])
sweep("listed-points", base="../gb300-256-record.json",
      points=[{"label": "record"}, {"label": "gb200", "set": {"system": "gb200-nvl72"}},
              {"label": "bf16", "base": "../published/gb300-bf16-2511.json", "set": {"layout.ep": 32}}],
      axes=[{"gpus": [256, 512], "mode": "strong"}])
sweep("gpus-and-domains", base="../gb300-256-ep64-two-racks.json",
      axes=[{"gpus": [128, 256, 1024]}, {"path": "layout.gpus_per_domain", "values": [0, 64, 72]}])

# Options of `moesim collective` (keys: the long options without dashes, with underscores).
collectives = {
    "ep-dispatch-default": {},
    "ep-combine-hybridep-two-domains": {"op": "ep-combine", "dispatcher": "hybridep", "ranks": 128},
    "ep-dispatch-alltoall-bf16": {"dispatcher": "alltoall", "fp8": False, "ranks": 64, "tokens": 8192},
    "ep-dispatch-groups": {"ranks": 64, "experts": 256, "topk": 8, "groups": 8, "topk_groups": 4, "sms": 20},
    "ep-dispatch-kernels": {"system": "hgx-b200", "ep": 8, "kernels": "deepep-v2", "gpus_per_domain": 8},
    "ep-dispatch-uneven-domains": {"ranks": 64, "gpus_per_domain": 36, "system": "gb200-nvl72"},
    "all-reduce-sizes": {"op": "all-reduce", "ranks": 8, "bytes": "1K,1M,128M,1G"},
    "all-reduce-ring-old-nccl": {"op": "all-reduce", "system": "hgx-h100", "ranks": 16, "algo": "ring",
                                 "nccl_version": "2.18.5", "bytes": "64M"},
    "all-reduce-no-nvls": {"op": "all-reduce", "system": "gb200-nvl72", "ranks": 72, "nvls": False},
    "all-gather-racks": {"op": "all-gather", "ranks": 144, "bytes": "16M"},
    "reduce-scatter-ring": {"op": "reduce-scatter", "system": "hgx-h100", "ranks": 32, "algo": "ring", "bytes": "1K,64M"},
    "all-to-all": {"op": "all-to-all", "ranks": 32, "bytes": "256M"},
    "send-recv": {"op": "send-recv", "ranks": 2, "bytes": "8M", "stack": "megatron-core-baseline"},
}
for name, options in collectives.items():
    write(f"collective-{name}", {"collective": options})

# Measured outputs as `moesim calibrate` reads them ({"tool_output": {"text": ..., hints}}): the
# bundled examples, each with the options its README line gives.
tool_hints = {"hgx-b200-2nodes-all_reduce_perf.txt": {"ranks": 16},
              "gb200-tray-all_reduce_ring.txt": {"ranks": 4, "algo": "ring"},
              "h800-deepep-intranode.txt": {"ranks": 8},
              "gb200-hybridep-ep32.txt": {"sms": 32},
              "h200-kernels.csv": {}}
for file, hints in tool_hints.items():
    text = (root / "examples" / "calibration" / file).read_text()
    write(f"tool-output-{pathlib.Path(file).stem}", {"tool_output": {"text": text, **hints}})

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
# Search and sweep files, the targets' envelopes, the collective options and their values.
tokens.update(["search", "sweep", "collective", "name", "description", "set", "space", "simulate", "gpus",
               "points", "axes", "label", "path", "values", "mode", "weak", "strong", "layout", "training", "recipe",
               "../gb300-256-record.json", "../published/gb200-bf16-2511.json", "layout.", "system.", "training.",
               "model.", "recipe."])
for options in collectives.values():
    tokens.update(options.keys())
    tokens.update(v for v in options.values() if isinstance(v, str))
tokens.update(["tool_output", "text", "experts", "tokens", "hidden", "topk", "[tuning] Best dispatch (FP8): ",
               "[tuning] Best combine: ", "[config] num_tokens=", "GB/s (NVL)", "GB/s (RDMA)", "t: ", " us",
               "=== Kernel Benchmark (FP8, 32 ranks) ===", "=== Torch API Benchmark (BF16, 8 ranks) ===",
               "dispatch kernel (FP8)(NVL): ", "avg_t=", "# Collective test starting: all_reduce_perf",
               "nccl-library=", "#  Rank", "op,precision,M,K,N,groups,seq,heads,d_qk,d_v,bytes,time_us", "gemm",
               "attention_forward", "attention_backward", "copy", "elementwise", "Avg (ns)"])
tokens.update(["op", "ranks", "bytes", "algo", "nvls", "nccl_version", "dispatcher", "kernels", "sms", "fp8",
               "ep-dispatch", "ep-combine", "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "send-recv",
               "ring", "tree", "nvls_tree", "pat", "alltoall", "deepep", "hybridep", "K", "M", "G", "2.28"])
tokens.discard("")
numbers = ["0", "-1", "1", "2147483647", "2147483648", "-2147483648", "1e12", "1e308", "0.5",
           "4294967296", "18446744073709551616", "1e306", "1e-308", "1e-300", "-0.5"]
lines = [f'"{json.dumps(t)[1:-1]}"' for t in sorted(tokens)]
lines += [f'"{json.dumps(t)[1:-1]}"' for t in ('":', '{"base":"', '":{', '[]', '{}', 'null', 'true', 'false')]
lines += [f'"{n}"' for n in numbers]
(root / "tests" / "fuzz" / "moesim.dict").write_text(
    "# libFuzzer dictionary for moesim scenarios; written by tests/fuzz/make_seeds.py\n" + "\n".join(lines) + "\n")
print(f"{len(list(seeds.glob('*.json')))} seeds, {len(lines)} dictionary entries")
