"""A file that holds its items scores by itself: the benchmark's definition, the file's items.

A VLMEvalKit prediction table carries each item whole: ``question``, the option cells ``A``,
``B``..., the gold letter ``answer``, ``hint``, ``category`` and ``l2-category`` (the dataset
TSV's own columns: ``vlmeval/inference.py`` writes them beside ``prediction``). Scored with
``--benchmark NAME`` where no local copy of NAME is present, its items are made from those
columns, and the benchmark by name gives the rest: its official metric (`BenchmarkTag`), its
prompt (what a run asks), its breakdown keys (``category``), its judge protocol. Nothing is
downloaded. Where a copy is present, the join reads the copy's items, as before.

Which benchmarks (`FILE_ITEMS`): those a VLMEvalKit table asks as a single choice among its
option cells (MMBench's CircularEval included: its copies' ``index`` numbers their group,
``g + k * 1e6``, as the copy's own do); and MathVista, whose output records are its dataset's
rows (``pid``, ``question``, ``choices``, ``answer``, ``question_type``, ``answer_type``,
``precision``, ``unit``, ``metadata``, ``query``) with the response added: the benchmark's own
row reader reads each record, so an item is exactly what a copy's row gives, but for its image,
which the record does not hold (a one-pixel stand-in is read in its place and dropped; nothing
scores an image). And VLMEvalKit's HallusionBench tables, whose ``index`` holds the set, figure
and question numbers ``Hallusion_rating`` reads (`_hallusion_item`), and MME tables, whose
``category`` and ``image_path`` pair an image's two questions as ``MME_rating`` pairs them
(`_mme_item`). And VLMEvalKit's POPE tables, one row of which answers an item of each split
its ``category`` lists (``POPE_rating`` splits it at commas and explodes the row): one item per
split, read by POPE's row reader (`_pope_items`).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from functools import cache
from typing import Any

from PIL import Image

from lmmprobe.data.base import DataError, parse_source_spec
from lmmprobe.data.benchmarks import BENCHMARKS, Benchmark, RowContext, RowError
from lmmprobe.data.benchmarks.load import (
    fetch_hint,
    finish_sample,
    hub_cache_snapshot,
    local_copy,
)
from lmmprobe.predictions._rows import (
    MAX_PREDICTION,
    cut_length,
    literal_answers,
    pandas_missing,
)
from lmmprobe.predictions.imported import ImportedPrediction
from lmmprobe.schema import BenchmarkTag, Sample
from lmmprobe.schema.text import shown_value

__all__ = ["FILE_ITEMS", "POPE_SPLITS", "item_maker"]

LOGGED_DOCS = (
    "ai2d", "chartqa", "docvqa", "gqa", "hallusionbench", "llava-wild", "mathvista", "mmbench",
    "mme", "mmmu", "mmstar", "mmvet", "ocrbench", "okvqa", "pope", "realworldqa",
    "scienceqa-img", "textvqa", "vizwiz", "vqav2",
)  # fmt: skip
"""The benchmarks whose lmms-eval task (EvolvingLMMs-Lab/lmms-eval @ 75571cf, the yaml's
``dataset_path`` and ``test_split``) loads the hub copy and split lmmprobe loads, unfiltered
(`lmmprobe.predictions.id_schemes`), so that a logged ``doc`` is a row of lmmprobe's copy: the
benchmark's row reader reads it, less the fields lmms-eval leaves out of it (every key holding
``image``, ``lmms_eval/evaluator.py`` before v0.4: the images, and ``image_id``,
``image_source``..., which the readers take where present) and its position, ``doc_id``.
Each is tested so: a log in lmms-eval 0.3's shape built from a copy scores alone as against it
(``tests/predictions/test_lmms_eval_docs.py``); a benchmark whose doc lacked a field its reader
needs would be left out, to ask for the copy (none here does: GQA's ``imageId`` and VQAv2's
and LLaVA-Bench's ``image_id``, left out of the doc, are metadata no figure reads)."""
_DOC_IMAGES = ("image", "decoded_image", *(f"image_{n}" for n in range(1, 8)))
"""The image fields the readers read (MathVista's ``decoded_image``, MMMU's ``image_N``): a
logged doc holds none; a stand-in takes each place."""

FILE_ITEMS: dict[str, dict[str, str]] = {
    "vlmevalkit": {
        **{
            name: "choice"
            for name in ("ai2d", "mmbench", "mmstar", "realworldqa", "scienceqa-img", "seedbench")
        },
        "hallusionbench": "hallusion_index",
        "mme": "mme_image",
        "ocrbench": "ocrbench_answers",
        "pope": "pope_splits",
    },
    "mathvista": {"mathvista": "decoded_image"},
    "mmmu": {"mmmu": "mmmu_output"},
    "mapped": {name: "vqa_answers" for name in ("okvqa", "textvqa", "vizwiz", "vqav2")},
    "lmms-eval": {name: "logged_doc" for name in LOGGED_DOCS},
}
"""By reader: the benchmarks whose rows it reads hold their items whole, and how an item is
made: ``choice`` (VLMEvalKit's single-choice datasets: AI2D_TEST, MMBench_DEV_EN, MMStar,
RealWorldQA, ScienceQA_TEST, SEEDBench_IMG); ``mmmu_output`` (an MMMU ``output.json`` record:
its ``id``, ``question_type``, ``answer``, and its options from ``all_choices`` and
``index2ans``, read by MMMU's own row reader; the record holds no question, which is named in
its place); ``hallusion_index`` (a VLMEvalKit HallusionBench row: its ``category``, its
``l2-category`` as the subcategory, the set, figure and question numbers as its ``index``'s
parts 3-5, as ``Hallusion_rating`` reads them, and ``answer`` Yes/No, read by HallusionBench's
own row reader); else the benchmark's own row reader over the record, the named image field
standing in; ``pope_splits`` (a VLMEvalKit POPE row: an item of each split its ``category``
lists, named by the split and the row's ``index``); ``vqa_answers`` (a mapped row whose gold
field holds the annotators' answers: the item of the row's id with those answers, its
``question`` where the row has one, read by the benchmark's row reader: scored by the
benchmark's VQA accuracy over them)."""

POPE_SPLITS = ("adversarial", "popular", "random")
"""POPE's three splits (its ``category``; lmms-lab/POPE, VLMEvalKit's POPE table)."""

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_GROUP = 1_000_000
"""MMBench's circular copies: ``index`` = group + k * 1e6 (its published dev split's)."""
_META = ("category", "l2-category", "L2-category", "split", "source", "subject", "topic")
"""Columns kept as the item's metadata (breakdown keys), where the table has them."""

ItemMaker = Callable[[str, ImportedPrediction], list[Sample]]
"""A row's items (most rows answer one; a POPE row one per split it lists)."""


def _position(index: str) -> bool:
    """Whether a table's ``index`` is a position: ASCII digits, at most 18 of them.

    `int` refuses ``"²"`` (which `str.isdigit` accepts) and 4,300 digits or more, and reads
    ``"٣"`` as 3.
    """
    return index.isascii() and index.isdigit() and len(index) <= 18


def _copy_present(b: Benchmark, options: dict[str, str]) -> bool:
    """Whether the data spec names a copy, or one lies where a run would read it."""
    if "path" in options:
        return True
    local = local_copy(b)
    if local is not None and local.is_dir():
        return True
    return hub_cache_snapshot(b) is not None


def item_maker(benchmark: str, tool: str | None) -> ItemMaker | None:
    """How to make each row's item, when `benchmark` has no copy and `tool`'s rows hold them.

    None where a copy is present (the join reads it), or the tool's rows of this benchmark do
    not hold their items whole.
    """
    if tool is None or tool not in FILE_ITEMS:
        return None
    try:
        name, target, options = parse_source_spec(benchmark)
    except ValueError:
        return None
    if name not in FILE_ITEMS[tool] or name not in BENCHMARKS or target is not None:
        return None
    b = BENCHMARKS.get(name)
    if b.members or _copy_present(b, options):
        return None
    split = options.get("split") or b.split
    made = _maker(b, split, FILE_ITEMS[tool][name])

    def make(where: str, pred: ImportedPrediction) -> list[Sample]:
        items = made(where, pred)
        for item in items:
            _refuse_cut(item, where, pred)
        return items

    return make


def _refuse_cut(item: Sample, where: str, pred: ImportedPrediction) -> None:
    """Refuse an item made from a field the reader cut (`json_safe`: past `MAX_PREDICTION`).

    The cut text is not what the file holds: a POPE ``category`` of 300,000 splits cut at
    1 MiB made 144,963 items, none said. Whatever field the definition read it from, the cut
    shows in what it made (question, context, options, gold, metadata).

    Raises:
        DataError: The item holds a cut text (named by file, row and the item's field).

    """
    parts: dict[str, Any] = {
        "question": item.question,
        "context": item.context,
        "choices": item.choices,
        "answer": item.answer,
        **{f"metadata.{k}": v for k, v in item.metadata.items()},
    }
    for name, value in parts.items():
        texts = value if isinstance(value, list) else [value]
        for text in texts:
            n = cut_length(text) if isinstance(text, str) else None
            if n is not None:
                raise DataError(
                    f"{where}: row {pred.row}: {name}: read from a field of {n:,} characters, "
                    f"more than the {MAX_PREDICTION:,} lmmprobe reads of one; its item is not "
                    "made from a cut text (score against a copy of the benchmark)"
                )


def _maker(b: Benchmark, split: str, how: str) -> ItemMaker:
    """The item maker `FILE_ITEMS` names for `b` (`how`)."""
    if how == "logged_doc":
        return lambda where, pred: [_doc_item(b, split, where, pred)]
    if how == "vqa_answers":
        return lambda where, pred: [_vqa_item(b, split, where, pred)]
    if how == "pope_splits":
        return lambda where, pred: _pope_items(b, split, where, pred)
    if how == "mmmu_output":
        return lambda where, pred: [_mmmu_item(b, split, where, pred)]
    if how == "hallusion_index":
        return lambda where, pred: [_hallusion_item(b, split, where, pred)]
    if how == "mme_image":
        return lambda where, pred: [_mme_item(b, split, where, pred)]
    if how == "ocrbench_answers":
        return lambda where, pred: [_ocrbench_item(b, split, where, pred)]
    if how != "choice":
        return lambda where, pred: [_definition_item(b, split, how, where, pred)]
    tag = BenchmarkTag(name=b.name, split=split, metric=b.metric)
    return lambda where, pred: [_choice_item(b, tag, where, pred)]


@cache
def _stand_in() -> bytes:
    """A one-pixel PNG: the image a record does not hold, read and then dropped."""
    out = io.BytesIO()
    Image.new("RGB", (1, 1)).save(out, format="PNG")
    return out.getvalue()


def _mmmu_item(b: Benchmark, split: str, where: str, pred: ImportedPrediction) -> Sample:
    """The MMMU item an ``output.json`` record holds, read by MMMU's own row reader.

    MMMU's ``run_llava.py`` writes each item's ``id``, ``question_type``, ``answer``,
    ``all_choices`` (its letters, in order) and ``index2ans`` (letter to option text); the
    row reader gets them as the dataset's ``options`` (the texts, in letter order), and a
    question naming the item (the record holds none, and names no image).
    """
    record = pred.fields
    if "all_choices" not in record and "index2ans" not in record:
        # A parsed-answers file ({id: answer}): answers, not items.
        raise DataError(
            f"{where}: row {pred.row}: holds an answer, not its item (no all_choices, "
            f"index2ans): scoring it needs a copy of {b.name}.\n{fetch_hint(b)}"
        )
    letters = record.get("all_choices")
    texts = record.get("index2ans")
    options: list[str] = []
    if isinstance(letters, list) and isinstance(texts, dict):
        options = [str(texts.get(str(letter), "")) for letter in letters]
    answer = record.get("answer")
    row = {
        "id": record.get("id"),
        "question": f"(MMMU {record.get('id')}: its question is not in the output file)",
        "question_type": record.get("question_type"),
        "options": repr(options),
        "answer": answer if not isinstance(answer, list) else repr(answer),
    }
    return _definition_item(b, split, None, where, pred, row)


_HALLUSION_PARTS = 6
"""``Hallusion_rating`` (vlmeval/dataset/utils/yorn.py @ e8e78f0) splits ``index`` on ``_`` and
reads parts 3, 4 and 5 as the set, figure and question numbers."""


def _hallusion_item(b: Benchmark, split: str, where: str, pred: ImportedPrediction) -> Sample:
    """The HallusionBench item a VLMEvalKit row holds, read by HallusionBench's row reader.

    Raises:
        DataError: The index has not the parts ``Hallusion_rating`` reads, or the row lacks
            its category, subcategory or a Yes/No answer (named by file, row and field).

    """
    row = pred.fields
    at = f"{where}: row {pred.row}"
    parts = (pred.sample_id or "").split("_")
    if len(parts) < _HALLUSION_PARTS:
        raise DataError(
            f"{at}: index: {(pred.sample_id or '')[:60]!r} has not the parts Hallusion_rating "
            "reads (CATEGORY_SUBCATEGORY_N_SET_FIGURE_QUESTION)"
        )
    category = _cell(row.get("category"))
    sub = _cell(row.get("l2-category"))
    gold = (_cell(pred.gold) or "").strip().lower()
    for field, value in (("category", category), ("l2-category", sub)):
        if value is None:
            raise DataError(f"{at}: {field}: missing; scoring without a copy of {b.name} reads "
                            "each item from the file")  # fmt: skip
    if gold not in ("yes", "no"):
        raise DataError(f"{at}: answer: {shown_value(repr(pred.gold), 60)} is not Yes or No")
    assert category is not None and sub is not None
    given = {
        "category": category,
        # VLMEvalKit's l2-category is the subcategory, in some tables prefixed by the category.
        "subcategory": sub.removeprefix(f"{category}_"),
        "set_id": parts[3],
        "figure_id": parts[4],
        "question_id": parts[5],
        "gt_answer": "1" if gold == "yes" else "0",
        "question": _cell(row.get("question")),
    }
    return _definition_item(b, split, None, where, pred, given)


def _mme_item(b: Benchmark, split: str, where: str, pred: ImportedPrediction) -> Sample:
    """The MME item a VLMEvalKit row holds, read by MME's row reader.

    ``MME_rating`` pairs an image's two questions by ``category`` and ``image_path``; MME's own
    ``question_id`` is ``CATEGORY/FILE`` (lmms-lab/MME), made here from the same two cells.

    Raises:
        DataError: The row lacks its category, image path, question or Yes/No answer.

    """
    row = pred.fields
    at = f"{where}: row {pred.row}"
    category, image = _cell(row.get("category")), _cell(row.get("image_path"))
    for field, value in (("category", category), ("image_path", image)):
        if value is None:
            raise DataError(f"{at}: {field}: missing; scoring without a copy of {b.name} reads "
                            "each item from the file")  # fmt: skip
    assert category is not None and image is not None
    given = {
        "question_id": f"{category}/{image.replace(chr(92), '/').rsplit('/', 1)[-1]}",
        "category": category,
        "question": _cell(row.get("question")),
        "answer": _cell(pred.gold),
    }
    return _definition_item(b, split, "image", where, pred, given)


_OCRBENCH_SOURCE = "(not in the VLMEvalKit table)"
"""OCRBench's ``dataset`` (each item's source dataset, a breakdown key only): VLMEvalKit's
table does not hold it."""


def _ocrbench_item(b: Benchmark, split: str, where: str, pred: ImportedPrediction) -> Sample:
    """The OCRBench item a VLMEvalKit row holds, read by OCRBench's row reader.

    VLMEvalKit's OCRBench table holds each item's ``question``, its ``category`` (OCRBench's
    ``question_type``) and its ``answer`` as a Python list literal (``OCRBench.evaluate``
    ``eval``s it; read here as a literal only); its ``index`` is the item's position in
    OCRBench's test split, which names lmmprobe's item (``test-N``).

    Raises:
        DataError: The index is no position, the answer no list literal of texts, or the
            row lacks its question or category (named by file, row and field).

    """
    row = pred.fields
    at = f"{where}: row {pred.row}"
    index = pred.sample_id or ""
    if not _position(index):
        raise DataError(f"{at}: index: {index[:40]!r} is not the item's position in OCRBench "
                        "(VLMEvalKit numbers its items from 0)")  # fmt: skip
    category = _cell(row.get("category"))
    if category is None:
        raise DataError(f"{at}: category: missing; scoring without a copy of {b.name} reads "
                        "each item from the file")  # fmt: skip
    given = {
        "question": _cell(row.get("question")),
        "question_type": category,
        "answer": literal_answers(at, pred.gold),
        "dataset": _OCRBENCH_SOURCE,
    }
    return _definition_item(b, split, "image", where, pred, given, index=int(index))


def _doc_item(b: Benchmark, split: str, where: str, pred: ImportedPrediction) -> Sample:
    """The item of a document an lmms-eval log carries (``doc``), read by the row reader.

    lmms-eval logged each document (``doc``) until v0.4 (``save_results_samples`` pops it
    since 2025-07-30): its row of the split, less its images; ``doc_id`` is its position.

    Raises:
        DataError: The record carries no doc (a later lmms-eval's log: the copy is needed),
            or the doc lacks a field the row reader needs (named by file, row and field).

    """
    doc = pred.fields.get("doc")
    position = pred.fields.get("doc_id")
    if not isinstance(doc, dict):
        raise DataError(
            f"{where}: row {pred.row}: doc: not logged (lmms-eval logs its documents only "
            f"before v0.4): scoring it needs a copy of {b.name}.\n{fetch_hint(b)}"
        )
    index = position if isinstance(position, int) and not isinstance(position, bool) else None
    return _definition_item(b, split, _DOC_IMAGES, where, pred, dict(doc), index=index)


def _vqa_item(b: Benchmark, split: str, where: str, pred: ImportedPrediction) -> Sample:
    """The VQA item a mapped row holds, read by the benchmark's row reader.

    The row gives its id, its annotators' answers (its gold field) and its ``question`` where
    it has one.

    A VQA accuracy counts the annotators who gave the answer (``min(n / 3, 1)``, averaged over
    their subsets): one gold answer is not the item, and is refused rather than scored as if
    one annotator had given it.

    Raises:
        DataError: The row has no id, or its gold is not a list of answers (named by file,
            row and field).

    """
    at = f"{where}: row {pred.row}"
    if pred.sample_id is None:
        raise DataError(f"{at}: id: missing; each item needs its id (map it with --field id=...)")
    gold = pred.gold
    if not isinstance(gold, list):
        raise DataError(
            f"{at}: gold: {str(gold)[:60]!r} is one answer; {b.name}'s VQA accuracy reads the "
            "annotators' answers (a list, ten in the release): map the field that holds them, "
            f"or score against a copy of {b.name}"
        )
    question = pred.fields.get("question")
    if not isinstance(question, str) or not question.strip():
        question = f"({b.name} {pred.sample_id}: its question is not in the file)"
    given = dict(pred.fields)
    given.update(
        question_id=pred.sample_id,
        question=question,
        # VQAv2's rows hold {answer, answer_id, ...} records; the others the texts.
        answers=[{"answer": a} for a in gold] if b.name == "vqav2" else list(gold),
    )
    return _definition_item(b, split, "image", where, pred, given)


def _pope_items(b: Benchmark, split: str, where: str, pred: ImportedPrediction) -> list[Sample]:
    """The POPE items a VLMEvalKit row answers: one per split its ``category`` lists.

    ``POPE_rating`` (vlmeval/dataset/utils/yorn.py @ e8e78f0) splits ``category`` at commas
    and explodes the row, so a question the splits share counts once in each. POPE's own
    ``question_id`` is not in the table (its ``index`` numbers the table's rows): an item is
    named by its split and that index (``pope/adversarial-vlmevalkit-0``), its image by the
    stem of ``image_path`` where the table has one.

    Raises:
        DataError: The row lacks its category or question, or its answer is not Yes or No
            (named by file, row and field).

    """
    row = pred.fields
    at = f"{where}: row {pred.row}"
    listed = _cell(row.get("category"))
    splits = [] if listed is None else [s.strip() for s in listed.split(",") if s.strip()]
    if not splits:
        raise DataError(f"{at}: category: missing; scoring without a copy of {b.name} reads "
                        "each item's split from the file")  # fmt: skip
    unknown = next((s for s in splits if s not in POPE_SPLITS), None)
    if unknown is not None:
        # A row answers an item of a split POPE has: a category of 300,000 names made as many
        # items from one row.
        raise DataError(f"{at}: category: {unknown[:40]!r} is not one of POPE's splits "
                        f"({', '.join(POPE_SPLITS)})")  # fmt: skip
    if len(set(splits)) < len(splits):
        raise DataError(f"{at}: category: {(listed or '')[:80]!r} lists a split twice (POPE_rating "
                        "would count the answer twice in it)")  # fmt: skip
    image = _cell(row.get("image_path"))
    stem = None
    if image is not None:
        base = image.replace(chr(92), "/").rsplit("/", 1)[-1]
        stem = base.rsplit(".", 1)[0] if "." in base else base
    index = pred.sample_id or f"row-{pred.row}"
    items = []
    for each in splits:
        given = {
            "question_id": f"vlmevalkit-{index}",
            "category": each,
            "question": _cell(row.get("question")),
            "answer": _cell(pred.gold),
            "image_source": stem,
        }
        items.append(_definition_item(b, split, "image", where, pred, given))
    return items


def _definition_item(
    b: Benchmark,
    split: str,
    image: str | tuple[str, ...] | None,
    where: str,
    pred: ImportedPrediction,
    row: dict[str, Any] | None = None,
    *,
    index: int | None = None,
) -> Sample:
    """The item the benchmark's own row reader makes of a record that is its dataset's row.

    Raises:
        DataError: The record lacks a field the reader needs, or holds a bad value (named by
            file, row and field, in the reader's words).

    """
    at = f"{where}: row {pred.row}"
    # The item's position in the split: the record's own where it says (lmms-eval's doc_id),
    # else its place in the file.
    ctx = RowContext(
        benchmark=b, split=split, root=None, where=at,
        index=pred.row - 1 if index is None else index,
    )  # fmt: skip
    try:
        given = dict(pred.fields if row is None else row)
        for field in (image,) if isinstance(image, str) else image or ():
            given[field] = _stand_in()
        made = b.to_sample(given, ctx)
    except RowError as exc:
        raise DataError(f"{at}: {exc.field or '(row)'}: {exc.reason}") from None
    except KeyError as exc:
        raise DataError(
            f"{at}: {exc.args[0] if exc.args else '(row)'}: missing; scoring without a copy of "
            f"{b.name} reads each item from the file"
        ) from None
    if not isinstance(made, Sample):
        raise DataError(f"{at}: the record makes no single {b.name} item")
    return finish_sample(b, made.model_copy(update={"images": []}), split)


def _cell(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = str(value)
    return text if text.strip() and text.strip() != "nan" else None


def _stand_in_option(letter: str) -> str:
    """The option text of a letter whose cell is empty, though the item has that option."""
    return f"(option {letter}: its cell is empty in the file)"


def _choice_item(b: Benchmark, tag: BenchmarkTag, where: str, pred: ImportedPrediction) -> Sample:
    """The single-choice item a VLMEvalKit row holds (its question, option cells, gold letter).

    VLMEvalKit builds a row's options from its filled cells only (``build_choices`` and
    ``build_prompt``: ``not pd.isna(line[cand])``), after reading its dataset TSV with pandas'
    defaults, which make an option text such as "None" or "NA" a missing value: such an option
    was never shown nor matched, and its table holds the cell empty (`pandas_missing`). The
    item keeps every letter up to the last option a cell or the gold letter names (a column of
    the table's header), each in its place (the letters the model saw are the table's): an
    empty cell among them stands in for an option the file lost (`_stand_in_option`), one
    holding a missing-value text keeps that text, and both are listed in
    ``metadata["unshown_options"]``. A gold that is no letter but the text of
    one of the row's options (RealWorldQA's "Uphill") names that option (VLMEvalKit compares it
    with a letter and never counts it right; ``--as-published`` replays that).

    Raises:
        DataError: The row lacks its question, has fewer than two options, or a gold that is
            neither the letter of one of the table's option columns nor the text of one of its
            options (named by file, row, field).

    """
    row = pred.fields
    at = f"{where}: row {pred.row}"
    question = _cell(row.get("question"))
    if question is None:
        raise DataError(f"{at}: question: missing; scoring without a copy of {b.name} reads "
                        "each item from the file")  # fmt: skip
    # The table's option columns (A, B, ... as its header has them), filled or not.
    letters = next((i for i, letter in enumerate(_LETTERS) if letter not in row), len(_LETTERS))
    raw = [row.get(letter) for letter in _LETTERS[:letters]]
    cells = [_cell(value) for value in raw]
    filled = [i for i, c in enumerate(cells) if c is not None]
    gold = (_cell(pred.gold) or "").strip()
    named = [i for i in filled if cells[i] == gold and not pandas_missing(raw[i])]
    if len(gold) == 1 and gold in _LETTERS[:letters]:
        answer = _LETTERS.index(gold)
    elif len(gold) != 1 and len(named) == 1:
        answer = named[0]
    else:
        # Cut: a cell of a megabyte was echoed whole (a 1 MB error line; re-test 17).
        raise DataError(f"{at}: answer: {shown_value(repr(pred.gold), 60)} is not one of the row's option letters "
                        f"{_LETTERS[:letters]} (nor the text of one option)")  # fmt: skip
    count = max([*filled, answer]) + 1 if filled else 0
    if count < 2:
        raise DataError(f"{at}: options: expected at least the cells A and B, got "
                        f"{[_LETTERS[i] for i in filled]}")  # fmt: skip
    choices = [
        cells[i] if cells[i] is not None else _stand_in_option(_LETTERS[i]) for i in range(count)
    ]
    metadata: dict[str, Any] = {k: _cell(row.get(k)) for k in _META if _cell(row.get(k))}
    unshown = [_LETTERS[i] for i in range(count) if pandas_missing(raw[i])]
    if unshown:
        metadata["unshown_options"] = unshown
    # The model saw the table's letters: they are kept as published, never shuffled.
    metadata["fixed_options"] = True
    index = pred.sample_id or f"row-{pred.row}"
    if b.circular and _position(index):
        metadata.update(
            index=int(index), circular_index=int(index) % _GROUP, n_options=len(choices)
        )
    return Sample(
        id=f"{b.name}/{index}",
        question=question,
        choices=choices,
        answer=answer,
        formulation="single_choice",
        context=_cell(row.get("hint")),
        metadata=metadata,
        prompt=b.prompt,
        benchmark=tag,
    )
