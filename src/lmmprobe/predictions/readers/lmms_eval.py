"""lmms-eval's ``--log_samples`` output: ``DATE_samples_TASK.jsonl`` (and ``DATE_results.json``).

Layout learnt from the real tool: lmms-eval 0.7.3 (PyPI) run on a local MMMU-shaped task
against lmmprobe's fake OpenAI server (the command is in
``tests/predictions/fixtures/lmms_eval/README.md``), and its writer code
(EvolvingLMMs-Lab/lmms-eval @ 75571cf, ``lmms_eval/evaluator.py`` and
``lmms_eval/loggers/evaluation_tracker.py``'s ``save_results_samples``). One record per
document: ``doc_id`` (its position in the split), ``target``, ``filtered_resps`` (the response
after the task's filters and reasoning-tag stripping; a single response is unwrapped from its
list), ``resps`` (the raw response, dropped when equal to the filtered one), ``input`` (the
prompt), ``token_counts``, ``doc_hash``, and the task's per-sample metric values (a number, or
a dict such as MMMU's ``{id, subdomain, question_type, answer, parsed_pred}``). The writer pops
``doc``; older logs kept it, and it is read when present.

The prediction is the raw response (``resps``, else ``filtered_resps``), read by lmmprobe as a
run reads a model's output; the filtered one and the per-sample metric ride along as the tool's
reading and verdict. The id joined to the benchmark is, in order: ``--field id=PATH`` (a dotted
path in the record), the document's ``id`` / ``pid`` / ``question_id`` / ``index`` (when ``doc``
is logged), the same keys in a per-sample metric dict (MMMU's ``mmmu_acc.id``), else ``doc_id``.

MMMU's ``mmmu_acc`` logs no verdict; it is derived as the writing version's ``evaluate_mmmu``
gives it (`mmmu_verdict`), in the `Layout` the log shows (the entry's own shape, `mmmu_layout`,
or ``mmmu_acc_pass_at_k`` beside it; else the log's first entry that tells). Where no entry tells and the two
readings part, the row gets no verdict and `UNTOLD_FIELD`, and ``score`` says so in a note.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from lmmprobe.data.base import DataError
from lmmprobe.data.rows import nesting_reason, too_deep
from lmmprobe.metrics.benchmark_choice import MMMU_MAX_GOLDS, mmmu_is_number, mmmu_open_correct
from lmmprobe.predictions._rows import (
    as_text,
    as_verdict,
    dig,
    json_safe,
    need,
    prediction_text,
    row_error,
)
from lmmprobe.predictions._stream import (
    MAX_ELEMENT,
    UnreadableFile,
    iter_jsonl,
    open_regular,
    sha256_of,
)
from lmmprobe.predictions.imported import (
    READERS,
    ImportedPrediction,
    Origin,
    ReadOptions,
    RecordedGrade,
)
from lmmprobe.predictions.readers._hallusion_sidecar import (
    HallusionSidecars,
    find_sidecars,
    log_of,
)

__all__ = [
    "RESULTS_PROBLEM",
    "UNTOLD_FIELD",
    "LmmsEvalSamples",
    "mmmu_layout",
    "mmmu_verdict",
]

_ID_FIELDS = ("id", "pid", "question_id", "index")
_LOGGED = frozenset(
    {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "token_counts",
     "doc_hash", "prompt_hash", "target_hash", "input_media", "input"}
)  # fmt: skip
_NAME = re.compile(r"^(?P<date>.*?)_?samples_(?P<task>.+)$")
_READINGS = ("parsed_pred", "extraction", "pred", "prediction")
_VERDICTS = ("true_false", "hit", "correct", "score", "acc", "exact_match")
_JUDGED = frozenset({"llm_as_judge_eval", "gpt_eval_score"})
"""Per-sample metrics whose ``extraction`` a judge model made: MathVista's
(``lmms_eval/tasks/mathvista/utils.py`` ``mathvista_process_results``: its
``MathVistaEvaluator.extract_answer``, rules first and then the GPT model of the task's
``gpt_eval_model_name``, as MathVista's own protocol)."""


_MMVET_GRADE = frozenset({"question_id", "gt_answer", "capabilities", "pred_answer", "score"})
"""MM-Vet's ``gpt_eval_score`` (``lmms_eval/tasks/mmvet/utils.py`` ``mmvet_process_results`` @
75571cf): the judge's 0-1 grade in ``score`` (0.0 where it gave none), the judge in
``eval_model``."""
_LLAVA_REVIEW = "gpt_eval_llava_all"
"""LLaVA-Bench's review of every sample (``lmms_eval/tasks/llava-in-the-wild/utils.py``
``llava_process_results``): ``scores`` [reference, model] on 1-10, ``[-1, -1]`` where the
judge's request failed or its reply held no two scores; the ``gpt_eval_llava_CATEGORY`` entries
repeat it under its category and hold ``[-999, -999]`` under the others."""
_NO_REVIEW = (-1.0, -1.0)
_NO_REVIEW_REASON = (
    "lmms-eval logged its review as [-1, -1] (the judge's request failed, or its reply held no "
    "two scores)"
)


def _grade(row: Mapping[str, Any], where: str) -> RecordedGrade | None:
    """The grade a judged task logs for the sample (MM-Vet's, LLaVA-Bench's), or None.

    Raises:
        DataError: The logged grade is not a number, or a review not two finite numbers.

    """
    mmvet = row.get("gpt_eval_score")
    if "gpt_eval_score" in row and not isinstance(mmvet, dict | int | float):
        # Neither a grade object nor a number: no reader takes it, and the row used to be
        # left out of MM-Vet's score without a word (coverage still 1.0).
        raise row_error(where, "gpt_eval_score", f"{mmvet!r:.60}: not a grade")
    if isinstance(mmvet, dict) and mmvet.keys() >= _MMVET_GRADE:
        value = as_verdict(where, "gpt_eval_score.score", mmvet["score"])
        if value is None or not 0.0 <= value <= 1.0:
            raise row_error(where, "gpt_eval_score.score", f"{mmvet['score']!r}: not a 0-1 grade")
        return RecordedGrade("mmvet-grade", value, _judge_model(mmvet))
    review = row.get(_LLAVA_REVIEW)
    if _LLAVA_REVIEW in row and not (isinstance(review, dict) and "scores" in review):
        raise row_error(where, _LLAVA_REVIEW, f"{review!r:.60}: not a review with its scores")
    if isinstance(review, dict) and "scores" in review:
        field = f"{_LLAVA_REVIEW}.scores"
        pair = review["scores"]
        if not (isinstance(pair, list) and len(pair) == 2):
            raise row_error(where, field, f"{pair!r}: not a [reference, model] pair")
        numbers = tuple(_score(where, field, x) for x in pair)
        detail = _judge_model(review) | {"reference": numbers[0]}
        if numbers == _NO_REVIEW:
            return RecordedGrade("llava-wild-review", None, detail, _NO_REVIEW_REASON)
        return RecordedGrade("llava-wild-review", numbers[1], detail)
    return None


_DOC_METRICS = (
    ("aAcc", frozenset({"model_prediction", "question", "gt_answer"}), "model_prediction"),
    ("gpt_eval_score", frozenset({"index", "question", "answer", "A", "B", "prediction"}),
     "prediction"),
)  # fmt: skip
"""Per-sample metrics that log their document whole, so that a log of any version carries it
after the writer stopped logging ``doc`` (v0.4): (metric, the keys that tell it, the key the
metric adds). HallusionBench's ``hb_process_results`` (``tasks/hallusion_bench/evaluate_hb.py``,
v0.3.0 to 75571cf: the doc less its ``image``, plus ``model_prediction``, under aAcc, fAcc and
qAcc); MMBench's ``mmbench_process_results`` (``tasks/mmbench/en_utils.py``, v0.3.0 to
75571cf: ``index``, ``question``, ``answer``, ``hint``, ``source``, ``split``, ``category``,
``L2-category`` and the options ``A``-``E``, "nan" where the doc has none, plus
``prediction``)."""


_MATHVISTA_METRICS = ("llm_as_judge_eval", "submission")
_MATHVISTA_KEYS = frozenset(
    {"question_id", "query", "choices", "answer", "question_type", "answer_type", "precision",
     "metadata", "true_false"}
)  # fmt: skip
"""MathVista's per-sample metrics (``lmms_eval/tasks/mathvista/utils.py``
``mathvista_process_results`` @ 75571cf): the doc's ``pid`` (as ``question_id``), ``query``,
``choices``, ``answer``, ``question_type``, ``answer_type``, ``precision`` and ``metadata``,
plus the reading (``extraction``, ``prediction``, ``true_false``); not its ``question``,
``unit`` or image."""
_QUESTION_MARK = "\nQuestion: "
_CHOICES_MARK = "\nChoices:\n"


def _mathvista_doc(row: Mapping[str, Any]) -> dict[str, Any] | None:
    r"""The MathVista doc its per-sample metric holds, less what it does not log, or None.

    ``question`` is derived from the dataset's ``query`` (MathVista's ``build_query.py``:
    ``Hint: ...\nQuestion: QUESTION[ (Unit: UNIT)][\nChoices:\n(A) ...]``): the text after
    the first ``\nQuestion: ``, up to the last ``\nChoices:\n`` where the doc has choices.
    A unit stays in it (the question as asked, "(Unit: cm)" included): ``unit`` is left
    empty, since 39 of testmini's 1,000 questions write "(Unit: ...)" in their own text with
    no unit, and no figure reads it.

    A ``query`` that holds no question leaves ``question`` out of the doc: scored with no
    copy, its item is refused with the field named (`lmmprobe.predictions.file_items`); with
    a copy, the copy's item is read as before.
    """
    for name in _MATHVISTA_METRICS:
        logged = row.get(name)
        if not (isinstance(logged, dict) and logged.keys() >= _MATHVISTA_KEYS):
            continue
        doc = {k: logged[k] for k in _MATHVISTA_KEYS - {"question_id", "true_false"}}
        doc |= {"pid": logged["question_id"], "unit": ""}
        query = logged["query"]
        if isinstance(query, str) and _QUESTION_MARK in query:
            question = query.partition(_QUESTION_MARK)[2]
            if logged["choices"] and _CHOICES_MARK in question:
                question = question.rpartition(_CHOICES_MARK)[0]
            doc["question"] = question
        return doc
    return None


def _metric_doc(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The document a per-sample metric logs, or None.

    HallusionBench's and MMBench's whole; MathVista's less its question (derived) and unit
    (left empty): `_mathvista_doc`.
    """
    for name, keys, added in _DOC_METRICS:
        logged = row.get(name)
        if isinstance(logged, dict) and logged.keys() >= keys:
            return {k: v for k, v in logged.items() if k != added}
    return _mathvista_doc(row)


def _score(where: str, field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 10:
        raise row_error(where, field, f"{value!r}: not a score on LLaVA-Bench's 1-10 scale")
    return float(value)


def _judge_model(logged: Mapping[str, Any]) -> dict[str, str]:
    model = logged.get("eval_model")
    return {"eval_model": model[:200]} if isinstance(model, str) else {}


_TEMPLATE_TARGETS = frozenset({"answer"})
"""The ``doc_to_target`` names whose docs lack the field in lmms-eval's tasks (textvqa, ok_vqa,
vizwiz_vqa, vqav2 name ``answer``; their docs hold ``answers``): ``ConfigurableTask.doc_to_target``
(``lmms_eval/api/task.py``, v0.3.0 to 75571cf) then applies the name as a template and logs the
name itself as the ``target``."""


def _target_is_template(target: Any, doc: dict[str, Any] | None) -> bool:
    """Whether a logged ``target`` is the template's own name, not a gold (`_TEMPLATE_TARGETS`).

    Where the doc is logged, only when it lacks that field; a log without docs (v0.4 on) says
    no more than the name, which no gold of those tasks is.
    """
    return (
        isinstance(target, str)
        and target in _TEMPLATE_TARGETS
        and (doc is None or target not in doc)
    )


def _first_text(value: Any) -> Any:
    # resps is one list per request ([[text]]); filtered_resps one value per request ([text]).
    while isinstance(value, list) and value:
        value = value[0]
    return value


def _sample_id(
    where: str, row: Mapping[str, Any], doc: Mapping[str, Any] | None, id_field: str | None
) -> str:
    """The benchmark id of a logged document (see the module docstring for the order)."""
    if id_field:
        return as_text(where, id_field, need(where, row, id_field))
    places: list[tuple[str, Mapping[str, Any]]] = [("doc", doc)] if doc is not None else []
    places += [(k, v) for k, v in row.items() if k not in _LOGGED and isinstance(v, dict)]
    for prefix, place in places:
        for name in _ID_FIELDS:
            if name in place:
                return as_text(where, f"{prefix}.{name}", place[name])
    return as_text(where, "doc_id", need(where, row, "doc_id"))


def _reading_text(reading: Any) -> str:
    # MMMU logs parsed_pred as a list per response ([["yellow"]] for an open question).
    while isinstance(reading, list) and len(reading) == 1:
        reading = reading[0]
    return json.dumps(reading) if isinstance(reading, list | dict) else str(reading)


_MMMU_KEYS = frozenset({"parsed_pred", "answer", "question_type"})
"""What lmms-eval's MMMU per-sample metric (``mmmu_acc``) logs: no verdict, its reading and gold."""

Layout = Literal["one", "per-response"]
"""How a log's ``parsed_pred`` reads (EvolvingLMMs-Lab/lmms-eval, ``lmms_eval/tasks/mmmu/utils.py``
``mmmu_process_results`` / ``evaluate_mmmu``): ``one`` parsed answer (v0.3.0 and earlier, and
``utils_group_img.py`` to this day: a choice's letter, an open question's
``parse_open_response`` list of candidates), or a list with ``per-response`` entries (309242ce,
v0.3.1, onward: a letter, or an open question's candidate list (v0.3.1-v0.3.4, PyPI 0.7.3) or
``str`` of its first candidate (736454b5, v0.3.5, to @ 75571cf))."""

UNTOLD_FIELD = "lmms_eval_layout_untold"
"""Set in a row's ``fields`` when lmms-eval's MMMU verdict is left unrecorded: the log's layout
cannot be told and the two readings of its ``parsed_pred`` give different verdicts."""

PASS_AT_K = "mmmu_acc_pass_at_k"
"""Logged beside ``mmmu_acc`` by ``mmmu_process_results`` from 309242ce (v0.3.1) on."""


def mmmu_layout(metric: Mapping[str, Any]) -> Layout | None:
    """The layout one logged MMMU entry shows, or None when its shape fits both.

    A choice's ``parsed_pred`` is a bare letter in one layout and a list in the other. An open
    question's is a list in both: a nested list is per-response (v0.3.1-v0.3.4, 0.7.3); a number
    is ``one`` (``normalize_str`` makes numbers floats and ``str(...)`` makes per-response
    entries text); a number-like text is per-response (``str(3.0)``: ``normalize_str`` would
    have made it a float). A list of other texts (``["yellow"]``) fits both.
    """
    parsed = metric.get("parsed_pred")
    if metric.get("question_type") == "multiple-choice":
        return "per-response" if isinstance(parsed, list) else "one"
    if not isinstance(parsed, list):
        return None
    for pred in parsed:
        if isinstance(pred, list) or (isinstance(pred, str) and mmmu_is_number(pred)):
            return "per-response"
        if isinstance(pred, int | float) and not isinstance(pred, bool):
            return "one"
    return None


def _mmmu_correct(metric: Mapping[str, Any], pred: Any) -> bool:
    """``eval_multi_choice`` / ``eval_open`` on one parsed answer (``pred_i``), as released.

    A choice is right when equal to the gold, or to one of a list of golds (lines 328-343 @
    75571cf); an open one by MMMU's number or containment check (`mmmu_open_correct`, lines
    346-372), iterating ``pred_i``: a list's candidates, a text's characters.
    """
    gold = metric["answer"]
    key: str | list[str] = [str(g) for g in gold] if isinstance(gold, list) else str(gold)
    if metric["question_type"] == "multiple-choice":
        return pred in key if isinstance(key, list) else bool(pred == key)
    return mmmu_open_correct(key, pred if isinstance(pred, str | list) else [pred])


def mmmu_verdict(metric: Mapping[str, Any], layout: Layout) -> float:
    """lmms-eval's own verdict on one MMMU document, from its logged ``parsed_pred``.

    lmms-eval logs MMMU's reading, not its verdict: ``mmmu_process_results`` returns
    ``{id, subdomain, question_type, answer, parsed_pred}`` and ``evaluate_mmmu`` judges it at
    aggregation. In the ``one`` layout (v0.3.0, ``lmms_eval/tasks/mmmu/utils.py`` lines 72-86
    and 247-270) ``parsed_pred`` is the one ``pred_i``; per response (@ 75571cf, lines 181-193
    and 375-398) each entry is one, right when any is. As there, a per-response open answer
    logged as a string (``str(...)`` of the first candidate) is iterated character by
    character, and the gold is the logged ``answer``.
    """
    parsed = metric["parsed_pred"]
    if layout == "one":
        return float(_mmmu_correct(metric, parsed))
    preds = parsed if isinstance(parsed, list) else [parsed]
    return float(any(_mmmu_correct(metric, pred) for pred in preds))


def _scan_layouts(path: Path) -> dict[str, Layout]:
    """The layout the first telling entry of each metric in the log shows, in one pass."""
    found: dict[str, Layout] = {}
    for _, row in iter_jsonl(path):
        if not isinstance(row, dict):
            continue
        for name, value in row.items():
            if name in found or name in _LOGGED or not isinstance(value, dict):
                continue
            told = "per-response" if PASS_AT_K in row else mmmu_layout(value)
            if told is not None:
                found[name] = told
    return found


class _LogLayout:
    """The MMMU layout of one log: told by its entries, scanned for only when a row needs it.

    The scan reads the whole log once, for every metric name at once: a log whose rows each
    name a metric of their own was read again per row (quadratic).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[str, Layout] | None = None

    def of(self, name: str) -> Layout | None:
        if self.known is None:
            self.known = _scan_layouts(self.path)
        return self.known.get(name)


def _metric(
    row: Mapping[str, Any], where: str, layout: _LogLayout
) -> tuple[str | None, float | None, str | None]:
    """The first per-sample metric: its name, verdict and (for dict metrics) the tool's reading.

    An MMMU entry's verdict is None when both layouts' readings disagree and the log cannot
    tell which it is.

    Raises:
        DataError: An MMMU entry with more than `MMMU_MAX_GOLDS` golds.

    """
    for name, value in row.items():
        if name in _LOGGED:
            continue
        if isinstance(value, bool | int | float):
            return name, as_verdict(where, name, value), None
        if isinstance(value, dict):
            reading = next((value[k] for k in _READINGS if k in value), None)
            key = next((k for k in _VERDICTS if k in value), None)
            verdict = None if key is None else value[key]
            text = None if reading is None else _reading_text(reading)
            if verdict is None and value.keys() >= _MMMU_KEYS:
                golds = value["answer"]
                if isinstance(golds, list) and len(golds) > MMMU_MAX_GOLDS:
                    raise row_error(
                        where,
                        f"{name}.answer",
                        f"{len(golds):,} golds, more than {MMMU_MAX_GOLDS} (MMMU's answers "
                        "are a few): not judged",
                    )
                one, per = mmmu_verdict(value, "one"), mmmu_verdict(value, "per-response")
                if one == per:
                    return name, one, text
                told = mmmu_layout(value) or ("per-response" if PASS_AT_K in row else None)
                told = told or layout.of(name)
                return name, None if told is None else (one if told == "one" else per), text
            # Named by the key the file holds it under (``gpt_eval_score.score``).
            return name, as_verdict(where, f"{name}.{key}", verdict), text
    return None, None, None


class LmmsEvalSamples:
    """lmms-eval's ``samples_TASK.jsonl``: one logged document per line."""

    tool = "lmms-eval"

    def sniff(self, path: Path) -> bool:
        """A ``.jsonl`` whose first record has ``doc_id`` and ``resps`` or ``filtered_resps``.

        Or an lmms-eval output folder, or one of its HallusionBench verdict files, standing
        for its one HallusionBench samples log (`log_of`).
        """
        path = log_of(path) or path
        if not path.is_file() or path.suffix.lower() != ".jsonl":
            return False
        try:
            for _, value in iter_jsonl(path):
                return (
                    isinstance(value, dict)
                    and "doc_id" in value
                    and ("resps" in value or "filtered_resps" in value)
                )
        except UnreadableFile:
            raise  # the file itself is broken: say so, not that no layout fits
        except Exception:
            return False
        return False

    def origin(self, path: Path, options: ReadOptions) -> Origin:
        """Hash, task (from the name) and, from ``DATE_results.json`` beside it, model and version."""
        path = log_of(path) or path
        detail: dict[str, str] = {"file": path.name}
        m = _NAME.match(path.stem)
        if m:
            detail["task"] = m["task"]
            results = path.with_name(f"{m['date']}_results.json") if m["date"] else None
            if results is not None and results.is_file():
                detail.update(_results_detail(results, m["task"]))
        detail.update(_sidecar_detail(path))
        return Origin(self.tool, str(path), sha256_of(path), detail)

    def read(self, path: Path, options: ReadOptions) -> Iterator[ImportedPrediction]:
        """One prediction per logged document."""
        path = log_of(path) or path
        id_field = options.field_map.get("id")
        layout = _LogLayout(path)
        sidecars: HallusionSidecars | None = None
        for n, row in iter_jsonl(path):
            where = f"{path}:{n}"
            if not isinstance(row, dict):
                raise row_error(where, "(record)", f"expected an object, got {type(row).__name__}")
            doc = row.get("doc")
            if doc is not None and not isinstance(doc, dict):
                raise row_error(where, "doc", f"expected an object, got {type(doc).__name__}")
            try:
                sid = _sample_id(where, row, doc, id_field)
            except DataError as exc:
                # No id (doc_id true, null, a list...): no item to join the answer to, so the
                # row is left out, named, and the other rows are read (as ReForm-Eval's bad
                # entries are: `ImportedPrediction.skipped`).
                yield ImportedPrediction(row=n, sample_id=None, prediction="", skipped=str(exc))
                continue
            if doc is None:
                doc = _metric_doc(row)
            if "resps" in row:
                prediction, refused = prediction_text(where, "resps", _first_text(row["resps"]))
            else:
                prediction, refused = prediction_text(
                    where, "filtered_resps", _first_text(need(where, row, "filtered_resps"))
                )
            filtered = _first_text(row.get("filtered_resps"))
            grade: RecordedGrade | None = None
            try:
                name, verdict, reading = _metric(row, where, layout)
                grade = _grade(row, where)
                if grade is None and isinstance(doc, dict) and "aAcc" in row:
                    # HallusionBench: the verdicts lie in files of their own (sidecars).
                    if sidecars is None:
                        sidecars = HallusionSidecars.read(find_sidecars(path))
                    if sidecars.records:
                        grade = sidecars.grade(doc, _judged_reply(row, filtered))
            except DataError as exc:
                # The answer is kept as an error row, named; the other rows are read.
                name, verdict, reading = None, None, None
                prediction, refused = "", refused or str(exc)
            metric = row.get(name) if name else None
            untold = verdict is None and isinstance(metric, dict) and metric.keys() >= _MMMU_KEYS
            # A judge's recorded extraction: kept as the judge's reading (no judge is called);
            # an empty or null one is a failed judge call, unjudged
            # (`lmmprobe.predictions.scoring.recorded_judgement`), never the filtered reply.
            judged = name in _JUDGED and isinstance(metric, dict) and "extraction" in metric
            if (
                not judged
                and reading is None
                and refused is None
                and isinstance(filtered, str)
                and filtered != prediction
            ):
                reading = filtered
            target = row.get("target")
            gold: str | list[str] | None
            if _target_is_template(target, doc if isinstance(doc, dict) else None):
                gold = None  # the name of a field the doc lacks: no gold is recorded
            elif isinstance(target, list):
                gold = [as_text(where, "target", t) for t in target]
            else:
                gold = None if target is None else as_text(where, "target", target)
            yield ImportedPrediction(
                row=n,
                sample_id=sid,
                prediction=prediction,
                gold=gold,
                tool_extraction=reading,
                tool_judged=judged,
                tool_verdict=verdict,
                tool_grade=grade,
                fields=json_safe(
                    {
                        "doc_id": row.get("doc_id"),
                        # A logged document (before v0.4) is its item: read where the
                        # benchmark has no copy (`lmmprobe.predictions.file_items`).
                        **({"doc": doc} if doc is not None else {}),
                        "target": target,
                        "filtered_resps": row.get("filtered_resps"),
                        **({name: row[name]} if name else {}),
                        **(
                            {_LLAVA_REVIEW: row[_LLAVA_REVIEW]}
                            if grade and name != _LLAVA_REVIEW and _LLAVA_REVIEW in row
                            else {}
                        ),
                        **({UNTOLD_FIELD: True} if untold else {}),
                    }
                ),
                refused=refused,
            )


def _judged_reply(row: Mapping[str, Any], filtered: Any) -> str:
    """The reply lmms-eval's HallusionBench judge was given.

    Its metric's ``model_prediction`` (``hb_process_results``: the filtered reply), else the
    filtered reply itself.
    """
    logged = row.get("aAcc")
    if isinstance(logged, dict) and isinstance(logged.get("model_prediction"), str):
        return str(logged["model_prediction"])
    return filtered if isinstance(filtered, str) else ""


SIDECAR_PROBLEMS = "judge_files_problems"
"""The origin's detail naming the records of lmms-eval's verdict files that were left out."""


def _sidecar_detail(path: Path) -> dict[str, str]:
    """The HallusionBench verdict files found for the log, and their bad records (named)."""
    found = find_sidecars(path)
    if not found:
        return {}
    out = {"judge_files": ", ".join(str(p) for p in found)}
    read = HallusionSidecars.read(found)
    if read.problems:
        more = read.skipped - len(read.problems)
        out[SIDECAR_PROBLEMS] = "; ".join(read.problems) + (f"; and {more} more" if more else "")
    return out


RESULTS_PROBLEM = "results_file_problem"
"""The origin's detail naming why ``DATE_results.json`` beside the log added nothing."""


def _results_doc(path: Path) -> dict[str, Any] | str:
    """``DATE_results.json`` as an object, or why it cannot be read (one sentence)."""
    try:
        with open_regular(path, path.parent) as fh:
            raw = fh.read(MAX_ELEMENT + 1)
    except UnreadableFile as exc:
        return str(exc)
    except OSError as exc:
        return f"{path}: cannot be read ({exc.strerror or exc})"
    if len(raw) > MAX_ELEMENT:
        return f"{path}: larger than {MAX_ELEMENT >> 20} MiB"
    try:
        # Bytes: json.loads detects UTF-8/16/32 and skips a byte-order mark itself.
        doc = json.loads(raw)
    except RecursionError:
        return f"{path}: {nesting_reason()}"
    except ValueError as exc:
        return f"{path}: not valid JSON ({exc})"
    if not isinstance(doc, dict):
        return f"{path}: expected a JSON object, got {type(doc).__name__}"
    deep = too_deep(doc)
    if deep is not None:
        return f"{path}: {deep}: {nesting_reason()}"
    return doc


def _results_detail(path: Path, task: str) -> dict[str, str]:
    """Model, lmms-eval version and the task's published figures from ``DATE_results.json``.

    The file only adds to the origin: one that cannot be read is named there (under
    `RESULTS_PROBLEM`), and the log is read all the same.
    """
    doc = _results_doc(path)
    if isinstance(doc, str):
        return {"results_file": path.name, RESULTS_PROBLEM: doc}
    out: dict[str, str] = {"results_file": path.name}
    for key in ("model_name", "model_source", "lmms_eval_version", "git_hash", "date"):
        if isinstance(doc.get(key), str):
            out[key] = doc[key]
    config = doc.get("config")
    if isinstance(config, dict) and "model" in config and "model_name" not in out:
        out["model_name"] = str(config["model"])
    try:
        figures = dig(doc, f"results.{task}")
    except KeyError:
        figures = None
    if isinstance(figures, dict):
        out["results"] = json.dumps(json_safe(figures), sort_keys=True)[:2000]
    return out


READERS.register("lmms-eval", "lmms-eval's --log_samples output (DATE_samples_TASK.jsonl)")(
    LmmsEvalSamples()
)
