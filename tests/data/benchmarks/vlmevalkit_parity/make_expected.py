"""Score the parity inputs with VLMEvalKit's own code; write ``expected.json``.

Runs ``mcq_circular_eval`` (CircularEval benchmarks) or ``mcq_vanilla_eval`` with
``model=None`` (VLMEvalKit's ``exact_matching`` policy: its rules alone, ``can_infer``), then
``report_acc``, exactly as ``ImageMCQDataset.evaluate_heuristic`` does, from a VLMEvalKit
checkout's ``vlmeval/dataset/utils/multiple_choice.py`` and ``vlmeval/utils/matching_util.py``.
The package's ``__init__`` imports every model and dataset (torch, transformers...), so the two
modules are loaded by path under a stand-in ``vlmeval`` package giving the plumbing they import
(pickle load/dump, a logger, VLMEvalKit's ``cn_string``, ``istype``, ``d2df``); the dataset's
own loading (``ImageBaseDataset.__init__``: ``pd.read_csv(sep='\\t')``, index as text, then as
int) is repeated here as written there.

    git -C /path/to/VLMEvalKit checkout e8e78f05f3080fe28154f2130321f17951c3be94
    git -C /path/to/BLINK_Benchmark checkout 2d6a779be4aa1ad0d38d7aa539bcb43b6dd81592
    python tests/data/benchmarks/vlmevalkit_parity/make_expected.py /path/to/VLMEvalKit \\
        /path/to/BLINK_Benchmark

BLINK's answers are read by VLMEvalKit (``mcq_vanilla_eval``) and scored by BLINK's own
``eval/evaluate.py`` ``eval_prediction`` (its module globals ``subtasks`` set as its
``__main__`` sets them), on a temporary folder in its layout.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import pickle
import sys
import tempfile
import textwrap
import types
from pathlib import Path

import numpy as np
import pandas as pd
from make_inputs import SETS

HERE = Path(__file__).parent


def _stand_in(repo: Path) -> types.ModuleType:
    def load(f: str) -> object:
        if str(f).endswith(".pkl"):
            with open(f, "rb") as fh:
                return pickle.load(fh)
        return pd.read_csv(f, sep="\t")

    def dump(data: object, f: str) -> None:
        if str(f).endswith(".pkl"):
            with open(f, "wb") as fh:
                pickle.dump(data, fh)
        else:
            data.to_csv(f, sep="\t", index=False)  # type: ignore[attr-defined]

    def istype(s: object, kind: type) -> bool:  # vlmeval/smp/misc.py, as written
        if isinstance(s, kind):
            return True
        try:
            return isinstance(eval(s), kind)
        except Exception:
            return False

    smp = types.ModuleType("vlmeval.smp")
    smp.load, smp.dump, smp.istype = load, dump, istype  # type: ignore[attr-defined]
    smp.cn_string = lambda s: __import__("re").search("[\u4e00-\u9fff]", s) is not None  # type: ignore[attr-defined]
    smp.d2df = lambda d: pd.DataFrame({x: [d[x]] for x in d})  # type: ignore[attr-defined]
    smp.get_logger = logging.getLogger  # type: ignore[attr-defined]
    smp.get_pred_file_format = lambda: "tsv"  # type: ignore[attr-defined]
    smp.timestr = lambda *a: "parity"  # type: ignore[attr-defined]
    log = types.ModuleType("vlmeval.smp.log")
    log.get_logger = logging.getLogger  # type: ignore[attr-defined]
    vlm = types.ModuleType("vlmeval.smp.vlm")
    # vlmeval/smp/vlm.py build_option_str, as written there (for the options it is given).
    vlm.build_option_str = lambda d: (
        "There are several options: \n"
        + "".join(  # type: ignore[attr-defined]
            f"{k}. {v}\n" for k, v in d.items()
        )
    )
    root = types.ModuleType("vlmeval")
    root.__path__ = []  # type: ignore[attr-defined]
    sys.modules.update({"vlmeval": root, "vlmeval.smp": smp, "vlmeval.smp.log": log,
                        "vlmeval.smp.vlm": vlm})  # fmt: skip

    def module(name: str, rel: str) -> types.ModuleType:
        spec = importlib.util.spec_from_file_location(name, repo / rel)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod

    match = module("vlmeval.utils.matching_util", "vlmeval/utils/matching_util.py")
    utils = types.ModuleType("vlmeval.utils")
    utils.can_infer, utils.can_infer_lego = match.can_infer, match.can_infer_lego  # type: ignore[attr-defined]
    utils.track_progress_rich = _sequential  # type: ignore[attr-defined]
    sys.modules["vlmeval.utils"] = utils
    return module(
        "vlmeval.dataset.utils.multiple_choice", "vlmeval/dataset/utils/multiple_choice.py"
    )


def _sequential(func, tasks, nproc=1, chunksize=1, save=None, keys=None):  # type: ignore[no-untyped-def]
    """``track_progress_rich`` run in this process: each call's result, saved by key."""
    results = [func(**t) for t in tasks]
    if save is not None:
        with open(save, "wb") as fh:
            pickle.dump(dict(zip(keys, results, strict=True)), fh)
    return results


