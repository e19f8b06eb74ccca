"""The verdicts an audit pairs: lmmprobe's scored rows, another tool's recorded ones, a stored run's.

lmmprobe's verdict on a row is the one its benchmark's official metric uses, read the same way
(`lmmprobe.metrics.builtin._official.verdicts`): where the benchmark's judge protocol decided the
row (a recorded reading such as MathVista's stored extraction or VLMEvalKit's logged option, a
live judge's, or the protocol's rules) that verdict; a row the protocol left unjudged is wrong,
read as nothing by a judge (as the official figure counts it; `_official`); otherwise
the benchmark's own rules (MMMU's reading and verdict, MathVista's rule-based reading), else the
row's own ``Score.correct``. So the lmmprobe side of an audit adds up to the figure printed.
The other tool's verdict is the one it recorded in its file (`ImportedPrediction.tool_verdict`),
with what it read (``tool_extraction``) and the gold it carried. `lmmprobe.predictions.audit`
pairs and explains them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from lmmprobe.metrics.benchmark_choice import (
    mathvista_judged_correct,
    mathvista_normalize,
    mathvista_read,
    mmmu_multi_choice,
    mmmu_open_correct,
    mmmu_parse_open,
)
from lmmprobe.metrics.benchmark_judged import mmbench_letter_correct
from lmmprobe.metrics.builtin._official import verdicts as official_verdicts
from lmmprobe.metrics.builtin.benchmark_choice import MATHVISTA_JUDGE, MMBENCH_JUDGE
from lmmprobe.metrics.builtin.benchmark_judged import MMVET, MMVET_JUDGE
from lmmprobe.predictions.answer_keys import older_gold, plain_id
from lmmprobe.predictions.audit import Audit, Verdict, audit
from lmmprobe.predictions.imported import ImportedPrediction
from lmmprobe.predictions.readers._vlmevalkit_log import CIRCULAR_GROUP_FIELD
from lmmprobe.schema import RunSpec, Score
from lmmprobe.store import Store
from lmmprobe.store.sqlite import score_from_row

__all__ = [
    "GUESSED_FIELD",
    "RANDOM_LOG",
    "audit_imported",
    "audit_runs",
    "imported_verdict",
    "run_verdicts",
    "score_verdict",
]

MMMU_METRIC = "mmmu_accuracy"
MATHVISTA_METRIC = "mathvista_accuracy"
MMBENCH_METRIC = "mmbench_circular"

GUESSED_FIELD = "official_random_letter"
"""The `ImportedPrediction.fields` key under which a replayed official script's random letter is
recorded (`lmmprobe.predictions.explain` for MMMU's): such a row's verdict rests on a guess."""

RANDOM_LOG = "randomly generate one"
"""What VLMEvalKit's ``extract_answer_from_item`` logs when it guesses after three failed judge
calls (``vlmeval/dataset/utils/multiple_choice.py``: "Failed to predict, thus randomly generate
one."): a row whose recorded log says so rests on a random option."""


def _text(score: Score) -> str:
    # What the official metrics read (`lmmprobe.metrics.builtin._official.answer_text`).
    return (score.prediction_text or "").strip()


def _gold_texts(score: Score) -> tuple[str, ...]:
    g = score.gold
    if isinstance(g, list):
        return tuple(str(x) for x in g)
    return (score.gold_text,)


def _mmmu(score: Score) -> tuple[str | None, bool, bool, tuple[str, ...]]:
    m = score.metadata
    if m.get("question_type") == "multiple-choice":
        index2ans = dict(
            zip(m.get("option_letters") or [], m.get("option_texts") or [], strict=True)
        )
        gold = _gold_texts(score)[0]
        letter = mmmu_multi_choice(_text(score), index2ans)
        return letter, letter == gold, letter is None, (gold,)
    answers = tuple(str(a) for a in (m.get("answers") or _gold_texts(score)))
    preds = mmmu_parse_open(_text(score))
    reading = ", ".join(str(p) for p in preds)
    return reading, mmmu_open_correct(list(answers), preds), False, answers


def _mathvista(score: Score) -> tuple[str | None, bool]:
    m = score.metadata
    choices = m.get("choices")
    reading = mathvista_read(
        _text(score),
        list(choices) if choices is not None else None,
        str(m.get("mathvista_question_type")),
        str(m.get("answer_type")),
        m.get("precision"),
    )
    return reading, reading is not None and reading == _gold_texts(score)[0]


def _mathvista_judged(score: Score, extraction: str) -> tuple[str | None, bool]:
    """A judged MathVista row: the extraction normalized (as `_their_reading`) and its verdict."""
    m = score.metadata
    choices = m.get("choices")
    args = (
        list(choices) if choices is not None else None,
        str(m.get("mathvista_question_type")),
        str(m.get("answer_type")),
        m.get("precision"),
    )
    right = mathvista_judged_correct(extraction, _gold_texts(score)[0], *args)
    return mathvista_normalize(extraction, *args), right


def _shown_option(score: Score, letter: str) -> str:
    """The option text a letter names as the row was shown (``Score.options`` order)."""
    options = score.options or []
    at = ord(letter) - ord("A") if len(letter) == 1 else -1
    return options[at] if 0 <= at < len(options) else letter


def score_verdict(
    score: Score, *, raw: str | None = None, judge: str | None = None
) -> Verdict | None:
    """The verdict lmmprobe gives one scored row: the one its official metric uses.

    None for a failed request or a caption. A row the benchmark's judge protocol left
    unjudged is wrong, with no reading, its judge's (see the module docstring).

    Args:
        score: The row, as `lmmprobe.run.scoring.score_response` made it.
        raw: The model's answer text when it differs from ``prediction_text`` (a choice row's
            prediction text is the option read, not the answer): sets `Verdict.raw`.
        judge: The judge whose verdicts the official figure reads (the run's first
            ``--judge``); None: the first judge on the row, as a run without a spec reads it.

    """
    if score.error_type is not None or score.stage == "error":
        return None
    metric = score.official_metric
    guessed = False
    judged = False
    if metric == MMVET:
        found = official_verdicts(score, MMVET_JUDGE, judge)
        if found == []:
            return _unjudged(score, raw, _gold_texts(score))
        grades = [j.value for j in (found or []) if j.value is not None]
        if grades:
            # MM-Vet's figure averages the judge's 0-1 grades (a recorded one included): the
            # grade is the credit, so this side adds up to the figure printed. The rule's
            # exact match stood here, and an audit blamed the gap on extraction.
            return Verdict(
                sample_id=score.sample_id,
                repeat=score.repeat,
                credit=sum(grades) / len(grades),
                raw=raw if raw is not None else score.prediction_text,
                reading=None,
                recorded=False,
                gold=_gold_texts(score),
                judged=True,
            )
    if metric == MATHVISTA_METRIC:
        found = official_verdicts(score, MATHVISTA_JUDGE, judge)
        if found == []:
            return _unjudged(score, raw, _gold_texts(score)[:1])
        if found:
            reading, ok = _mathvista_judged(score, str(found[0].reading))
            judged = found[0].decided_by == "judge"
        else:
            reading, ok = _mathvista(score)
        gold = _gold_texts(score)[:1]
    elif metric == MMMU_METRIC:
        reading, ok, guessed, gold = _mmmu(score)
    else:
        found = official_verdicts(score, MMBENCH_JUDGE, judge) if metric == MMBENCH_METRIC else None
        if found == []:
            return _unjudged(score, raw, _gold_texts(score))
        if found and found[0].reading is not None and isinstance(score.gold, int):
            # The reading names the option as shown, as `mmbench_circular` reads it.
            ok = mmbench_letter_correct(found[0].reading, score.order, score.gold)
            reading = _shown_option(score, found[0].reading)
            judged = found[0].decided_by == "judge"
        else:
            if score.correct is None:
                return None
            ok = score.correct
            read = score.prediction is not None or score.stage == "match"
            reading = score.prediction_text if read else None
        gold = _gold_texts(score)
    return Verdict(
        sample_id=score.sample_id,
        repeat=score.repeat,
        credit=1.0 if ok else 0.0,
        raw=raw if raw is not None else score.prediction_text,
        reading=reading,
        gold=gold,
        judged=judged,
        guessed=guessed,
    )


def _unjudged(score: Score, raw: str | None, gold: tuple[str, ...] | None) -> Verdict:
    """The verdict on a row its judge protocol left unjudged: wrong, its judge read nothing."""
    return Verdict(
        sample_id=score.sample_id,
        repeat=score.repeat,
        credit=0.0,
        raw=raw if raw is not None else score.prediction_text,
        reading=None,
        gold=gold,
        judged=True,
    )


def imported_verdict(pred: ImportedPrediction, *, repeat: int = 0) -> Verdict | None:
    """The other tool's own verdict on one imported row (None where it recorded none).

    The row's id is its benchmark id, else ``row N``. A recorded log saying the tool guessed
    (`RANDOM_LOG`), or a reader's ``tool_decided_by="random"``, marks it guessed.
    """
    if pred.tool_verdict is None:
        return None
    gold = pred.gold
    golds = None if gold is None else (tuple(gold) if isinstance(gold, list) else (gold,))
    drawn = GUESSED_FIELD in pred.fields
    if pred.tool_decided_by is not None:
        # The reader read the log row by row (VLMEvalKit's): a group's log on its copies
        # speaks of the other copies too, so only this row's own decision counts.
        drawn = drawn or pred.tool_decided_by == "random"
    else:
        logged = " ".join(str(v) for k, v in pred.fields.items() if "log" in str(k).lower())
        drawn = drawn or RANDOM_LOG in logged
    return Verdict(
        sample_id=pred.sample_id if pred.sample_id is not None else f"row {pred.row}",
        repeat=repeat,
        credit=float(pred.tool_verdict),
        raw=pred.prediction,
        reading=pred.tool_extraction,
        recorded=pred.tool_extraction is not None,
        gold=golds,
        judged=pred.tool_judged,
        guessed=drawn,
        row=pred.row,
        group=CIRCULAR_GROUP_FIELD in pred.fields,
        rule_version=pred.tool_rule_version,
        latest_reading=pred.tool_reading_latest,
    )


def _their_reading(
    score: Score, theirs: Verdict, names: Literal["letter", "text"] | None = None
) -> Verdict:
    """Their recorded reading put in lmmprobe's terms, so that equal readings compare equal.

    MathVista: the stored extraction normalized as its ``calculate_score.py`` does (a letter
    becomes its choice text). A file without golds whose verdict on an item fits an older
    known answer key (`lmmprobe.predictions.answer_keys`) gets that key's gold there.
    """
    metric = score.official_metric
    theirs = _letters_as_options(score, theirs, names)
    if theirs.gold is None and score.benchmark_name is not None:
        # No gold in the file: where its verdict fits an older known key's gold on an item
        # that changed (and not the local one), it was scored against that key.
        sid = plain_id(score.sample_id, score.benchmark_name)
        for _key_version, old in older_gold(score.benchmark_name, sid):
            reading = (theirs.reading or "").strip().casefold()
            right = theirs.credit == 1.0
            on_old = reading in {g.casefold() for g in old}
            on_new = reading in {g.casefold() for g in _gold_texts(score)}
            if theirs.recorded and on_old == right and on_new != right:
                theirs = _replace(theirs, gold=old)
                break
    if metric == MATHVISTA_METRIC and theirs.recorded and theirs.reading is not None:
        m = score.metadata
        choices = m.get("choices")
        normalized = mathvista_normalize(
            theirs.reading,
            list(choices) if choices is not None else None,
            str(m.get("mathvista_question_type")),
            str(m.get("answer_type")),
            m.get("precision"),
        )
        return _replace(theirs, reading=normalized)
    return theirs


def _letters_as_options(
    score: Score, theirs: Verdict, names: Literal["letter", "text"] | None = None
) -> Verdict:
    """A choice row's gold and reading recorded as option letters, as the options' texts.

    VLMEvalKit records its gold (``answer``) and reading as letters; lmmprobe's side names the
    options by their text.

    The letters are the row's own: the options in the benchmark's order (lmmprobe's shown
    order mapped back by `Score.order`); ``Z`` (no option) and anything else stay as they are.
    `names` is what the reader says the gold is (`ImportedPrediction.gold_names`): a ``text``
    gold is left as it is; where it says nothing, a gold that is one of the options' texts is
    that text, even a single letter (AI2D's option ``A``).
    """
    options = score.options
    if not options or theirs.gold is None or len(theirs.gold) != 1 or names == "text":
        return theirs
    if names is None and theirs.gold[0] in options:
        return theirs
    if score.order is not None and sorted(score.order) == list(range(len(options))):
        # Shown position i holds the benchmark's option order[i]: back to the benchmark's order.
        ordered = list(options)
        for shown, original in enumerate(score.order):
            ordered[original] = options[shown]
        options = ordered

    def text(letter: str | None) -> str | None:
        if letter is not None and len(letter) == 1 and "A" <= letter <= "Z":
            at = ord(letter) - ord("A")
            return options[at] if at < len(options) else letter
        return letter

    gold = text(theirs.gold[0])
    if gold == theirs.gold[0]:
        if names == "letter":
            # A gold the reader says is a letter but is a text (VLMEvalKit's RealWorldQA row
            # whose answer is "Uphill"): the tool still read a letter, which names an option.
            return _replace(
                theirs, reading=text(theirs.reading), latest_reading=text(theirs.latest_reading)
            )
        return theirs  # not a letter of the row's options: a gold text already
    return _replace(
        theirs,
        gold=(gold,) if gold is not None else None,
        reading=text(theirs.reading),
        latest_reading=text(theirs.latest_reading),
    )


def _replace(v: Verdict, **changes: Any) -> Verdict:
    fields = {name: getattr(v, name) for name in v.__dataclass_fields__}
    return Verdict(**(fields | changes))


def audit_imported(
    scores: Sequence[Score],
    predictions: Sequence[ImportedPrediction],
    *,
    label: str = "official",
    n_boot: int = 1000,
    seed: int = 0,
    aligned: bool = False,
) -> Audit:
    """The verdicts lmmprobe gives an imported file's rows, against the tool's own, item by item.

    Args:
        scores: lmmprobe's rows for the file's predictions (``score_imported``), one per row
            of `predictions` with the same sample id (or in the same order where the file has
            no ids).
        predictions: The file's rows.
        label: How the summary names the other tool.
        n_boot: Bootstrap resamples of the difference's interval.
        seed: Seed of the bootstrap.
        aligned: ``scores[i]`` is the score of ``predictions[i]`` (the joined rows as
            ``score`` keeps them), so each pairs by position: a row whose item lmmprobe names
            otherwise (MME's ``CATEGORY/FILE``, HallusionBench's set and figure, a POPE row's
            item in each split it lists) pairs its own item, named by the row's id, or by the
            item's where the row answers several.

    Returns:
        The audit: side A lmmprobe, side B the tool.

    """
    by_id: dict[str, Score] = {}
    for s in scores:
        # A file names the benchmark's own id; a sample loaded by name carries "NAME/id".
        by_id[s.sample_id] = s
        by_id.setdefault(plain_id(s.sample_id, s.benchmark_name), s)
    ours: list[Verdict] = []
    theirs: list[Verdict] = []
    items_of_row = Counter(p.row for p in predictions) if aligned else Counter()
    for i, pred in enumerate(predictions):
        key = _key(pred)
        score: Score | None
        if aligned:
            score = scores[i]
            if items_of_row[pred.row] > 1:
                # A row answering several items (POPE's, once per split): each by its own id.
                key = plain_id(score.sample_id, score.benchmark_name)
        elif pred.sample_id is not None:
            score = by_id.get(pred.sample_id)
        else:
            score = scores[i] if i < len(scores) else None
        mine = None if score is None else score_verdict(score, raw=pred.prediction)
        other = imported_verdict(pred)
        if other is not None and score is not None:
            other = _their_reading(score, other, pred.gold_names)
            # lmmprobe reads nothing where the official code guesses: the tool's letter is a
            # guess, unless its own (other) rules found that letter in the text, as lmms-eval's
            # MMMU parser finds "B." where MMMU's does not.
            if mine is not None and mine.guessed and not _stated(other.reading, pred.prediction):
                other = _replace(other, guessed=True)
        if mine is not None:
            # lmmprobe's verdict never rests on a guess; where the official code guesses, the
            # tool's side carries it (above).
            ours.append(_replace(mine, sample_id=key, row=pred.row, guessed=False))
        if other is not None:
            theirs.append(_replace(other, sample_id=key))
    return audit(ours, theirs, label_a="lmmprobe", label_b=label, n_boot=n_boot, seed=seed)


def _stated(letter: str | None, text: str) -> bool:
    """Whether an option letter stands in the text as a letter of its own (``B.``, ``(B)``)."""
    if letter is None or len(letter.strip()) != 1:
        return False
    return re.search(rf"(?<![A-Za-z]){re.escape(letter.strip())}(?![A-Za-z])", text) is not None


def _key(pred: ImportedPrediction) -> str:
    return pred.sample_id if pred.sample_id is not None else f"row {pred.row}"


def _official_judge(store: Store, run_id: str) -> str | None:
    """The run's first ``--judge``: whose verdicts its official figures read (`official_judge`)."""
    spec = store.get_run(run_id).get("spec")
    config = RunSpec.model_validate(spec).judge if spec else None
    return config.judges[0] if config is not None and config.judges else None


def run_verdicts(store: Store, run_id: str, model: str) -> list[Verdict]:
    """The verdicts lmmprobe gives one model's stored rows of a run (its answer text as `raw`)."""
    out: list[Verdict] = []
    judge = _official_judge(store, run_id)
    for rec in store.iter_score_rows(run_id):
        if rec["model"] != model:
            continue
        v = score_verdict(score_from_row(rec), raw=rec.get("text"), judge=judge)
        if v is not None:
            out.append(v)
    return out


def audit_runs(
    store: Store,
    sides: Iterable[tuple[str, str]],
    *,
    labels: Mapping[int, str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> Audit:
    """Two stored runs (lmmprobe's or imported) of one model on one benchmark, audited.

    Args:
        store: The store holding both runs.
        sides: (run id, model) of side A, then of side B.
        labels: How the summary names each side (default ``RUN:MODEL``).
        n_boot: Bootstrap resamples of the difference's interval.
        seed: Seed of the bootstrap.

    """
    (run_a, model_a), (run_b, model_b) = sides
    names = labels or {}
    return audit(
        run_verdicts(store, run_a, model_a),
        run_verdicts(store, run_b, model_b),
        label_a=names.get(0, f"{run_a}:{model_a}"),
        label_b=names.get(1, f"{run_b}:{model_b}"),
        n_boot=n_boot,
        seed=seed,
    )
