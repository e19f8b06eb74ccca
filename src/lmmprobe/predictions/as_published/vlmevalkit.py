"""VLMEvalKit's figures from its own recorded verdicts, aggregated as VLMEvalKit aggregates them.

open-compass/VLMEvalKit @ e8e78f0 (``vlmeval/dataset/utils/yorn.py`` unchanged in what it
computes since 551c662, 2025-07-20; ``report_acc`` in ``vlmeval/dataset/utils/multiple_choice.py``):

- **Choice benchmarks** (a ``MODEL_DATASET_JUDGE_result`` table with ``hit``: ``_openai_result``,
  ``_exact_matching_result``, their ``_vanilla_`` forms): ``report_acc``, the mean ``hit`` per
  ``split`` (``none`` when the table has none), overall and per ``l2-category`` and
  ``category`` value (sorted, MMBench's six abilities under their abbreviations: ``CP``...). A
  CircularEval result table holds each group's first row with the group's ``hit``, so its
  ``report_acc`` is VLMEvalKit's CircularEval figure.
- **Yes/no benchmarks** (the ``MODEL_DATASET_auxmatch`` table: ``extracted``, the Yes/No/Unknown
  VLMEvalKit read, and ``score``, ``answer == extracted``; a table without ``score`` gets it so,
  as ``ImageYORNDataset.evaluate`` recomputes it): ``Hallusion_rating`` (aAcc, fAcc over each
  figure's questions, qAcc over each question's figures; per ``category`` and ``l2-category``),
  ``POPE_rating`` (F1, accuracy, precision and recall; ``category`` split at commas and each
  item counted once per category, in the overall figure too) and ``MME_rating`` (per category
  the accuracy plus the accuracy+ over each image's two questions; perception and reasoning
  (cognition) as their categories' sums).

- **OCRBench** (the ``MODEL_OCRBench`` prediction table: OCRBench records no verdict, its
  ``evaluate`` reads the predictions): ``_score.json``'s found answers per category and its
  Final Score (`ocrbench_score`).
- **MM-Vet** (the ``MODEL_MMVet_JUDGE`` table, ``score`` the judge's grade): ``MMVet_acc``'s
  two tables (`mmvet_acc`).

Which rating applies is told as VLMEvalKit tells it, by the dataset's name: ``MME``, then
``Hallusion``, then ``POPE`` found in it (``listinstr``); here the name is the lmmprobe
benchmark, or, without one, the file's ``MODEL_DATASET`` stem. Each figure is a float as
VLMEvalKit's ``_score.csv`` / ``_acc.csv`` writes it (its shortest repr); a table is laid out
as ``run.py`` prints it, turned when it has fewer rows than columns.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.predictions._rows import as_text, as_verdict, literal_answers, need, row_error
from lmmprobe.predictions._stream import iter_table
from lmmprobe.predictions.as_published.base import (
    PUBLISHED_FIGURES,
    Cell,
    Published,
    PublishedSource,
    PublishedTable,
)

__all__ = [
    "MMB_ABBREVIATIONS",
    "MMVET_CAPABILITIES",
    "OCRBENCH_CATEGORIES",
    "hallusion_rating",
    "mme_rating",
    "mmvet_acc",
    "ocrbench_score",
    "pope_rating",
    "report_acc",
]

_SOURCE = "open-compass/VLMEvalKit @ e8e78f0"
_TABLES = (".xlsx", ".tsv", ".csv")

MMB_ABBREVIATIONS = {
    "coarse_perception": "CP",
    "finegrained_perception (instance-level)": "FP-S",
    "finegrained_perception (cross-instance)": "FP-C",
    "logic_reasoning": "LR",
    "relation_reasoning": "RR",
    "attribute_reasoning": "AR",
}
"""``MMB_abbrs``: the names ``report_acc`` gives MMBench's abilities."""

MME_PERCEPTION = (
    "OCR", "artwork", "celebrity", "color", "count", "existence", "landmark", "position",
    "posters", "scene",
)  # fmt: skip
MME_REASONING = (
    "code_reasoning", "commonsense_reasoning", "numerical_calculation", "text_translation",
)  # fmt: skip
"""``MME_rating``'s ``super_cates``, in its order."""


def _mean(values: Sequence[float]) -> float:
    # np.mean of 0/1 values: their exact sum over their count (a float division, as numpy's).
    return sum(values) / len(values)


