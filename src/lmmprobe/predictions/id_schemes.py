"""How another tool's row ids become lmmprobe's sample ids, per benchmark: data, in one place.

lmmprobe names a benchmark's items as the benchmark's own release does where it has an id
(``mmvet/v1_0``, ``textvqa/34602``), and by their position in the split where it has none
(``ai2d/17``, ``chartqa/test-17``). The other tools number them their own way: lmms-eval's
``doc_id`` is the document's position in the split its task loads; VLMEvalKit's ``index`` is
whatever its dataset TSV holds (the dataset's own id, a number its authors made up, or a string
built from several fields). `SCHEMES` says, for each (tool, benchmark) where the tool's id is
not lmmprobe's, how a row finds its item; the join (`lmmprobe.predictions.scoring`) reads it.
Where no scheme is given, the row's id is joined as it is (the tool's id is lmmprobe's).

A scheme is one of three kinds, each a template over the row's fields (and for ``key`` over
the sample's):

- ``id``: the template gives lmmprobe's id (after the benchmark's ``NAME/`` prefix).
- ``position``: the template gives the item's position in the split (0 for the first), which
  the local copy holds in the same order when it was loaded from the same split (checked: a
  copy of another split, or one whose loader skipped rows, is refused in one line).
- ``key``: the template gives a key made of the row's content (its question, options, gold,
  category); the same key made from each sample of the local copy (``sample``) names the
  item. A key that names no item, or more than one, is named (file, row, id), never guessed.

``each``: a row field holding a comma-separated list; the row answers one item per element
(VLMEvalKit's POPE keeps one row for a question its three splits share), ``{each}`` being the
element.

Templates: ``{field}`` (a dotted path reaches inside objects: ``doc.question_id``) with filters
after ``|`` (``{hint?}``: an optional field, empty where the row has none): ``lower``; ``text`` (case-folded, whitespace collapsed: two tools' copies of one
text compare equal); ``basename`` (after the last ``/``); ``stem`` (the basename without its
extension); ``partN`` (the N-th ``_``-separated part, from 0). On a row, ``{id}`` is the id the
reader found and ``{options}`` the row's option cells ``A``, ``B``... joined; on a sample,
``{id}`` is its id after the prefix, ``{question}``, ``{context}``, ``{options}`` (its choices
joined the same way), ``{gold}`` (the correct choice's text, or the first reference answer),
``{gold_letter}`` (the correct choice's letter) and ``{meta.NAME}`` (its metadata).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from lmmprobe.predictions._rows import dig
from lmmprobe.schema import Sample

__all__ = [
    "SCHEMES",
    "IdScheme",
    "MissingField",
    "row_values",
    "sample_key",
    "scheme_for",
]

Kind = Literal["id", "position", "key"]

OPTION_JOIN = " || "
"""What joins a row's (or a sample's) option texts in ``{options}``."""

_FIELD = re.compile(r"\{([^{}|]+)((?:\|[a-z0-9]+)*)\}")
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class IdScheme:
    """How one tool's rows of one benchmark find their items (module docstring)."""

    kind: Kind
    row: str
    """Template over the row: lmmprobe's id (``id``), the position (``position``), the key."""
    source: str
    """Where the tool states its ids (file and commit): the evidence for the scheme."""
    sample: str = ""
    """Template over a sample of the local copy (``key`` only)."""
    each: str | None = None
    """A row field of comma-separated values: the row answers one item per value."""
    split: str | None = None
    """The split the tool's ids count positions in (a copy of another split is refused)."""


