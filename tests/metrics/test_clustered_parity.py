"""The clustered metrics reduced over stored rows equal main's computation over Scores, exactly.

Issue 35: the official metrics with clusters (MME's image pairs, POPE, HallusionBench's question
sets, MMBench's CircularEval groups, MathVista, MMMU, MM-Vet's runs, LLaVA-Bench), instability
and CircularEval accuracy over repeats, and the judged figures are reductions over a model's
stored rows: one pass over its Scores, built one at a time and dropped, keeps a small record
per row. Each stored run here is scored two ways: main's code (`_legacy_clustered`, verbatim)
over every row as a `Score`, for the run and every ``--by`` group as `group_by` gives it; and
the new path, as `build_results` runs it (`CachedRows` and `GroupRows` over the store's rows),
with `Store.model_scores` refusing to build the list. Every value, interval end and ``n`` must
be identical.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.metrics import _legacy_clustered as legacy

from lmmprobe.metrics import group_by, reduction
from lmmprobe.metrics.builtin.benchmark_choice import _mmmu_correct
from lmmprobe.metrics.builtin.description import FREE_FORM_ROWS
from lmmprobe.metrics.builtin.dysca import DYSCA
from lmmprobe.metrics.freeform import ScoredFreeForm
from lmmprobe.metrics.reduction import CachedRows, GroupRows, summarize_rows
from lmmprobe.metrics.run_metric import MetricContext, compute_metrics
from lmmprobe.metrics.value import MetricValue
from lmmprobe.report.model import ModelStats
from lmmprobe.report.results import model_results
from lmmprobe.schema import FormulateConfig, JudgeConfig, Judgement, RunSpec, Score
from lmmprobe.store import Store

J1, J2 = "fake:judge-one", "fake:judge-two"
MODEL = "fake:m"
SKILLS = ("ocr", "math", "spatial")
MME_TASKS = ("existence", "count", "color", "code_reasoning", "numerical_calculation")

CAPTIONS = ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr", "coco_cider",
            "coco_bleu4", "coco_rouge_l")  # fmt: skip
Legacy = Callable[[MetricContext], MetricValue | None]

LEGACY: dict[str, Legacy] = {
    "instability": lambda c: (
        legacy.instability(c.scores, n_boot=c.n_boot, seed=c.seed)
        if c.summary.has_repeats
        else None
    ),
    "circular_accuracy": lambda c: (
        legacy.circular_accuracy(c.scores, n_boot=c.n_boot, seed=c.seed)
        if c.spec.formulate.circular
        else None
    ),
    "judge_score": legacy.judge_score,
    "judge_coverage": legacy.judge_coverage,
    "mme_perception": lambda c: legacy._mme(c, legacy_mme("perception")),
    "mme_cognition": lambda c: legacy._mme(c, legacy_mme("cognition")),
    "pope_f1": lambda c: legacy._pope(c, lambda k: k.f1),
    "pope_accuracy": lambda c: legacy._pope(c, lambda k: k.accuracy),
    "pope_yes_ratio": lambda c: legacy._pope(c, lambda k: k.yes_ratio),
    "hallusionbench_qacc": lambda c: legacy._hallusion(c, "qAcc"),
    "hallusionbench_facc": lambda c: legacy._hallusion(c, "fAcc"),
    "hallusionbench_aacc": lambda c: legacy._hallusion(c, "aAcc"),
    "mmbench_circular": legacy.mmbench_circular,
    "mathvista_accuracy": legacy._mathvista,
    "mmvet_score": lambda c: legacy._mmvet(c, None),
    "mmvet_ocr": lambda c: legacy._mmvet(c, "ocr"),
    "llava_wild_relative": legacy.llava_wild_relative,
    # Issue 36: the official figures count unjudged answers; these leave them out, as 8612271.
    "hallusionbench_qacc_judged_only": lambda c: legacy._hallusion(c, "qAcc", judged_only=True),
    "hallusionbench_facc_judged_only": lambda c: legacy._hallusion(c, "fAcc", judged_only=True),
    "hallusionbench_aacc_judged_only": lambda c: legacy._hallusion(c, "aAcc", judged_only=True),
    "mmbench_circular_judged_only": lambda c: legacy.mmbench_circular(c, judged_only=True),
    "mathvista_accuracy_judged_only": lambda c: legacy._mathvista(c, judged_only=True),
    "mmvet_score_judged_only": lambda c: legacy._mmvet(c, None, judged_only=True),
    "llava_wild_relative_judged_only": lambda c: legacy.llava_wild_relative(c, judged_only=True),
    "ocrbench_score": legacy.ocrbench_score,
}


def legacy_mme(kind: str) -> tuple[str, ...]:
    from lmmprobe.metrics.benchmark_choice import MME_COGNITION, MME_PERCEPTION

    return MME_PERCEPTION if kind == "perception" else MME_COGNITION


def _verdict(protocol: str, judge: str, *, attempt: int = 0, **fields: Any) -> Judgement:
    return Judgement(judge=judge, protocol=protocol, version="v", decided_by="judge", key="jk",
                     attempt=attempt, **fields)  # fmt: skip


def _unjudged(protocol: str, judge: str) -> Judgement:
    return Judgement(judge=judge, protocol=protocol, version="v", decided_by="unjudged",
                     reason="unreadable reply")  # fmt: skip


def _row(i: int, repeat: int, rng: random.Random, judged: bool) -> tuple[Score, list[Judgement]]:
    """Row `repeat` of sample `i`: one of nine shapes (eight benchmarks and a plain question)."""
    kind = i % 9
    sid = f"s{i:04d}"
    meta: dict[str, Any] = {"skills": [rng.choice(SKILLS) for _ in range(rng.randrange(0, 3))]}
    if i % 4:
        meta["level"] = [2, 10, 1.5][i % 3]
    failed = rng.random() < 0.07
    text = rng.choice(["Yes", "No", "yes.", "no", "A", "B", "I cannot tell", "x" * 80, "y" * 90])
    right = rng.random() < 0.6
    js: list[Judgement] = []
    fields: dict[str, Any] = {"gold": 0, "gold_text": "Yes", "correct": right, "stage": "mark"}
    if kind == 0:
        meta.update(benchmark="mme", metric="mme_perception", category=MME_TASKS[i % 5],
                    question_id=f"img{i // 2}")  # fmt: skip
        fields.update(gold=["Yes" if i % 2 else "No"], gold_text="Yes", correct=None, stage="match")
    elif kind == 1:
        meta.update(benchmark="pope", metric="pope_f1")
        fields.update(gold=["yes" if i % 2 else "no"], gold_text="yes", correct=None, stage="match")
    elif kind == 2:
        meta.update(benchmark="hallusionbench", metric="hallusionbench_qacc",
                    category=["VD", "VS"][i // 36 % 2], subcategory="chart", set_id=str(i // 36),
                    figure_id=str(i // 18 % 2), question_id=str(i // 9 % 2),
                    gt_answer=str(i % 2))  # fmt: skip
        fields.update(gold=["yes"], gold_text="yes", correct=None, stage="match")
        if judged and rng.random() < 0.5:
            js = [_verdict("hallusionbench-correct", J1, reading=rng.choice("012"))]
        elif judged and rng.random() < 0.2:
            js = [_unjudged("hallusionbench-correct", J1)]
    elif kind == 3:
        meta.update(benchmark="mmbench", metric="mmbench_circular", index=i,
                    circular_index=(i // 9) % 6, n_options=rng.choice([2, 2, 3, "2"]))  # fmt: skip
        fields.update(order=rng.choice([[0, 1], [1, 0]]), options=["cat", "dog"])
        if judged and rng.random() < 0.5:
            js = [_verdict("mmbench-choice", J1, reading=rng.choice(["A", "B", None]))]
        elif judged and rng.random() < 0.2:
            js = [_unjudged("mmbench-choice", J1)]
    elif kind == 4:
        meta.update(benchmark="mathvista", metric="mathvista_accuracy", choices=None,
                    mathvista_question_type="free_form", answer_type="integer",
                    precision=None)  # fmt: skip
        fields.update(gold=["14"], gold_text="14", correct=None, stage="match")
        text = rng.choice(["14", "12", "fourteen"])
        if judged and rng.random() < 0.6:
            js = [_verdict("mathvista-extract", J1, reading=rng.choice(["14", "12"])),
                  _verdict("mathvista-extract", J2, reading="14")]  # fmt: skip
        elif judged and rng.random() < 0.3:
            js = [_unjudged("mathvista-extract", J1)]
    elif kind == 5:
        meta.update(benchmark="mmmu", metric="mmmu_accuracy", question_type="multiple-choice",
                    option_letters=["A", "B"], option_texts=["cat", "dog"])  # fmt: skip
        fields.update(gold=["A"], gold_text="A", correct=None, stage="match")
    elif kind == 6:
        meta.update(benchmark="mm-vet", metric="mmvet_score",
                    capability=rng.sample(["ocr", "rec", "math"], rng.randrange(1, 3)))  # fmt: skip
        fields.update(gold=["ok"], gold_text="ok", correct=None, stage="match")
        if judged:
            js = [_verdict("mmvet-grade", J1, attempt=a, value=rng.choice([0.0, 0.5, 1.0]))
                  for a in range(rng.randrange(1, 3))]  # fmt: skip
            if rng.random() < 0.2:
                js = [_unjudged("mmvet-grade", J1)]
    elif kind == 7:
        meta.update(benchmark="llava-wild", metric="llava_wild_relative")
        fields.update(gold=["ok"], gold_text="ok", correct=None, stage="match")
        if judged:
            js = [_verdict("llava-wild-review", J1, value=float(rng.randrange(1, 11)),
                           detail={"reference": float(rng.randrange(1, 11))})]  # fmt: skip
    elif kind == 8 and i // 9 % 3 == 0:
        meta.update(
            benchmark="ocrbench", metric="ocrbench_score", dataset=["IIIT5K", "HME100k"][i % 2]
        )
        fields.update(gold=["abc", "x + 1"], gold_text="abc", correct=None, stage="match")
        text = rng.choice(["ABC", "the answer is abc", "x+1", "no"])
    elif kind == 8 and i // 9 % 3 == 1:
        meta.update(benchmark="coco", metric="coco_cider")
        fields.update(gold=["a cat on a mat", "a cat sitting"], gold_text="a cat on a mat",
                      correct=None, stage="match")  # fmt: skip
        text = rng.choice(["a cat", "a dog on a mat", "a cat sitting on a mat"])
    score = Score(
        model=MODEL, sample_id=sid, repeat=repeat, key=f"{sid}:{repeat}",
        prediction_text=text, metadata=meta, **fields,
    )  # fmt: skip
    if failed:
        score = score.model_copy(
            update={"stage": "error", "error_type": "timeout", "correct": None,
                    "prediction_text": None}
        )  # fmt: skip
    return score, js


def _store(db: Path, *, samples: int, repeats: int, judged: bool, spec: RunSpec) -> Store:
    rng = random.Random(11)
    store = Store(db)
    store.create_run("r1", spec.model_dump(mode="json"), str(db.parent / "r1"))
    scores: list[Score] = []
    verdicts: list[tuple[str, int, Judgement]] = []
    for i in range(samples):
        for repeat in range(repeats):
            score, js = _row(i, repeat, rng, judged)
            scores.append(score)
            verdicts.extend((score.sample_id, repeat, j) for j in js)
    store.put_scores("r1", scores)
    if verdicts:
        store.put_judgements("r1", MODEL, verdicts)
    return store


def _new(store: Store, spec: RunSpec) -> dict[str | None, dict[str, MetricValue]]:
    """As `model_results` computes them: the run, then each group of each ``--by`` key."""
    source = CachedRows(store.rows("r1", MODEL))
    whole, groups = summarize_rows(source, list(spec.by))
    source.summary = whole
    out = {None: compute_metrics(source, spec, summary=whole)}
    for key, by_label in groups.items():
        for label, summary in by_label.items():
            out[f"{key}={label}"] = compute_metrics(
                GroupRows(source, key, label), spec, group=f"{key}={label}", summary=summary
            )
    return out


def _old(scores: list[Score], spec: RunSpec) -> dict[str | None, dict[str, MetricValue]]:
    def figures(rows: list[Score], group: str | None) -> dict[str, MetricValue]:
        ctx = MetricContext(rows, spec, group)
        found = {name: f(ctx) for name, f in LEGACY.items()}
        rows_ = legacy.answered(ctx, "mmmu_accuracy")  # main's `per_row`
        if rows_ is not None:
            found["mmmu_accuracy"] = legacy.mean_value(
                ctx, rows_, [float(_mmmu_correct(s)) for s in rows_]
            )
        if group is None:
            found.update(legacy._captions(ctx))  # corpus metrics: the whole run's only
            found.update(legacy._coco(ctx) if legacy.answered(ctx, "coco_cider") else {})
        return {k: v for k, v in found.items() if v is not None}

    out = {None: figures(scores, None)}
    for key in spec.by:
        for label, rows in group_by(scores, key).items():
            out[f"{key}={label}"] = figures(rows, f"{key}={label}")
    return out


# The official figures given only under their benchmark's own reading (`read_officially`): the
# rows here mix benchmarks, so each is compared under its matcher, the rest under the spec's.
OWN_READING = {
    "mme": ("mme_perception", "mme_cognition"),
    "pope": ("pope_f1", "pope_accuracy", "pope_yes_ratio"),
    "hallusionbench": tuple(
        f"hallusionbench_{k}{s}" for k in ("qacc", "facc", "aacc") for s in ("", "_judged_only")
    ),
}  # (The MMBench rows here are lmms-eval's copy, ``mmbench``: no rule of its own, not gated.)


def _read_as(spec: RunSpec, matcher: str) -> RunSpec:
    """`spec` with its answers read by `matcher`."""
    return spec.model_copy(
        update={"formulate": spec.formulate.model_copy(update={"matcher": matcher})}
    )


def _new_read(store: Store, spec: RunSpec) -> dict[str | None, dict[str, MetricValue]]:
    """`_new`, each official figure of `OWN_READING` computed under its benchmark's reading."""
    out = _new(store, spec)
    gated = {n for names in OWN_READING.values() for n in names}
    for group in out.values():
        for name in gated & set(group):
            del group[name]
    for matcher, names in OWN_READING.items():
        for group, figures in _new(store, _read_as(spec, matcher)).items():
            out[group].update({k: v for k, v in figures.items() if k in names})
    return out