def _text(where: str, field: str, value: Any) -> str | None:
    """A cell as text; None for an empty one (pandas' NaN, as VLMEvalKit reads it)."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    return as_text(where, field, value)


@dataclass(frozen=True)
class _Row:
    where: str
    cells: Mapping[str, Any]


def _rows(path: Path, needed: Iterable[str]) -> list[_Row]:
    needed = tuple(needed)
    out = []
    for n, row in iter_table(path):
        where = f"{path}:row {n}"
        for name in needed:
            need(where, row, name)
        out.append(_Row(where, {k: row[k] for k in row if k not in ("image",)}))
    if not out:
        raise DataError(f"{path}: no rows (VLMEvalKit's figure is a mean over them)")
    return out


def _frame(title: str, data: Mapping[str, Sequence[Cell]]) -> PublishedTable:
    """A DataFrame's columns as a table; turned when it has fewer rows than columns (run.py)."""
    names = list(data)
    rows = list(zip(*(data[k] for k in names), strict=True))
    if len(rows) < len(names):
        first, rest = names[0], names[1:]
        header = ("name", *(str(v) for v in data[first]))
        turned = tuple((name, *data[name]) for name in rest)
        return PublishedTable(title, header, turned)
    return PublishedTable(title, tuple(names), tuple(rows))


# -- choice benchmarks ------------------------------------------------------------------------


def report_acc(path: Path) -> PublishedTable:
    """``report_acc`` over a judged result table's recorded ``hit``.

    Raises:
        DataError: No ``hit`` column, a ``hit`` that is no verdict, or a category that is empty.

    """
    table = _rows(path, ("hit",))
    hits: list[float] = []
    for r in table:
        hit = as_verdict(r.where, "hit", r.cells["hit"])
        if hit is None:
            raise row_error(r.where, "hit", "empty (VLMEvalKit's mean would be NaN)")
        hits.append(hit)
    has_split = "split" in table[0].cells
    splits_of = [
        (_text(r.where, "split", r.cells.get("split")) if has_split else "none") for r in table
    ]
    splits = list(dict.fromkeys(splits_of))  # list(set(...)): one column per split
    res: dict[str, list[Cell]] = {"split": [str(s) for s in splits]}

    def by_split(members: Sequence[int]) -> list[Cell]:
        out: list[Cell] = []
        for sp in splits:
            vals = [hits[i] for i in members if splits_of[i] == sp]
            # np.mean of nothing is NaN (with a warning); pandas writes it as an empty cell.
            out.append(_mean(vals) if vals else float("nan"))
        return out

    res["Overall"] = by_split(range(len(table)))
    for group in ("l2-category", "category"):
        if group not in table[0].cells:
            continue
        values: dict[str, list[int]] = {}
        for i, r in enumerate(table):
            value = _text(r.where, group, r.cells.get(group))
            if value is None:
                raise row_error(r.where, group, "empty (report_acc cannot sort it among names)")
            values.setdefault(value, []).append(i)
        for ability in sorted(values):
            res[MMB_ABBREVIATIONS.get(ability, ability)] = by_split(values[ability])
    return _frame("report_acc (mean hit per split)", res)


# -- yes/no benchmarks ------------------------------------------------------------------------


def _yorn(path: Path, extra: Sequence[str] = ()) -> list[tuple[_Row, str | None, str | None, bool]]:
    """Each row of an ``_auxmatch`` table: (row, answer, extracted, score)."""
    out = []
    for r in _rows(path, ("answer", "extracted", *extra)):
        answer = _text(r.where, "answer", r.cells["answer"])
        extracted = _text(r.where, "extracted", r.cells["extracted"])
        recorded = r.cells.get("score")
        verdict = as_verdict(r.where, "score", recorded) if recorded is not None else None
        if verdict is not None and verdict not in (0.0, 1.0):
            raise row_error(r.where, "score", f"expected true or false, got {recorded!r}")
        # data['score'] = (data['answer'] == data['extracted']), where the table has none.
        score = verdict == 1.0 if verdict is not None else answer == extracted
        out.append((r, answer, extracted, score))
    return out