class MissingField(KeyError):
    """A template names a field the row (or sample) lacks, or holds empty."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field


_LMMS = "EvolvingLMMs-Lab/lmms-eval @ 75571cf"
_VLM = "open-compass/VLMEvalKit @ e8e78f0"

_DOC_ID = "lmms-eval's doc_id is the document's position in the task's test_split ({task})"


def _lmms(task: str, split: str, template: str | None) -> IdScheme:
    return IdScheme(
        kind="position" if template is None else "id",
        row="{doc_id}" if template is None else template,
        split=split,
        source=f"{_DOC_ID.format(task=f'lmms_eval/tasks/{task}')} ({_LMMS})",
    )


SCHEMES: dict[tuple[str, str], IdScheme] = {
    # lmms-eval: every task below loads the split lmmprobe loads, from the same hub copy (or
    # its lmms-lab-encoder twin), without filtering (gqa's process_docs only adds the images):
    # its doc_id is the position there. Logs since v0.4 drop the doc, so the position is all
    # a log says of its item. Where lmmprobe's id is itself the position (a copy without ids),
    # the id is made from it (exact even where lmmprobe skips a row, as ScienceQA-IMG's rows
    # without an image); elsewhere the position names the item of the local copy.
    # SEED-Bench is not here: lmms-eval counts its video questions, which lmmprobe does not
    # ask, so a doc_id is no position of lmmprobe's copy; its metric's question_id joins.
    **{
        ("lmms-eval", name): _lmms(task, split, template)
        for name, task, split, template in (
            ("ai2d", "ai2d/ai2d.yaml", "test", "{doc_id}"),
            ("chartqa", "chartqa/chartqa.yaml", "test", "test-{doc_id}"),
            ("docvqa", "docvqa/docvqa_val.yaml", "validation", None),
            ("gqa", "gqa/gqa.yaml", "testdev", None),
            ("hallusionbench", "hallusion_bench/hallusion_bench_image.yaml", "image", None),
            ("llava-wild", "llava-in-the-wild/llava-in-the-wild.yaml", "train", None),
            ("mathvista", "mathvista/mathvista_testmini_format.yaml", "testmini", None),
            ("mmbench", "mmbench/mmbench_en_dev.yaml", "dev", None),
            ("mme", "mme/mme.yaml", "test", None),
            ("mmmu", "mmmu/mmmu_val.yaml", "validation", None),
            ("mmstar", "mmstar/_default_template_yaml", "val", None),
            ("mmvet", "mmvet/mmvet.yaml", "test", None),
            ("ocrbench", "ocrbench/ocrbench.yaml", "test", "test-{doc_id}"),
            ("okvqa", "ok_vqa/ok_vqa_val2014.yaml", "val2014", None),
            ("pope", "pope/pope.yaml", "test", None),
            ("realworldqa", "realworldqa/realworldqa.yaml", "test", "{doc_id}"),
            ("scienceqa-img", "scienceqa/scienceqa_img.yaml", "test", "test-{doc_id}"),
            ("textvqa", "textvqa/textvqa_val.yaml", "validation", None),
            ("vizwiz", "vizwiz_vqa/vizwiz_vqa_val.yaml", "val", None),
            ("vqav2", "vqav2/vqav2_val.yaml", "validation", None),
        )
    },
    # VLMEvalKit: its ``index`` is the TSV's own column.
    ("vlmevalkit", "hallusionbench"): IdScheme(
        kind="id",
        # Hallusion_rating reads set_id, figure_id and question_id as the index's parts 3-5;
        # l2-category is category_subcategory (VD_ocr), as its score table's splits show.
        row="{l2-category}_{index|part3}_{index|part4}_{index|part5}",
        source=f"vlmeval/dataset/utils/yorn.py Hallusion_rating ({_VLM})",
    ),
    ("vlmevalkit", "ai2d"): IdScheme(
        kind="key",
        # AI2D_TEST.tsv's index is image number * 100 + question number (AI2D's questionId
        # "12.png-3" is 1203); lmms-lab/ai2d keeps no id: the question and options name it.
        row="{question|text}/{options|text}/{answer}",
        sample="{question|text}/{options|text}/{gold_letter}",
        source=f"scripts/AI2D_preproc.ipynb ({_VLM})",
    ),
    ("vlmevalkit", "mme"): IdScheme(
        kind="key",
        # MME asks two questions of each image, one answered yes and one no; MME_rating
        # groups them by category and image_path. lmms-lab/MME's question_id is the image's
        # CATEGORY/FILE.
        row="{category}/{image_path|basename}/{answer|lower}",
        sample="{meta.category}/{meta.question_id|basename}/{gold|lower}",
        source=f"vlmeval/dataset/utils/yorn.py MME_rating ({_VLM})",
    ),
    ("vlmevalkit", "pope"): IdScheme(
        kind="key",
        # POPE.tsv keeps one row for a question its splits share, with category
        # "adversarial,popular,random" (POPE_rating splits and explodes it); its index
        # numbers its own rows. An item is its split, image and question.
        row="{each}/{image_path|stem}/{question|text}",
        sample="{meta.category}/{meta.image_source}/{question|text}",
        each="category",
        source=f"vlmeval/dataset/utils/yorn.py POPE_rating ({_VLM})",
    ),
    ("vlmevalkit", "mmvet"): IdScheme(
        kind="key",
        # MMVet.tsv numbers its rows from 0; MM-Vet's ids are v1_N. The question and its
        # reference answer name the item without relying on the two orders agreeing.
        row="{question|text}/{answer|text}",
        sample="{question|text}/{gold|text}",
        source=f"vlmeval/dataset/image_vqa.py MMVet ({_VLM})",
    ),
    ("vlmevalkit", "scienceqa-img"): IdScheme(
        kind="key",
        # ScienceQA_TEST.tsv numbers its rows; lmms-lab/ScienceQA keeps no id (lmmprobe names
        # an item by its position): the hint, question and options name it.
        row="{hint?|text}/{question|text}/{options|text}/{answer}",
        sample="{context?|text}/{question|text}/{options|text}/{gold_letter}",
        source=f"vlmeval/dataset/image_mcq.py ScienceQA_TEST ({_VLM})",
    ),
}
"""The schemes by (tool, benchmark name); a pair not here joins the row's id as it is."""


