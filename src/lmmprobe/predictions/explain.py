"""What ``lmmprobe score FILE --benchmark`` says beside its figures: quirks, answer key, audit.

- MMMU: how many answers the official code would have guessed (always); CMMMU likewise.
- With ``--as-published``: the tool's own figure to its last printed digit, from the hook
  the file's reader provides for its benchmark (`lmmprobe.predictions.as_published`: MathVista's
  ``calculate_score.py``, VLMEvalKit's ratings, MMMU's ``main_parse_and_eval.py``).
- Every benchmark: the local copy's answer-key version by hash, and a warning when the file
  evidently used another key (`lmmprobe.predictions.answer_keys`).
- With ``--audit``: lmmprobe's verdicts against the tool's own, item by item, by cause
  (`lmmprobe.predictions.audit`). An MMMU ``output.json`` folder records no verdict: the
  official one is then the one MMMU's script gives (random letters included), so the audit
  shows what its random fallback changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lmmprobe.metrics.cmmmu import cmmmu_evaluate
from lmmprobe.predictions.answer_keys import gold_key, key_version, key_warnings, plain_id
from lmmprobe.predictions.as_published import (
    Published,
    PublishedSource,
    find_published,
    published_figure,
)
from lmmprobe.predictions.as_published.cmmmu import cmmmu_items
from lmmprobe.predictions.as_published.mmmu import mmmu_items
from lmmprobe.predictions.audit import Audit
from lmmprobe.predictions.imported import ImportedPrediction
from lmmprobe.predictions.mmmu_published import MmmuPublished, mmmu_as_published
from lmmprobe.predictions.readers._vlmevalkit_log import CIRCULAR_GROUP_FIELD
from lmmprobe.predictions.readers.lmms_eval import UNTOLD_FIELD
from lmmprobe.predictions.verdicts import GUESSED_FIELD, audit_imported
from lmmprobe.schema import Sample, Score

__all__ = ["FileExplanation", "FileFacts", "explain_facts", "explain_file", "mmmu_items"]


@dataclass
class FileExplanation:
    """The notes, the published figure and the audit of one scored file."""

    benchmark: str | None
    key_version: str | None = None
    """The local copy's answer key: its hash and the known version it equals."""
    warnings: list[str] = field(default_factory=list)
    """The file evidently used another answer key (the items named)."""
    guessed: list[str] = field(default_factory=list)
    """MMMU, CMMMU: the ids whose answer the official code cannot read (it would guess)."""
    published: Published | None = None
    """With ``--as-published``: the tool's own figures (`lmmprobe.predictions.as_published`)."""
    audit: Audit | None = None
    circular_table: str | None = None
    """A VLMEvalKit CircularEval result table read alone: its ``MODEL_DATASET`` stem."""
    path: str = "the file"
    untold: int = 0
    """lmms-eval MMMU rows whose verdict is unrecorded: the log's layout cannot be told."""
    rule_version: str | None = None
    """The version of the tool's reading rules its log was read with and how it was told,
    in one line, where its reader tells versions apart (`Origin.detail`'s
    ``rule_version_note``)."""

    def notes(self) -> list[str]:
        """One line per fact worth a reader's attention, in plain words."""
        out = [] if self.key_version is None else [self.key_version]
        out += self.warnings
        if self.rule_version is not None:
            out.append(self.rule_version)
        if self.circular_table is not None:
            stem = self.circular_table
            out.append(
                f"{self.path} is a VLMEvalKit CircularEval result table without the prediction "
                f"table it was made from: it holds each question's first row only, and its "
                f"'hit' there is the question's CircularEval verdict (every circular copy "
                f"right), not that row's; so mmbench_circular cannot be computed and per-row "
                f"figures read the first copies alone. Put {stem}.xlsx (or {stem}.tsv / "
                f"{stem}.csv) beside it to score every copy"
            )
        if self.untold:
            out.append(
                f"{self.path} does not tell which lmms-eval wrote it (v0.3.0 and earlier log "
                f"one parsed answer per document, later versions one per response, and no "
                f"choice question or number here shows which): lmms-eval's verdict is left "
                f"unrecorded for the {self.untold} open "
                + ("answer" if self.untold == 1 else "answers")
                + " the two readings judge differently"
            )
        if self.benchmark == "mmmu":
            out.append(
                f"MMMU's own code would pick a random letter for {_answers(len(self.guessed))} "
                f"it cannot read; lmmprobe counts {_them(len(self.guessed))} wrong"
                + ("" if self.published else " (--as-published gives MMMU's figure)")
            )
        if self.benchmark == "cmmmu":
            out.append(
                f"CMMMU's own code would answer {_answers(len(self.guessed))} at random (a "
                "letter where it finds none, 对 or 错 where it reads a tie); lmmprobe counts "
                f"{_them(len(self.guessed))} wrong"
                + ("" if self.published else " (--as-published gives CMMMU's figure)")
            )
        return out