def _meta(path: Path) -> pd.DataFrame:
    # ImageBaseDataset.__init__ (skip_noimg, index as text, then int when every index is).
    data = pd.read_csv(path, sep="\t")
    data = data[~pd.isna(data["image"])]
    data["index"] = [int(str(x)) for x in data["index"]]
    return data


def _mmvp(mc: types.ModuleType) -> dict[str, object]:
    # evaluate_heuristic for MMVP: mcq_vanilla_eval, the table dumped and read back (its row
    # labels 0..n-1 in index order), then report_acc_MMVP.
    meta = _meta(HERE / "mmvp" / "MMVP.tsv")
    preds = pd.read_csv(HERE / "mmvp_pred.tsv", sep="\t")
    data = meta.drop(columns=["image"]).merge(preds, on="index").sort_values(by="index")
    data["prediction"] = [str(x) for x in data["prediction"]]
    with tempfile.TemporaryDirectory() as tmp:
        scored = mc.mcq_vanilla_eval(None, data, meta, 1, str(Path(tmp) / "r.pkl"), "MMVP")
    scored = scored.reset_index(drop=True)
    acc = mc.report_acc_MMVP(scored)
    report = {c: float(acc[c][0]) for c in acc.columns}
    return {
        "dataset": "MMVP",
        "hits": {str(int(i)): int(h) for i, h in zip(scored["index"], scored["hit"], strict=True)},
        "report_acc": report,
        "figures": {"Overall": report["Overall"]},
    }


def _blink(mc: types.ModuleType, blink: Path) -> dict[str, object]:
    # VLMEvalKit reads each answer (mcq_vanilla_eval); BLINK's eval/evaluate.py scores them:
    # a prediction equal to the gold "(X)" is right, and Total is the mean over subtasks.
    meta = _meta(HERE / "blink" / "BLINK.tsv")
    preds = pd.read_csv(HERE / "blink_pred.tsv", sep="\t")
    data = meta.drop(columns=["image"]).merge(preds, on="index").sort_values(by="index")
    data["prediction"] = [str(x) for x in data["prediction"]]
    with tempfile.TemporaryDirectory() as tmp:
        scored = mc.mcq_vanilla_eval(None, data, meta, 1, str(Path(tmp) / "r.pkl"), "BLINK")
    spec = importlib.util.spec_from_file_location("blink_evaluate", blink / "eval/evaluate.py")
    assert spec is not None and spec.loader is not None
    evaluate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(evaluate)
    tasks = list(dict.fromkeys(meta["category"]))
    evaluate.subtasks = tasks  # type: ignore[attr-defined]  # its __main__ sets these globals
    answers, predictions = {}, {}
    for n, (task, gold, hit) in enumerate(
        zip(scored["category"], scored["answer"], scored["hit"], strict=True)
    ):
        idx = f"val_{task}_{n}"
        answers[idx] = f"({gold})"
        predictions[idx] = f"({gold})" if hit else "(Z)"
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            Path("val_answers.json").write_text(json.dumps(answers))
            Path("val_predictions").mkdir()
            Path("val_predictions/parity.json").write_text(json.dumps(predictions))
            accuracy = evaluate.eval_prediction("val", "parity")
        finally:
            os.chdir(cwd)
    figures = {("Overall" if k == "Total" else k): float(v) for k, v in accuracy.items()}
    return {
        "dataset": "BLINK",
        "hits": {str(int(i)): int(h) for i, h in zip(scored["index"], scored["hit"], strict=True)},
        "report_acc": {"eval_prediction": figures},
        "figures": figures,
    }