def scheme_for(tool: str | None, benchmark: str | None) -> IdScheme | None:
    """The scheme of `tool`'s rows of `benchmark`, or None (the id joins as it is)."""
    if tool is None or benchmark is None:
        return None
    return SCHEMES.get((tool, benchmark))


def _text(value: Any) -> str | None:
    """A cell as text: None for an empty cell (None, NaN, blank); 5.0 as ``5``."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, bool):
        return str(value)
    text = str(value)
    return text if text.strip() else None


def _filter(value: str, name: str) -> str:
    if name == "lower":
        return value.lower()
    if name == "text":
        return " ".join(value.casefold().split())
    if name == "basename":
        return value.replace("\\", "/").rsplit("/", 1)[-1]
    if name == "stem":
        base = value.replace("\\", "/").rsplit("/", 1)[-1]
        return base.rsplit(".", 1)[0] if "." in base else base
    if name.startswith("part") and name[4:].isdigit():
        parts = value.split("_")
        n = int(name[4:])
        if n >= len(parts):
            raise ValueError(f"has no part {n} ({value!r} has {len(parts)} parts split at '_')")
        return parts[n]
    raise AssertionError(f"unknown template filter {name!r}")  # the table is ours


def _fill(template: str, lookup: Mapping[str, Any] | Any, get: Any) -> str:
    """`template` filled from `get(lookup, field)`; `MissingField` for an absent field."""

    def one(match: re.Match[str]) -> str:
        field, filters = match[1], [f for f in match[2].split("|") if f]
        optional = field.endswith("?")
        field = field.removesuffix("?")
        value = _text(get(lookup, field))
        if value is None:
            if optional:
                return ""
            raise MissingField(field)
        for name in filters:
            try:
                value = _filter(value, name)
            except ValueError as exc:
                raise MissingField(f"{field} ({exc})") from None
        return value

    return _FIELD.sub(one, template)


def _row_field(row: Mapping[str, Any], field: str) -> Any:
    if field == "options":
        cells = [_text(row.get(letter)) for letter in _LETTERS]
        present = [c for c in cells if c is not None]
        return OPTION_JOIN.join(present) if present else None
    try:
        return dig(row, field)
    except KeyError:
        return None


def row_values(scheme: IdScheme, row_id: str | None, fields: Mapping[str, Any]) -> Iterator[str]:
    """What `scheme` makes of a row (its id, position or key): one per ``each`` element.

    Raises:
        MissingField: The row lacks (or holds empty) a field the scheme reads.

    """
    row = dict(fields)
    if row_id is not None:
        row["id"] = row_id
    if scheme.each is None:
        yield _fill(scheme.row, row, _row_field)
        return
    listed = _text(_row_field(row, scheme.each))
    if listed is None:
        raise MissingField(scheme.each)
    for element in (e.strip() for e in listed.split(",")):
        if element:
            yield _fill(scheme.row, row | {"each": element}, _row_field)


def _sample_field(sample: Sample, field: str) -> Any:
    choices = sample.choices or []
    if field == "id":
        return sample.id.partition("/")[2] or sample.id
    if field in ("question", "context"):
        return getattr(sample, field)
    if field == "options":
        return OPTION_JOIN.join(choices) if choices else None
    if field == "gold":
        if isinstance(sample.answer, int):
            return choices[sample.answer] if 0 <= sample.answer < len(choices) else None
        return sample.answer[0] if sample.answer else None
    if field == "gold_letter":
        ok = isinstance(sample.answer, int) and 0 <= sample.answer < len(_LETTERS)
        return _LETTERS[sample.answer] if ok else None  # type: ignore[index]
    if field.startswith("meta."):
        try:
            return dig(sample.metadata, field.removeprefix("meta."))
        except KeyError:
            return None
    raise AssertionError(f"unknown sample field {field!r}")  # the table is ours


def sample_key(scheme: IdScheme, sample: Sample) -> str | None:
    """The key `scheme` makes of a sample of the local copy (None where it lacks a field)."""
    try:
        return _fill(scheme.sample, sample, _sample_field)
    except MissingField:
        return None