def _option_text(
    sample: Sample, gold: str | list[str], names: Literal["letter", "text"] | None = None
) -> str | list[str]:
    """A file's gold as an option letter (VLMEvalKit's ``answer``: ``B``) as that option's text.

    The local key names a choice item's gold by its text (`gold_key`); the letter names the
    option in the benchmark's order, as the tool showed it. `names` is what the reader says
    the gold is (`ImportedPrediction.gold_names`): a ``text`` gold stays as it is, and where it
    says nothing, so does a gold that is one of the options' texts (AI2D's option ``A``).
    """
    choices = sample.choices or []
    if names == "text" or (names is None and isinstance(gold, str) and gold in choices):
        return gold
    if sample.is_choice and isinstance(gold, str) and len(gold) == 1 and "A" <= gold <= "Z":
        at = ord(gold) - ord("A")
        if at < len(choices):
            return choices[at]
    return gold


def _with_published(
    preds: Sequence[ImportedPrediction], published: MmmuPublished
) -> list[ImportedPrediction]:
    """Rows without a recorded verdict get the one MMMU's script gives them."""
    out = []
    for p in preds:
        sid = p.sample_id
        if p.tool_verdict is None and sid is not None and sid in published.correct:
            parsed = published.parsed[sid]
            reading = parsed if isinstance(parsed, str) else ", ".join(map(str, parsed))
            p = ImportedPrediction(
                row=p.row,
                sample_id=p.sample_id,
                prediction=p.prediction,
                gold=p.gold,
                tool_extraction=p.tool_extraction if p.tool_extraction is not None else reading,
                tool_judged=p.tool_judged,
                tool_verdict=1.0 if published.correct[sid] else 0.0,
                fields=dict(p.fields)
                | ({GUESSED_FIELD: published.guessed[sid]} if sid in published.guessed else {}),
            )
        out.append(p)
    return out


@dataclass
class FileFacts:
    """What an explanation needs of a scored file's rows, gathered a chunk at a time.

    ``score`` streams a file (`lmmprobe.predictions.importing.score_file`): each chunk of
    joined rows passes `add_rows` once and is dropped. Only what the notes read is kept from
    each row: the first CircularEval group stem, a count, and (with a benchmark) each item's
    gold and recorded verdict by id, which the join bounds by the benchmark's size (one row an
    item). The rows themselves and their scores are kept only with `keep`: the audit pairs
    every row, the ``--as-published`` hooks and MMMU's guesses replay the file's rows.
    """

    benchmark: str | None
    """The benchmark's registry name, or None (no answer key to check)."""
    keep: bool = False
    """Keep every joined row and its score (``--audit``, ``--as-published``, MMMU, CMMMU)."""
    rows: list[tuple[Sample, ImportedPrediction]] = field(default_factory=list)
    scores: list[Score] = field(default_factory=list)
    circular_table: str | None = None
    untold: int = 0
    golds: dict[str, str | list[str]] = field(default_factory=dict)
    verdicts: dict[str, tuple[str | None, bool]] = field(default_factory=dict)
    local: dict[str, tuple[str, ...]] | None = None
    """The local copy's answer key (`gold_key`), from the samples `add_local` saw."""
    joined: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The joined samples' key: the answer key where no local copy was seen."""
    items_from_file: bool = False
    """The items were made from the file (no local copy): its golds are not checked against
    them as another key (`lmmprobe.predictions.file_items`)."""

    def add_local(self, sample: Sample) -> None:
        """One sample of the benchmark's local copy, in its order (its gold joins the key)."""
        if self.benchmark is None:
            return
        if self.local is None:
            self.local = {}
        self.local.update(gold_key([sample]))

    def add_rows(
        self, rows: Sequence[tuple[Sample, ImportedPrediction]], scores: Sequence[Score]
    ) -> None:
        """One chunk of joined rows (each sample with the file's prediction) and their scores."""
        benchmark = self.benchmark
        for s, p in rows:
            if self.circular_table is None and CIRCULAR_GROUP_FIELD in p.fields:
                self.circular_table = str(p.fields[CIRCULAR_GROUP_FIELD])
            if p.fields.get(UNTOLD_FIELD):
                self.untold += 1
            if benchmark is None:
                continue
            # By the joined item's own id, not the row's: a tool numbering items its own way
            # (`lmmprobe.predictions.id_schemes`) has its golds checked against the same items.
            sid = plain_id(s.id, benchmark)
            if p.gold is not None:
                self.golds[sid] = _option_text(s, p.gold, p.gold_names)
            if p.tool_verdict is not None:
                self.verdicts[sid] = (p.tool_extraction, p.tool_verdict == 1.0)
            if self.local is None:
                self.joined.update(gold_key([s]))
        if self.keep:
            self.rows.extend(rows)
            self.scores.extend(scores)

    def add_planned(
        self, rows: Sequence[tuple[Sample, Any, Any, ImportedPrediction]], scores: Sequence[Score]
    ) -> None:
        """`add_rows` for a plan's rows (sample, ask, response, prediction): `score_file`'s ``on_rows``."""
        self.add_rows([(s, p) for s, _, _, p in rows], scores)


