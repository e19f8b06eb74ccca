"""Regenerate tests/parity/data/openvlm_leaderboard.json by running the leaderboard's own code.

The OpenVLM leaderboard (the Hugging Face Space ``opencompass/open_vlm_leaderboard``) computes
its table in ``gen_table.py`` ``generate_table(results, fields)`` from the results file it
downloads (``OpenVLM.json``: per model, per benchmark, the figures VLMEvalKit reported), over the
fields ``meta_data.py`` names (``DEFAULT_BENCH`` on load, any ticked subset of ``MAIN_FIELDS``).
The Space's files are mirrored in open-compass/VLMEvalKit, branch ``leaderboard``; this script
imports that checkout's ``gen_table.py`` (which imports its ``meta_data.py``) and calls
``generate_table`` on generated results files, never a copy of it.

Runtime patch: ``gen_table.py`` imports gradio at the top and uses it only in the page's
callbacks; an empty module named ``gradio`` is put in ``sys.modules`` so the file imports
without the web framework. ``generate_table`` itself touches neither gradio nor the network.

Generated: seeded results files in the shape of ``OpenVLM.json`` (every model with
MMBench v1.1 test EN and CN, as ``generate_table`` requires; each other benchmark present or
absent; figures with one decimal as the file holds them, or with more; MME's total in points
out of 2,800, OCRBench's ``Final Score`` out of 1,000; a few models whose mean lies on a
rounding tie), and the field lists: ``DEFAULT_BENCH``, ``MAIN_FIELDS``, and some subsets a user
could tick. Recorded per case and model: each column's value as the table shows it and
``Avg Score`` (None where a column is missing).

Run with numpy and pandas installed (the lmmprobe environment has both)::

    git -C VLMEvalKit worktree add /tmp/openvlm-lb 1e1b41d67c5817047935b5a32d1af9ed0138da35
    python tests/parity/generate/openvlm_leaderboard.py --leaderboard /tmp/openvlm-lb

A re-run with the same seed writes the same bytes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import random
import sys
import types
from pathlib import Path
from typing import Any

SEED = 20261130
DATA = Path(__file__).resolve().parents[1] / "data"
GENERATOR = "tests/parity/generate/openvlm_leaderboard.py"
REFERENCE = {
    "repo": "open-compass/VLMEvalKit (branch leaderboard: the Space opencompass/open_vlm_leaderboard)",
    "commit": "1e1b41d67c5817047935b5a32d1af9ed0138da35",
    "file": "gen_table.py, meta_data.py",
    "function": "generate_table(results, fields) over meta_data.DEFAULT_BENCH / MAIN_FIELDS",
}
MMBENCH = ("MMBench_TEST_EN_V11", "MMBench_TEST_CN_V11")


def _load(root: Path) -> types.ModuleType:
    sys.modules.setdefault("gradio", types.ModuleType("gradio"))
    sys.path.insert(0, str(root))  # gen_table imports meta_data from its own folder
    spec = importlib.util.spec_from_file_location("gen_table", root / "gen_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _figure(rng: random.Random, low: float, high: float, *, whole: bool = False) -> float:
    value = rng.uniform(low, high)
    if whole:
        return float(round(value))
    return round(value, 1) if rng.random() < 0.6 else value


def _model(rng: random.Random, fields: list[str], keep: float) -> dict[str, Any]:
    item: dict[str, Any] = {}
    for name in MMBENCH:
        item[name] = {"Overall": _figure(rng, 20, 95)}
    for field in fields:
        if field == "MMBench_V11" or rng.random() > keep:
            continue
        if field == "MME":
            item[field] = {"Overall": _figure(rng, 600, 2800)}
        elif field == "OCRBench":
            item[field] = {"Final Score": _figure(rng, 0, 1000, whole=True)}
        else:
            item[field] = {"Overall": _figure(rng, 0, 100)}
    return item


def _tie_model(rng: random.Random, fields: list[str]) -> dict[str, Any]:
    # Every column at one value except the last, set so that the mean of the eight normalized
    # scores ends in 5 at the second decimal: round() then meets a decimal tie.
    base = round(rng.uniform(30, 80), 1)
    item: dict[str, Any] = {name: {"Overall": base} for name in MMBENCH}
    for field in fields[1:]:
        if field == "OCRBench":
            item[field] = {"Final Score": base * 10}
        elif field == "MME":
            item[field] = {"Overall": base * 28}
        else:
            item[field] = {"Overall": base}
    item[fields[-1]] = {"Overall": round(base + 0.05 * len(fields) * rng.choice([1, 3, 5]), 2)}
    return item


def _meta(i: int) -> dict[str, Any]:
    return {
        "Method": [f"model-{i}", f"https://example.org/model-{i}"],
        "Parameters": f"{i + 1}B",
        "Language Model": "lm",
        "Vision Model": "vit",
        "OpenSource": "Yes",
        "Verified": "Yes",
    }


def _value(v: Any) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return float(v)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--leaderboard", type=Path, required=True, help="the branch's checkout")
    args = parser.parse_args()
    gen = _load(args.leaderboard)
    meta = sys.modules["meta_data"]
    main_fields = list(meta.MAIN_FIELDS)
    default = list(meta.DEFAULT_BENCH)
    rng = random.Random(SEED)
    results: dict[str, Any] = {}
    for i in range(16):
        results[f"model-{i}"] = {
            "META": _meta(i),
            **_model(rng, main_fields, 1.0 if i < 8 else 0.8),
        }
    for i in range(16, 22):
        results[f"model-{i}"] = {"META": _meta(i), **_tie_model(rng, default)}
    selections = {
        "DEFAULT_BENCH": default,
        "MAIN_FIELDS": main_fields,
        "MME+OCRBench": ["MME", "OCRBench"],
        "HallusionBench+MMVet+LLaVABench": ["HallusionBench", "MMVet", "LLaVABench"],
        "MMBench_V11": ["MMBench_V11"],
    }
    cases = []
    for label, fields in selections.items():
        table = gen.generate_table(results, fields)
        rows = {}
        for _, row in table.iterrows():
            rows[row["name"]] = {
                "columns": {f: _value(row[f]) for f in fields},
                "avg_score": _value(row["Avg Score"]),
            }
        cases.append({"selection": label, "fields": fields, "models": rows})
    doc = {
        "reference": REFERENCE,
        "generator": GENERATOR,
        "seed": SEED,
        "default_bench": default,
        "main_fields": main_fields,
        "results": {m: {k: v for k, v in r.items() if k != "META"} for m, r in results.items()},
        "cases": cases,
    }
    out = DATA / "openvlm_leaderboard.json"
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{out.name}: {len(results)} models, {len(cases)} selections")


if __name__ == "__main__":
    main()
