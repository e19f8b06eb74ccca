"""What ``lmmprobe score FILE --benchmark`` says beside its figures: quirks, answer key, audit.

- MMMU: how many answers the official code would have guessed (always).
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

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from lmmprobe.predictions.answer_keys import gold_key, key_version, key_warnings, plain_id
from lmmprobe.predictions.as_published import (
    Published,
    PublishedSource,
    find_published,
    published_figure,
)
from lmmprobe.predictions.as_published.mmmu import mmmu_items
from lmmprobe.predictions.audit import Audit
from lmmprobe.predictions.imported import ImportedPrediction
from lmmprobe.predictions.mmmu_published import MmmuPublished, mmmu_as_published
from lmmprobe.predictions.readers._vlmevalkit_log import CIRCULAR_GROUP_FIELD
from lmmprobe.predictions.readers.lmms_eval import UNTOLD_FIELD
from lmmprobe.predictions.verdicts import GUESSED_FIELD, audit_imported
from lmmprobe.schema import Sample, Score

__all__ = ["FileExplanation", "explain_file", "mmmu_items"]


@dataclass
class FileExplanation:
    """The notes, the published figure and the audit of one scored file."""

    benchmark: str | None
    key_version: str | None = None
    """The local copy's answer key: its hash and the known version it equals."""
    warnings: list[str] = field(default_factory=list)
    """The file evidently used another answer key (the items named)."""
    guessed: list[str] = field(default_factory=list)
    """MMMU: the ids whose answer the official code cannot read (it would guess a letter)."""
    published: Published | None = None
    """With ``--as-published``: the tool's own figures (`lmmprobe.predictions.as_published`)."""
    audit: Audit | None = None
    circular_table: str | None = None
    """A VLMEvalKit CircularEval result table read alone: its ``MODEL_DATASET`` stem."""
    path: str = "the file"
    untold: int = 0
    """lmms-eval MMMU rows whose verdict is unrecorded: the log's layout cannot be told."""

    def notes(self) -> list[str]:
        """One line per fact worth a reader's attention, in plain words."""
        out = [] if self.key_version is None else [self.key_version]
        out += self.warnings
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
                f"MMMU's own code would pick a random letter for {len(self.guessed)} answers it "
                "cannot read; lmmprobe counts them wrong"
                + ("" if self.published else " (--as-published gives MMMU's figure)")
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
    out = FileExplanation(benchmark=benchmark, path=path)
    preds = [p for _, p in rows]
    out.circular_table = next(
        (str(p.fields[CIRCULAR_GROUP_FIELD]) for p in preds if CIRCULAR_GROUP_FIELD in p.fields),
        None,
    )
    out.untold = sum(1 for p in preds if p.fields.get(UNTOLD_FIELD))
    if benchmark is not None:
        key = gold_key(local if local is not None else [s for s, _ in rows])
        out.key_version = key_version(benchmark, key)
        # By the joined item's own id, not the row's: a tool numbering items its own way
        # (`lmmprobe.predictions.id_schemes`) has its golds checked against the same items.
        golds = {
            plain_id(s.id, benchmark): _option_text(s, p.gold, p.gold_names)
            for s, p in rows
            if p.gold is not None
        }
        verdicts = {
            plain_id(s.id, benchmark): (p.tool_extraction, p.tool_verdict == 1.0)
            for s, p in rows
            if p.tool_verdict is not None
        }
        out.warnings = key_warnings(benchmark, key, golds or None, verdicts or None, path=path)
    published: MmmuPublished | None = None
    if benchmark == "mmmu":
        published = mmmu_as_published(mmmu_items(rows, path))
        out.guessed = sorted(published.guessed)
    if as_published:
        hook = find_published(tool, benchmark, Path(path))
        out.published = published_figure(
            hook, PublishedSource(Path(path), benchmark, rows, tool_version=tool_version)
        )
    if audit:
        if published is not None and tool == "mmmu":
            preds = _with_published(preds, published)
        out.audit = audit_imported(scores, preds, label=label, n_boot=n_boot, seed=seed)
    return out