def hallusion_rating(path: Path) -> PublishedTable:
    """``Hallusion_rating``: aAcc, fAcc and qAcc, overall, per category and per l2-category.

    Raises:
        DataError: An ``index`` without the set, figure and question parts VLMEvalKit splits
            out of it, or no ``l2-category``.

    """
    rows = _yorn(path, ("index", "l2-category"))
    keyed: list[tuple[Mapping[str, Any], str, str, bool]] = []
    for r, _, _, score in rows:
        index = as_text(r.where, "index", r.cells["index"])
        parts = index.split("_")
        if len(parts) < 6:
            raise row_error(
                r.where,
                "index",
                f"{index!r}: VLMEvalKit reads the set, figure and question ids as its 4th to "
                "6th '_'-separated parts",
            )
        l2 = str(r.cells["l2-category"])
        figure = f"{l2}_{parts[3]}_{parts[4]}"
        question = f"{l2}_{parts[3]}_{parts[5]}"
        keyed.append((r.cells, figure, question, score))

    def accs(members: Sequence[int]) -> tuple[float, float, float]:
        scores = [float(keyed[i][3]) for i in members]
        figures: dict[str, list[bool]] = {}
        questions: dict[str, list[bool]] = {}
        for i in members:
            _, fig, q, s = keyed[i]
            figures.setdefault(fig, []).append(s)
            questions.setdefault(q, []).append(s)
        return (
            _mean(scores) * 100,
            _mean([float(all(v)) for v in figures.values()]) * 100,
            _mean([float(all(v)) for v in questions.values()]) * 100,
        )

    res: dict[str, list[Cell]] = {"split": [], "aAcc": [], "fAcc": [], "qAcc": []}

    def add(name: str, members: Sequence[int]) -> None:
        a, f, q = accs(members)
        res["split"].append(name)
        res["aAcc"].append(a)
        res["fAcc"].append(f)
        res["qAcc"].append(q)

    add("Overall", range(len(keyed)))
    for group in ("category", "l2-category"):
        if group not in keyed[0][0]:
            continue
        values: dict[str, list[int]] = {}
        for i, (cells, *_) in enumerate(keyed):
            values.setdefault(str(cells[group]), []).append(i)
        for value, members in values.items():
            add(value, members)
    return _frame("Hallusion_rating", res)


def _f1(pairs: Sequence[tuple[bool, bool]]) -> tuple[float, float, float]:
    # cal_f1_score: answers and readings as 1 (Yes) / 0 (anything else).
    tp = sum(1 for t, p in pairs if t and p)
    fp = sum(1 for t, p in pairs if not t and p)
    fn = sum(1 for t, p in pairs if t and not p)
    precision = tp / (tp + fp) if (tp + fp) != 0 else 0
    recall = tp / (tp + fn) if (tp + fn) != 0 else 0
    f1 = 2 * (precision * recall) / (precision + recall) if (precision + recall) != 0 else 0
    return float(f1), float(precision), float(recall)


def pope_rating(path: Path) -> PublishedTable:
    """``POPE_rating``: F1 (``Overall``), accuracy, precision and recall, overall and per split.

    Raises:
        DataError: No ``category`` column (VLMEvalKit splits it before anything else).

    """
    rows = _yorn(path, ("category",))
    # data.assign(category=data['category'].str.split(',')).explode('category')
    exploded: list[tuple[str | None, bool, bool, bool]] = []
    for r, answer, extracted, score in rows:
        category = r.cells["category"]
        # A non-text cell is NaN after .str.split: one row, in no category.
        names: list[str | None] = [None]
        if isinstance(category, str):
            names = list(category.split(","))
        for name in names:
            exploded.append((name, answer == "Yes", extracted == "Yes", score))
    res: dict[str, list[Cell]] = {
        "split": [], "Overall": [], "acc": [], "precision": [], "recall": [],
    }  # fmt: skip

    def add(name: str, members: Sequence[tuple[str | None, bool, bool, bool]]) -> None:
        f1, precision, recall = _f1([(t, p) for _, t, p, _ in members])
        res["split"].append(name)
        res["Overall"].append(f1 * 100)
        res["acc"].append(_mean([float(s) for *_, s in members]) * 100)
        res["precision"].append(precision * 100)
        res["recall"].append(recall * 100)

    add("Overall", exploded)
    for name in dict.fromkeys(c for c, *_ in exploded if c is not None):
        add(name, [e for e in exploded if e[0] == name])
    return _frame("POPE_rating", res)