def explain_file(
    benchmark: str | None,
    rows: Sequence[tuple[Sample, ImportedPrediction]],
    scores: Sequence[Score],
    *,
    local: Sequence[Sample] | None = None,
    path: str = "the file",
    audit: bool = False,
    as_published: bool = False,
    label: str = "official",
    tool: str = "mmmu",
    n_boot: int = 1000,
    seed: int = 0,
    tool_version: str | None = None,
) -> FileExplanation:
    """The notes, the tool's published figure and the audit of one file joined to a benchmark.

    Args:
        benchmark: The benchmark's registry name (``mmmu``), or None (golds in the file).
        rows: The joined rows: each local sample with the file's prediction for it.
        scores: lmmprobe's scores of the same rows.
        local: The benchmark's whole local copy (its answer key is hashed); default: the
            joined samples.
        path: How warnings name the file.
        audit: Pair lmmprobe's verdicts with the tool's.
        as_published: Give the tool's own figure (the hook of `tool` for `benchmark`, or for
            the benchmark the file names; `path` is then the file read).
        label: How the audit names the tool.
        tool: The reader that read the file. MMMU's script verdicts are replayed (random
            letters included) only for the ``mmmu`` reader's ``output.json`` folders, which
            record none: another tool's verdict is its own, never MMMU's script's.
        n_boot: Bootstrap resamples of the audit's interval.
        seed: Seed of the bootstrap.
        tool_version: ``--tool-version``: the tool version whose rules wrote the file.

    Raises:
        DataError: ``as_published`` where no hook fits the reader and benchmark.

    """
    facts = FileFacts(benchmark, keep=True)
    for sample in local or ():
        facts.add_local(sample)
    if local is not None and facts.local is None:
        facts.local = {}
    facts.add_rows(rows, scores)
    return explain_facts(
        facts, path=path, audit=audit, as_published=as_published, label=label, tool=tool,
        n_boot=n_boot, seed=seed, tool_version=tool_version,
    )  # fmt: skip


def explain_facts(
    facts: FileFacts,
    *,
    path: str = "the file",
    audit: bool = False,
    as_published: bool = False,
    label: str = "official",
    tool: str = "mmmu",
    n_boot: int = 1000,
    seed: int = 0,
    tool_version: str | None = None,
    detail: Mapping[str, str] | None = None,
) -> FileExplanation:
    """`explain_file` from what `FileFacts` gathered.

    `detail` is what the file's reader recorded of it (`Origin.detail`), for its hook.

    The audit, the published figure and MMMU's guesses read the rows it kept
    (`FileFacts.keep`).

    Raises:
        DataError: ``as_published`` where no hook fits the reader and benchmark.

    """
    benchmark = facts.benchmark
    out = FileExplanation(benchmark=benchmark, path=path)
    out.circular_table = facts.circular_table
    out.untold = facts.untold
    rows = facts.rows
    preds = [p for _, p in rows]
    if benchmark is not None:
        key = facts.local if facts.local is not None else facts.joined
        out.key_version = key_version(benchmark, key)
        # Items made from the file (no local copy: `file_items`) hold its golds already; a
        # second gold field it records (lmms-eval's ``target``, which may
        # be the literal its doc_to_target names) is no other answer key.
        golds = None if facts.items_from_file else facts.golds
        out.warnings = key_warnings(
            benchmark, key, golds or None, facts.verdicts or None, path=path
        )
    published: MmmuPublished | None = None
    if benchmark == "mmmu":
        published = mmmu_as_published(mmmu_items(rows, path))
        out.guessed = sorted(published.guessed)
    elif benchmark == "cmmmu":
        out.guessed = sorted(cmmmu_evaluate(cmmmu_items(rows)).guessed)
    if as_published:
        hook = find_published(tool, benchmark, Path(path))
        out.published = published_figure(
            hook,
            PublishedSource(
                Path(path), benchmark, rows, tool_version=tool_version, detail=dict(detail or {})
            ),
        )
    if audit:
        if published is not None and tool == "mmmu":
            preds = _with_published(preds, published)
        # The rows kept are the joined rows with their scores, one for one (`FileFacts`).
        out.audit = audit_imported(
            facts.scores, preds, label=label, n_boot=n_boot, seed=seed,
            aligned=len(facts.scores) == len(preds),
        )  # fmt: skip
    return out


def _answers(n: int) -> str:
    """``1 answer``, ``2 answers``."""
    return f"{n} answer" if n == 1 else f"{n} answers"


def _them(n: int) -> str:
    """``it`` for one answer, ``them`` for several."""
    return "it" if n == 1 else "them"