def _cvbench(mc: types.ModuleType, repo: Path) -> dict[str, object]:
    # CVBench.evaluate, per file: mcq_vanilla_eval, then CVBench.report_accuracy (2D: the mean
    # of its sources' accuracies; the method's source run as written) or report_acc (3D). The
    # card's CV-Bench accuracy is the mean of the two.
    text = (repo / "vlmeval/dataset/image_mcq.py").read_text()
    body = text[text.index("class CVBench(") :]
    body = body[body.index("    def report_accuracy(self, data):") :]
    body = body[: body.index("\nclass ")]
    scope: dict[str, object] = {
        "np": np,
        "pd": pd,
        "defaultdict": __import__("collections").defaultdict,
    }
    exec(textwrap.dedent(body), scope)
    report_accuracy = scope["report_accuracy"]
    hits, figures = {}, {}
    for kind in ("2D", "3D"):
        meta = _meta(HERE / "cv-bench" / f"CV-Bench-{kind}.tsv")
        preds = pd.read_csv(HERE / "cv-bench_pred.tsv", sep="\t")
        data = meta.drop(columns=["image"]).merge(preds, on="index").sort_values(by="index")
        data["prediction"] = [str(x) for x in data["prediction"]]
        with tempfile.TemporaryDirectory() as tmp:
            scored = mc.mcq_vanilla_eval(
                None, data, meta, 1, str(Path(tmp) / "r.pkl"), f"CV-Bench-{kind}"
            )
        scored = scored.reset_index(drop=True)
        acc = report_accuracy(None, scored) if kind == "2D" else mc.report_acc(scored)  # type: ignore[operator]
        figures[kind] = float(acc["Overall"][0])
        if kind == "2D":
            figures.update({c: float(acc[c][0]) for c in acc.columns if c in ("ADE20K", "COCO")})
        hits.update(
            {str(int(i)): int(h) for i, h in zip(scored["index"], scored["hit"], strict=True)}
        )
    figures["Omni3D"] = figures["3D"]
    figures["Overall"] = (figures["2D"] + figures["3D"]) / 2
    return {"dataset": "CV-Bench-2D + CV-Bench-3D", "hits": hits,
            "report_acc": dict(figures), "figures": figures}  # fmt: skip


def _hrbench(mc: types.ModuleType, repo: Path, name: str, dataset: str) -> dict[str, object]:
    # HRBenchDataset.evaluate: mcq_vanilla_eval, then utils/hrbench.py report_acc_hrbench.
    spec = importlib.util.spec_from_file_location(
        "hrbench", repo / "vlmeval/dataset/utils/hrbench.py"
    )
    assert spec is not None and spec.loader is not None
    hrbench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hrbench)
    meta = _meta(HERE / name / f"{dataset}.tsv")
    preds = pd.read_csv(HERE / f"{name}_pred.tsv", sep="\t")
    data = meta.drop(columns=["image"]).merge(preds, on="index").sort_values(by="index")
    data["prediction"] = [str(x) for x in data["prediction"]]
    with tempfile.TemporaryDirectory() as tmp:
        scored = mc.mcq_vanilla_eval(None, data, meta, 1, str(Path(tmp) / "r.pkl"), dataset)
    acc = hrbench.report_acc_hrbench(scored.reset_index(drop=True))
    report = {
        f"{c}/{t}": float(a)
        for c, t, a in zip(acc["cycle"], acc["type"], acc["accuracy"], strict=True)
    }
    figures = {("Overall" if t == "all" else t): v for k, v in report.items()
               for c, t in [k.split("/", 1)] if c == "Average"}  # fmt: skip
    figures.update({c: v for k, v in report.items() for c, t in [k.split("/", 1)] if t == "all" and c != "Average"})  # fmt: skip
    return {
        "dataset": dataset,
        "hits": {str(int(i)): int(h) for i, h in zip(scored["index"], scored["hit"], strict=True)},
        "report_acc": report,
        "figures": figures,
    }