def mme_rating(path: Path) -> PublishedTable:
    """``MME_rating``: per category accuracy + accuracy+, and perception and reasoning sums.

    Raises:
        DataError: An image with one question (accuracy+ reads each image's first two), or a
            category of ``super_cates`` absent from the table (VLMEvalKit stops on both).

    """
    rows = _yorn(path, ("category", "image_path"))
    stats: dict[str, dict[str, list[bool]]] = {}
    first_row: dict[tuple[str, str], str] = {}
    for r, _, _, score in rows:
        category = str(r.cells["category"])
        image = str(r.cells["image_path"])
        stats.setdefault(category, {}).setdefault(image, []).append(score)
        first_row.setdefault((category, image), r.where)
    scores: dict[str, float] = {}
    for category, images in stats.items():
        normal = [float(s) for v in images.values() for s in v]
        plus = []
        for image, v in images.items():
            if len(v) < 2:
                raise row_error(
                    first_row[(category, image)],
                    "image_path",
                    f"{image!r} has one question: MME's accuracy+ multiplies each image's two",
                )
            plus.append(float(v[0] * v[1]))
        scores[category] = _mean(normal) * 100 + _mean(plus) * 100
    out: dict[str, float] = {}
    for name, members in (("perception", MME_PERCEPTION), ("reasoning", MME_REASONING)):
        base: float = 0
        for c in members:
            if c not in scores:
                raise DataError(f"{path}: category: no {c!r} rows (MME_rating sums all of {name})")
            base += scores[c]
        out[name] = base
    out.update(scores)
    # d2df: one row of these columns, which run.py prints turned.
    return _frame("MME_rating", {"name": ["score"]} | {k: [v] for k, v in out.items()})


# -- OCRBench and MM-Vet -----------------------------------------------------------------------

OCRBENCH_CATEGORIES = (
    "Regular Text Recognition", "Irregular Text Recognition", "Artistic Text Recognition",
    "Handwriting Recognition", "Digit String Recognition", "Non-Semantic Text Recognition",
    "Scene Text-centric VQA", "Doc-oriented VQA", "Key Information Extraction",
    "Handwritten Mathematical Expression Recognition",
)  # fmt: skip
"""``OCRBench_score``'s categories; the first six add up to ``Text Recognition``."""
_HME = "Handwritten Mathematical Expression Recognition"


def ocrbench_score(path: Path) -> PublishedTable:
    """OCRBench's ``_score.json``: the answers found in each prediction, summed by category.

    VLMEvalKit's ``OCRBench.evaluate`` reads the prediction table itself (OCRBench records no
    verdict): an answer counts where one of its texts is in the prediction, both lowercased,
    stripped and newlines as spaces (handwritten expressions: stripped, spaces removed, case
    kept); an empty prediction cell is pandas' NaN, read as the text ``nan``.

    Raises:
        DataError: A found answer of a category outside OCRBench's ten (VLMEvalKit stops on
            it; one never found is ignored, as there), or an answer that is no list literal.

    """
    scores = dict.fromkeys(OCRBENCH_CATEGORIES, 0)
    for r in _rows(path, ("prediction", "answer", "category")):
        said = r.cells["prediction"]
        # str(line['prediction']) of an empty cell (NaN after pandas' load) is "nan".
        predict = "nan" if said is None or said == "" else as_text(r.where, "prediction", said)
        answers = literal_answers(r.where, r.cells["answer"])
        category = r.cells["category"]
        for answer in answers:
            if category == _HME:
                a = answer.strip().replace("\n", " ").replace(" ", "")
                predict = predict.strip().replace("\n", " ").replace(" ", "")
            else:
                a = answer.lower().strip().replace("\n", " ")
                predict = predict.lower().strip().replace("\n", " ")
            if a in predict:
                if category not in scores:  # OCRBench_score[category] += 1: a KeyError
                    raise row_error(r.where, "category", f"{category!r} is not one of OCRBench's")
                scores[category] += 1
                break
    final: dict[str, Cell] = {"Text Recognition": sum(scores[c] for c in OCRBENCH_CATEGORIES[:6])}
    for c in OCRBENCH_CATEGORIES[6:]:
        final[c] = scores[c]
    total = sum(int(v) for v in final.values())
    final["Final Score"] = total
    final["Final Score Norm"] = float(total) / 10
    return PublishedTable("OCRBench _score.json", ("name", "score"), tuple(final.items()))


MMVET_CAPABILITIES = ("rec", "ocr", "know", "gen", "spat", "math")
"""``MMVet_acc``'s capabilities, each found in a category by substring."""


