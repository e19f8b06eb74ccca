"""The matcher contract: how a generated answer is read as one of the displayed options.

A matcher is a function registered in `MATCHERS` under the name ``FormulateConfig.matcher``
(``--matcher`` on the command line) selects. It gets the raw output, the option texts and
marks in display order, and the run's formulation config (for settings such as
``fuzzy_threshold``), and returns an `Extraction`: the display position it read, or None when
the answer cannot be read (scored ``unparsed`` and incorrect; never a guessed option), and the
stage that decided it. Stages ``mark`` and ``text`` count as format hits.

Built-in matchers live one per file (`extract`: lmmprobe's pipeline, `reform`, `dysca`);
another package adds one through the ``lmmprobe.matchers`` entry-point group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from lmmprobe.registry import Registry
from lmmprobe.schema import FormulateConfig
from lmmprobe.schema.score import FORMAT_HIT_STAGES

ExtractionStage = Literal["mark", "text", "fuzzy", "unparsed"]
"""The stage that decided an extraction."""


@dataclass(frozen=True, slots=True)
class Extraction:
    """The option read from one model output, and how it was read.

    Attributes:
        index: Position of the chosen option in the displayed order (0-based); None when
            unparsed.
        stage: "mark", "text", "fuzzy" or "unparsed".
        reason: For unparsed outputs why (lmmprobe's pipeline says "empty", "refusal",
            "no_match" or "ambiguous"); otherwise a short note on what matched.

    """

    index: int | None
    stage: ExtractionStage
    reason: str

    @property
    def format_hit(self) -> bool:
        """Whether the answer followed the expected format (decided by mark or option text)."""
        return self.stage in FORMAT_HIT_STAGES


class Matcher(Protocol):
    """Reads which displayed option a generated answer chose."""

    def __call__(
        self,
        output: str,
        options: Sequence[str],
        marks: Sequence[str],
        config: FormulateConfig,
    ) -> Extraction:
        """Read `output` against `options` (display order) shown with `marks`.

        Args:
            output: The model's raw text ("" when it returned none).
            options: Option texts in display order.
            marks: The marks shown with them, e.g. ``["A", "B", "C"]``.
            config: The run's formulation settings.

        Returns:
            The display position read and the stage that decided it, or an unparsed result.

        """
        ...


MATCHERS: Registry[Matcher] = Registry(
    "matcher",
    entry_point_group="lmmprobe.matchers",
    # A built-in matcher is a module of lmmprobe.parse registering itself (extract, reform,
    # dysca); every module of the package is imported on the first lookup.
    discover=("lmmprobe.parse",),
)
"""Answer matchers by name; ``lmmprobe list matchers`` shows them."""


def unparsed(reason: str) -> Extraction:
    """An answer no option could be read from, and why."""
    return Extraction(None, "unparsed", reason)


def option_letter(letter: str, options: Sequence[str], letters: str) -> Extraction:
    """The option a benchmark's rule named by `letter` (one of `letters`, in option order).

    For the matchers that reproduce a benchmark's own letter rule (``mme-realworld``,
    ``videomme``, ``longvideobench``): "" (the rule read nothing), a letter past the options
    or none at all is unparsed.
    """
    if not options:
        return unparsed("no options")
    index = letters.find(letter) if letter else -1
    if not 0 <= index < len(options):
        return unparsed("no_match")
    return Extraction(index, "mark", "option letter")


def yes_no_option(word: str, options: Sequence[str]) -> Extraction:
    """The option `word` (a benchmark rule's ``yes`` or ``no``) names, else unparsed.

    For the matchers of the yes/no benchmarks whose options ``yes`` and ``no`` are never shown
    (``mme``, ``pope``, ``hallusionbench``, ``tempcompass-yes-no``): a reading that is neither, or that no option is, is unparsed.
    """
    shown = [o.strip().lower() for o in options]
    if word not in ("yes", "no") or word not in shown:
        return unparsed("no_match")
    return Extraction(shown.index(word), "text", "yes/no")
