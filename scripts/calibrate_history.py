#!/usr/bin/env python3
"""Refits every parameter of configs/fitted.json (the few that no measurement gives), each to the
one published row it is fitted to, writes the value into every file the registry lists for it,
and then does the leave-one-out check: it refits the parameter without its row, to the row named
under leave_one_out.fitted_to, runs its own row with that value and records that row's error
(leave_one_out.values and .error in configs/fitted.json; docs/validation.md shows them).

A parameter with several keys is fitted as one: all its keys scale by the same factor, so their
recorded ratio stays as the registry says. (The HybridEP dispatch and combine efficiencies were
such a pair; the dispatchers now come from their own microbenchmarks, configs/dispatchers/*.json
(one file per dispatcher), and NCCL's rates from nccl-tests, configs/systems/*.json, so they are not fitted.)

Usage: scripts/calibrate_history.py [build/moesim]      (about a minute: bisections of runs)
Afterwards: rebuild nothing, run scripts/update-validation-baseline.sh and regenerate
docs/validation.md (build/moesim validate --format markdown --output docs/validation.md).
"""
import json
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(__file__).resolve().parent.parent
moesim = sys.argv[1] if len(sys.argv) > 1 else str(root / "build" / "moesim")
registry_file = root / "configs" / "fitted.json"
published = root / "scenarios" / "published"


def compact(text):
    """json.dumps(indent=2) with lists of scalars on one line, as the repository's files are."""
    scalar = r'(?:"[^"\n]*"|[-0-9.e]+|true|false)'
    pattern = r'\[\s*\n\s*(' + scalar + r'(?:,\s*\n\s*' + scalar + r')*)\s*\n\s*\]'
    text = re.sub(pattern, lambda m: "[" + re.sub(r',\s*\n\s*', ', ', m.group(1)) + "]", text)
    # A dispatcher's kernels (dispatch and combine) on one line each.
    member = r'"[^"\n]*": ' + scalar
    kernel = r'("(?:dispatch|combine)": )\{\s*\n\s*(' + member + r'(?:,\s*\n\s*' + member + r')*)\s*\n\s*\}'
    return re.sub(kernel, lambda m: m.group(1) + "{" + re.sub(r',\s*\n\s*', ', ', m.group(2)) + "}", text)


def write_json(path, doc):
    path.write_text(compact(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n")


def scenario_file(row_id):
    for f in sorted(published.glob("*.json")):
        if json.loads(f.read_text()).get("published", {}).get("id") == row_id:
            return f
    sys.exit(f"no published scenario with id {row_id}")


def tflops_and_target(row_id):
    f = scenario_file(row_id)
    out = subprocess.run([moesim, "run", str(f), "--configs", str(root / "configs"), "--format", "json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"moesim run {f} failed:\n{out.stderr}")
    return json.loads(out.stdout)["tflops_per_gpu"], json.loads(f.read_text())["published"]["tflops_per_gpu"]


def set_values(entry, values):
    """Writes `values` (key -> number) at every location of the entry."""
    for location in entry["in"]:
        file, _, prefix = location.partition("#")
        path = root / file
        doc = json.loads(path.read_text())
        node = doc
        for key in filter(None, prefix.split(".")):
            node = node[key]
        node.update(values)
        write_json(path, doc)


def scaled(entry, factor):
    return {k: round(v * factor, 6) for k, v in entry["values"].items()}


def fit(entry, row_id, iterations=16):
    """Bisection on the common factor of the entry's keys so that row_id matches its figure."""
    lo, hi = 0.25, 4.0
    if any("efficiency" in k for k in entry["values"]):  # fractions of a link's bandwidth: at most 1
        hi = min(hi, 1.0 / max(entry["values"].values()))

    def error(factor):
        set_values(entry, scaled(entry, factor))
        simulated, target = tflops_and_target(row_id)
        return simulated / target - 1

    e_lo, e_hi = error(lo), error(hi)
    if e_lo * e_hi > 0:
        print(f"  {row_id}: no value in [{lo}, {hi}] x the registry's reproduces it "
              f"(errors {100 * e_lo:+.1f} % .. {100 * e_hi:+.1f} %); keeping the nearer bound")
        return lo if abs(e_lo) < abs(e_hi) else hi
    for _ in range(iterations):
        mid = (lo + hi) / 2
        e_mid = error(mid)
        if e_mid * e_lo > 0:
            lo, e_lo = mid, e_mid
        else:
            hi = mid
    return (lo + hi) / 2


def rounded(values):
    return {k: float(f"{v:.4g}") for k, v in values.items()}


registry = json.loads(registry_file.read_text())
for entry in registry["parameters"]:
    print(f"{entry['name']}:")
    fitted = rounded(scaled(entry, fit(entry, entry["fitted_to"])))
    print(f"  fitted to {entry['fitted_to']}: {fitted}")
    loo = entry.get("leave_one_out")
    if loo:
        entry_at_fit = dict(entry, values=fitted)
        loo_values = rounded(scaled(entry_at_fit, fit(entry_at_fit, loo["fitted_to"])))
        set_values(entry, loo_values)
        simulated, target = tflops_and_target(entry["fitted_to"])
        loo.pop("value", None)
        loo["values"] = loo_values
        loo["error"] = round(simulated / target - 1, 4)
        print(f"  leave-one-out, fitted to {loo['fitted_to']}: {loo_values}; {entry['fitted_to']} then "
              f"{100 * loo['error']:+.1f} %")
    set_values(entry, fitted)
    entry["values"] = fitted
write_json(registry_file, registry)
print(f"wrote {registry_file.relative_to(root)} and the files it lists")