def _muir_prompts(repo: Path) -> dict[str, object]:
    # MUIRDataset.build_prompt and split_MUIR, their source run as written (meta_only, so the
    # images are the row's image_path list): the messages VLMEvalKit sends for each row.
    text = (repo / "vlmeval/dataset/image_mcq.py").read_text()
    body = text[text.index("class MUIRDataset(") :]
    body = body[body.index("    @staticmethod\n    def split_MUIR") : body.index("\nclass ", 10)]
    scope: dict[str, object] = {"pd": pd, "string": __import__("string"),
                                "toliststr": lambda s: list(s)}  # fmt: skip
    exec("class MUIR:\n" + body, scope)
    muir = scope["MUIR"]()  # type: ignore[operator]
    muir.meta_only = True
    meta = pd.read_csv(HERE / "muirbench" / "MUIRBench.tsv", sep="\t")
    out = {}
    for _, line in meta.iterrows():
        images = eval(line["image"]) if str(line["image"]).startswith("[") else [line["image"]]
        line = line.copy()
        line["image_path"] = [f"image{k}" for k in range(len(images))]
        msgs = muir.build_prompt(line)
        out[str(int(line["index"]))] = [[m["type"], m["value"]] for m in msgs]
    return out


def main(repo: Path, blink: Path) -> None:
    mc = _stand_in(repo)
    expected = {}
    for name, (dataset, circular, _cn, _n) in SETS.items():
        meta = _meta(HERE / name / f"{dataset}.tsv")
        preds = pd.read_csv(HERE / f"{name}_pred.tsv", sep="\t")
        data = meta.drop(columns=["image"]).merge(preds, on="index")
        data = data.sort_values(by="index")
        data["prediction"] = [str(x) for x in data["prediction"]]
        for k in list(data.keys()):
            data[k.lower() if k not in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" else k] = data.pop(k)
        with tempfile.TemporaryDirectory() as tmp:
            result = str(Path(tmp) / "result.pkl")
            run = mc.mcq_circular_eval if circular else mc.mcq_vanilla_eval
            scored = run(None, data, meta, 1, result, dataset)
        # evaluate_heuristic: report_acc_MMT for MMT-Bench, report_acc otherwise.
        mmt = "MMT" in dataset
        acc = (mc.report_acc_MMT if mmt else mc.report_acc)(scored)
        report = {c: float(acc[c][0]) for c in acc.columns if c != "split"}
        # The figures lmmprobe gives too: every one, but MMT-Bench's meta-task figures (an
        # average of its subtasks' accuracies, not of its questions).
        compared = {k: v for k, v in report.items() if not mmt or k == "Overall"}
        if mmt:
            compared.update({c: report[c] for c in set(scored["category"])})
        expected[name] = {
            "dataset": dataset,
            "hits": {
                str(int(i)): int(h) for i, h in zip(scored["index"], scored["hit"], strict=True)
            },
            "report_acc": report,
            "figures": compared,
        }
        if mmt:
            # Each meta-task's figure (report_acc_MMT names it by its MMT_abbrs abbreviation),
            # by the l2-category it is of: lmmprobe's mmt_meta_task_accuracy per --by group.
            expected[name]["meta_tasks"] = {
                l2: report[mc.MMT_abbrs.get(l2, l2)] for l2 in sorted(set(scored["l2-category"]))
            }
        assert all(np.isfinite(v) for v in report.values())
    expected["mmvp"] = _mmvp(mc)
    expected["blink"] = _blink(mc, blink)
    expected["cv-bench"] = _cvbench(mc, repo)
    for name, dataset in (("hrbench-4k", "hr_bench_4k"), ("hrbench-8k", "hr_bench_8k")):
        expected[name] = _hrbench(mc, repo, name, dataset)
    source = "open-compass/VLMEvalKit@e8e78f05f3080fe28154f2130321f17951c3be94"
    # The judge prompt BLINK's answers get (build_prompt_blink), for blink-choice's test.
    choices = {"A": "Point A", "B": "Point B", "C": "Point C"}
    judge_prompt = {
        "question": "Which point is closer to the camera?",
        "choices": choices,
        "prediction": "Point B, I think",
        "prompt": mc.build_prompt_blink(
            "Which point is closer to the camera?",
            sys.modules["vlmeval.smp.vlm"].build_option_str(choices),
            "Point B, I think",
        ),
    }
    out = {"source": source, "benchmarks": expected, "blink_judge_prompt": judge_prompt,
           "muirbench_messages": _muir_prompts(repo)}  # fmt: skip
    (HERE / "expected.json").write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