def mmvet_acc(path: Path) -> tuple[PublishedTable, PublishedTable]:
    """``MMVet_acc`` over a judged table's recorded grades: per capability and per combination.

    Raises:
        DataError: An empty or non-numeric grade, or a capability no item has (VLMEvalKit
            divides by zero there).

    """
    tot: dict[str, int] = {}
    score: dict[str, float] = {}
    combos: list[str] = []
    for r in _rows(path, ("score", "category")):
        category = _text(r.where, "category", r.cells["category"])
        if category is None:
            raise row_error(r.where, "category", "empty")
        combo = category.replace(",", "_")
        if combo not in combos:
            combos.append(combo)
        grade = _grade(r.where, r.cells["score"])
        keys = [c for c in MMVET_CAPABILITIES if c in category] + ["Overall", combo]
        for key in keys:
            tot[key] = tot.get(key, 0) + 1
            score[key] = score.get(key, 0) + grade

    def table(title: str, names: Sequence[str]) -> PublishedTable:
        rows = []
        for k in names:
            if not tot.get(k):
                raise DataError(f"{path}: no item of {k!r} (MMVet_acc divides by zero)")
            rows.append((k, tot[k], score[k] / tot[k] * 100))
        return PublishedTable(title, ("Category", "tot", "acc"), tuple(rows))

    return (
        table("MMVet_acc (_score.csv)", [*MMVET_CAPABILITIES, "Overall"]),
        table("MMVet_acc (_score_fine.csv)", [*combos, "Overall"]),
    )


def _grade(where: str, value: Any) -> float:
    """``float(item['score'])``: a number, or a numeric text."""
    if isinstance(value, bool) or value is None or value == "":
        raise row_error(where, "score", f"expected the judge's grade, got {value!r}")
    try:
        grade = float(value)
    except (TypeError, ValueError):
        raise row_error(where, "score", f"expected the judge's grade, got {value!r}") from None
    if not math.isfinite(grade):
        raise row_error(where, "score", f"expected the judge's grade, got {value!r}")
    return grade


# -- the hooks --------------------------------------------------------------------------------


def _stem(path: Path) -> str:
    return path.stem if path.suffix.lower() in _TABLES else path.name


@dataclass(frozen=True)
class _ChoiceTable:
    """``report_acc`` over a judged result table of a choice benchmark."""

    benchmark: str
    dataset: str
    """The name VLMEvalKit gives the benchmark (found in the file's stem)."""
    tool: str = "vlmevalkit"
    versions: tuple[str, ...] = ()

    @property
    def files(self) -> str:
        """What it reads, in words."""
        return f"VLMEvalKit's MODEL_{self.dataset}..._JUDGE_result tables with hit"

    def recognises(self, path: Path) -> bool:
        """A ``..._result`` table whose stem names the dataset."""
        stem = _stem(path)
        return stem.endswith("_result") and self.dataset in stem

    def figure(self, source: PublishedSource) -> Published:
        """VLMEvalKit's ``_acc.csv`` for the table."""
        _judged(source.path, "_result", "hit", "a MODEL_DATASET_JUDGE_result table")
        return Published(
            definition="VLMEvalKit's report_acc over the table's recorded hit",
            source=f"{_SOURCE}, vlmeval/dataset/utils/multiple_choice.py (report_acc)",
            tables=(report_acc(source.path),),
        )


_RATINGS = {
    "mme": ("MME", mme_rating, "MME_rating"),
    "hallusionbench": ("Hallusion", hallusion_rating, "Hallusion_rating"),
    "pope": ("POPE", pope_rating, "POPE_rating"),
}
"""lmmprobe's yes/no benchmarks: VLMEvalKit's name test, rating and its name, in its order."""


def _judged(path: Path, suffix: str, column: str, what: str) -> None:
    if not _stem(path).endswith(suffix):
        raise DataError(
            f"--as-published replays the verdicts VLMEvalKit recorded: {path.name} is not "
            f"{what} (its '{column}' column holds them)"
        )