def _given(old: dict[str, MetricValue], new: Any) -> dict[str, MetricValue]:
    """`old` less the ``*_judged_only`` figures `new` does not give.

    Those are given only where some answer was left unjudged; elsewhere they would equal the
    official figure, which is checked here.
    """
    kept = dict(old)
    for name in [k for k in old if k.endswith("_judged_only") and k not in new]:
        assert kept.pop(name) == old[name.removesuffix("_judged_only")], name
    return kept


CASES = {
    "repeats, judged by two, by list values": dict(
        repeats=3, judged=True, circular=False, judges=[J1, J2], by=["skills", "level"]
    ),
    "circular, judged, second judge official": dict(
        repeats=2, judged=True, circular=True, judges=[J2, J1], by=["benchmark"]
    ),
    "one pass, no judge": dict(repeats=1, judged=False, circular=False, judges=[], by=["skills"]),
}


@pytest.mark.parametrize("case", CASES)
def test_clustered_metrics_over_stored_rows_equal_mains(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = CASES[case]
    spec = RunSpec(
        models=[MODEL], data="demo", bootstrap=200, seed=5, repeats=c["repeats"], by=c["by"],
        formulate=FormulateConfig(circular=c["circular"]),
        judge=JudgeConfig(judges=c["judges"]) if c["judges"] else None,
    )  # fmt: skip
    store = _store(tmp_path / "lmmprobe.db", samples=180, repeats=c["repeats"], judged=c["judged"],
                   spec=spec)  # fmt: skip
    old = _old(store.model_scores("r1", MODEL), spec)

    def refuse(*args: object) -> None:
        raise AssertionError("the reductions built every Score of the model at once")

    monkeypatch.setattr(Store, "model_scores", refuse)
    new = _new_read(store, spec)
    if not c["judged"]:
        # Read by lmmprobe's matcher, no official figure that rests on a benchmark's rule.
        gated = {n for names in OWN_READING.values() for n in names}
        assert not gated & set(_new(store, spec)[None])
    assert list(new) == list(old)
    names = [*LEGACY, "mmmu_accuracy", *CAPTIONS]
    for group, figures in old.items():
        got = {k: v for k, v in new[group].items() if k in names}
        assert got == _given(figures, got), group
    # Every shape is present, so each metric was compared on real rows.
    assert set(old[None]) >= set(names) - ({"circular_accuracy"} if not c["circular"] else set()) - (
        {"instability"} if c["repeats"] == 1 else set()
    ) - ({"judge_score", "judge_coverage", "mmvet_score", "mmvet_ocr", "llava_wild_relative",
          *(n for n in names if n.endswith("_judged_only"))}
         if not c["judged"] else set())  # fmt: skip


def test_model_results_read_the_clustered_metrics_without_the_score_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = RunSpec(models=[MODEL], data="demo", bootstrap=100, seed=1, repeats=2,
                   judge=JudgeConfig(judges=[J1]), by=["skills"])  # fmt: skip
    store = _store(tmp_path / "lmmprobe.db", samples=90, repeats=2, judged=True, spec=spec)
    old = _old(store.model_scores("r1", MODEL), spec)
    monkeypatch.setattr(Store, "model_scores", lambda *a: pytest.fail("built every Score"))
    stats = ModelStats(requests=180, cached=0, called=180, errors=0)
    gated = {n for own in OWN_READING.values() for n in own}
    # Each official figure under its benchmark's reading; the rest under the spec's.
    for matcher, names in [("lmmprobe", None), *OWN_READING.items()]:
        read = _read_as(spec, matcher)
        got = model_results(store.rows("r1", MODEL), read, identity=None, stats=stats)

        def mine(figures: dict[str, MetricValue], names: Any = names) -> dict[str, MetricValue]:
            return {k: v for k, v in figures.items() if (k in names if names else k not in gated)}

        expected = _given(mine(old[None]), got.metrics)
        assert {k: got.metrics[k] for k in expected} == expected
        for label, figures in got.breakdown["skills"].items():
            expected = _given(mine(old[f"skills={label}"]), figures)
            assert {k: figures[k] for k in expected} == expected


def _dysca_store(db: Path, spec: RunSpec) -> Store:
    """Dysca-shaped rows: question types, styles, scenarios, adversarial records, failures."""
    rng = random.Random(4)
    proxy = {"proxy": "hf:/models/proxy", "eps": 8}
    scores = []
    for i in range(400):
        meta: dict[str, Any] = {
            "question_type": ["true_false", "multiple_choice", "free_form"][i % 3],
            "style": ["oil", "anime", "photo"][i // 3 % 3],
            "scenario": ["clean", "corruption", "adversarial", "print_attack"][i // 9 % 4],
        }
        if meta["scenario"] == "adversarial":
            meta["adversarial"] = proxy if i % 2 else {"proxy": "openai:other"}
        if i % 11 == 0:
            del meta["style"]
        stage, correct, error = "mark", rng.random() < 0.6, None
        roll = rng.random()
        meta.update(benchmark="dysca", metric="dysca_average")
        text = rng.choice(["A", "(B)", "yes", "no", ""])
        gold: int | list[str] = 0
        if meta["question_type"] == "free_form":
            stage, correct = "match", None
            text = rng.choice(["a cat on a sofa", "", "a red car in the rain", "two dogs"])
            gold = [rng.choice(["a cat sleeping on a sofa", "a car", "dogs playing"])]
        elif roll < 0.08:
            stage, correct, error = "error", None, "timeout"
        elif roll < 0.15:
            stage, correct = "unparsed", False
        scores.append(Score(model=MODEL, sample_id=f"d{i:04d}", repeat=0, key=f"d{i}", stage=stage,
                            correct=correct, error_type=error, gold=gold, gold_text="yes",
                            prediction_text=text, metadata=meta))  # fmt: skip
    store = Store(db)
    store.create_run("r1", spec.model_dump(mode="json"), str(db.parent / "r1"))
    store.put_scores("r1", scores)
    return store


@pytest.mark.parametrize(("proxy", "settle_every"), [(True, None), (False, None), (False, 7)])
def test_dysca_figures_and_sensitivities_from_stored_rows_equal_mains(
    proxy: bool, settle_every: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`settle_every`: records settled that many at a time (a run of millions of rows).

    Dysca's figures embed each text on its own: identical whatever the batches. lmmprobe's
    free-form score embeds a batch's texts padded together: within float32's last bits.
    """
    from lmmprobe.report.results import rows_sensitivity, sensitivity_metrics, split_adversarial

    spec = RunSpec(models=[MODEL], data="demo", bootstrap=50,
                   formulate=FormulateConfig(matcher="dysca", method="generate"))  # fmt: skip
    store = _dysca_store(tmp_path / "lmmprobe.db", spec)
    identity = {"backend": "hf", "name": "/models/proxy"} if proxy else None
    scores = store.model_scores("r1", MODEL)
    old = sensitivity_metrics(split_adversarial(scores, identity))
    assert old.question_type is not None and old.covariate_shift_SC is not None
    assert old.scenario_deltas is not None
    assert any(k.startswith("adversarial/") for k in old.scenario_deltas) is proxy
    # Dysca's figures and the free-form scores (embedding similarities), as main computed them.
    ctx = MetricContext(scores, spec)
    figures = {
        "dysca_average": legacy.dysca_figure(ctx, "average", None),
        "dysca_multi_choice_accuracy": legacy.dysca_figure(ctx, "multi_choice_accuracy", "multiple_choice"),
        "dysca_true_or_false_accuracy": legacy.dysca_figure(ctx, "true_or_false_accuracy", "true_false"),
        "dysca_caption": legacy.dysca_figure(ctx, "caption_score", "free_form"),
        "freeform_score": legacy.freeform_metric(ctx),
        "dysca_caption_score": legacy.dysca_caption_metric(ctx),
    }  # fmt: skip
    assert all(v is not None and v.value is not None for v in figures.values())

    monkeypatch.setattr(Store, "model_scores", lambda *a: pytest.fail("built every Score"))
    if settle_every is not None:
        monkeypatch.setattr(reduction, "SETTLE_EVERY", settle_every)
    stats = ModelStats(requests=400, cached=0, called=400, errors=0)
    got = model_results(store.rows("r1", MODEL), spec, identity=identity, stats=stats)
    assert got.sensitivity == old
    if settle_every is not None:
        mine, theirs = got.metrics["freeform_score"], figures.pop("freeform_score")
        assert mine is not None and theirs is not None and mine.n == theirs.n
        for a, b in ((mine.value, theirs.value), (mine.low, theirs.low), (mine.high, theirs.high)):
            assert a == pytest.approx(b, rel=1e-6)
    assert {k: got.metrics[k] for k in figures} == figures
    # The sensitivities are counted from the columns: no Score is built for them at all.
    monkeypatch.setattr(Store, "iter_model_scores", lambda *a: pytest.fail("built a Score"))
    rows = store.rows("r1", MODEL)
    assert rows_sensitivity(rows, summarize_rows(rows)[0], identity) == old


def test_the_pass_over_stored_rows_keeps_no_free_form_text_once_settled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records are settled as the pass goes: similarities kept, texts dropped, records shared."""
    spec = RunSpec(models=[MODEL], data="demo", bootstrap=50,
                   formulate=FormulateConfig(matcher="dysca", method="generate"))  # fmt: skip
    store = _dysca_store(tmp_path / "lmmprobe.db", spec)
    monkeypatch.setattr(reduction, "SETTLE_EVERY", 7)
    cached = CachedRows(store.rows("r1", MODEL))
    free = cached.records(FREE_FORM_ROWS, spec)
    assert len(free) == 133  # every answered free-form row (a third of 400; none failed)
    assert all(isinstance(r, ScoredFreeForm) and r.row is None for r in free)
    assert {r.has_text for r in free} == {True, False}
    assert all(r.score == 0.0 for r in free if not r.has_text)
    dysca = cached.records(DYSCA, spec)
    assert all(r.free_form is None for r in dysca)
    assert sum(r.question_type == "free_form" for r in dysca) == 133
    # Rows of one type, verdict and (rounded) caption share one record within a batch.
    batches = [dysca[i : i + 7] for i in range(0, len(dysca), 7)]
    keys = sum(len({(r.question_type, r.right, r.caption) for r in b}) for b in batches)
    assert len({id(r) for r in dysca}) == keys < len(dysca)