@dataclass(frozen=True)
class _YesNoTable:
    """A yes/no benchmark's rating over an ``_auxmatch`` table's ``extracted`` and ``score``."""

    benchmark: str
    tool: str = "vlmevalkit"
    versions: tuple[str, ...] = ()

    @property
    def files(self) -> str:
        """What it reads, in words."""
        return f"VLMEvalKit's MODEL_{_RATINGS[self.benchmark][0]}..._auxmatch tables"

    def recognises(self, path: Path) -> bool:
        """An ``_auxmatch`` table whose stem VLMEvalKit's tests send to this rating."""
        stem = _stem(path)
        if not stem.endswith("_auxmatch"):
            return False
        for benchmark, (needle, _, _) in _RATINGS.items():
            if needle in stem:  # the first rating whose name test passes (evaluate's elif)
                return benchmark == self.benchmark
        return False

    def figure(self, source: PublishedSource) -> Published:
        """VLMEvalKit's ``_score.csv`` for the table."""
        _judged(source.path, "_auxmatch", "extracted", "a MODEL_DATASET_auxmatch table")
        _, rating, name = _RATINGS[self.benchmark]
        return Published(
            definition=f"VLMEvalKit's {name} over the table's recorded extracted/score",
            source=f"{_SOURCE}, vlmeval/dataset/utils/yorn.py ({name})",
            tables=(rating(source.path),),
        )


_CHOICE = {
    "mmbench": "MMBench",
    "mmstar": "MMStar",
    "seedbench": "SEEDBench",
    "ai2d": "AI2D",
    "realworldqa": "RealWorldQA",
    "scienceqa-img": "ScienceQA",
}
"""lmmprobe's choice benchmarks VLMEvalKit scores with report_acc, and its dataset names."""

_MMVET_JUDGED = re.compile(r"_MMVet_[^_]+$")
"""``MODEL_MMVet_JUDGE``: the judged table ``MMVet.evaluate`` writes (``_gpt-4-turbo``)."""


@dataclass(frozen=True)
class _OCRBenchTable:
    """OCRBench's ``_score.json`` over its prediction table (OCRBench records no verdict)."""

    benchmark: str = "ocrbench"
    tool: str = "vlmevalkit"
    versions: tuple[str, ...] = ()
    files: str = "VLMEvalKit's MODEL_OCRBench prediction tables"

    def recognises(self, path: Path) -> bool:
        """``MODEL_OCRBench``: the prediction table ``OCRBench.evaluate`` reads."""
        return _stem(path).endswith("_OCRBench")

    def figure(self, source: PublishedSource) -> Published:
        """VLMEvalKit's ``_score.json`` for the table."""
        return Published(
            definition="VLMEvalKit's OCRBench.evaluate over the table's predictions",
            source=f"{_SOURCE}, vlmeval/dataset/image_vqa.py (OCRBench.evaluate)",
            tables=(ocrbench_score(source.path),),
        )


@dataclass(frozen=True)
class _MMVetTable:
    """MM-Vet's ``MMVet_acc`` over a judged table's recorded grades."""

    benchmark: str = "mmvet"
    tool: str = "vlmevalkit"
    versions: tuple[str, ...] = ()
    files: str = "VLMEvalKit's MODEL_MMVet_JUDGE tables with score (MODEL_MMVet_gpt4.xlsx)"

    def recognises(self, path: Path) -> bool:
        """``MODEL_MMVet_JUDGE``: the table ``MMVet.evaluate`` writes with each grade."""
        return _MMVET_JUDGED.search(_stem(path)) is not None and "_MMVet_Hard" not in _stem(path)

    def figure(self, source: PublishedSource) -> Published:
        """VLMEvalKit's ``_score.csv`` and ``_score_fine.csv`` for the table."""
        if _MMVET_JUDGED.search(_stem(source.path)) is None:
            raise DataError(
                f"--as-published replays the grades VLMEvalKit recorded: {source.path.name} is "
                "not a MODEL_MMVet_JUDGE table (its 'score' column holds them)"
            )
        return Published(
            definition="VLMEvalKit's MMVet_acc over the table's recorded grades",
            source=f"{_SOURCE}, vlmeval/dataset/utils/mmvet.py (MMVet_acc)",
            tables=mmvet_acc(source.path),
        )


PUBLISHED_FIGURES.register("vlmevalkit/ocrbench", "VLMEvalKit's OCRBench score")(_OCRBenchTable())
PUBLISHED_FIGURES.register("vlmevalkit/mmvet", "VLMEvalKit's MMVet_acc")(_MMVetTable())
for _benchmark, _dataset in _CHOICE.items():
    PUBLISHED_FIGURES.register(f"vlmevalkit/{_benchmark}", "VLMEvalKit's report_acc")(
        _ChoiceTable(_benchmark, _dataset)
    )
for _benchmark, _rating in _RATINGS.items():
    PUBLISHED_FIGURES.register(f"vlmevalkit/{_benchmark}", f"VLMEvalKit's {_rating[2]}")(
        _YesNoTable(_benchmark)
    )
