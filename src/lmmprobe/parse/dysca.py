r"""Dysca's answer reading, reproduced exactly, for numbers comparable with Dysca's own.

The authority is ``DyscaDataset.normalize_extracted_answer`` in Dysca's
``evaluate_LVLMs/Dysca_compute.py`` (Robin-WZQ/Dysca @ ac202cb). For multiple-choice and
true/false questions it:

1. makes the answer a string (a string is stripped; anything else becomes ``str(answer)``);
2. takes the **last** ``(x)`` mark (any ASCII letter, upper-cased); if there is none, the
   **last** capital letter ``A``-``Z`` anywhere in the text (``I`` of "I think" counts);
3. parses the choice lines from the instruction: the text after the last ``"Choices:\n"``, up
   to the first ``"\nHint:"``, split on ``"\n"``; line ``i`` is option letter ``chr(65 + i)``;
4. if the letter (or, when no letter was found, the whole stripped text) is one of those
   option letters, answers that line's text (the line minus its first space-separated token);
5. otherwise answers the line with the smallest Levenshtein distance to the letter (for an
   out-of-range mark such as ``(E)``) or to the whole stripped text (no letter at all), ties
   going to the **last** such line. An empty output is at distance ``len(line)`` from each
   line, so it still picks one (the shortest, the last of equals).

Nothing is ever left unread within lmmprobe's bound on the edit-distance fallback
(`MAX_EDIT_CELLS`, far past any real answer); past it the answer is unparsed, never guessed.
`dysca_answer` applies the rule to Dysca's own instruction string
(for scoring Dysca's files); `dysca_matcher`, the ``dysca`` entry of `MATCHERS`, applies it to a
displayed question: its choice lines are built as Dysca's instruction writes them, ``(A) text``
with upper-case letters ``A``, ``B``, ... in display order, whatever marks the run showed (Dysca
reads only letters). Use it for parity with Dysca, and lmmprobe's own pipeline otherwise.

A known quirk of the released code that this module reproduces rather than fixes: Dysca's
``pqa_postprocess.py`` writes multiple-choice instructions without the ``"Choices:\n"`` line
(its README's example has it), and on such an instruction the question line ``Question: ...``
becomes choice ``(A)``, so each letter reads the option before the one it names.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rapidfuzz.distance import Levenshtein

from lmmprobe.parse.matcher import MATCHERS, Extraction, unparsed
from lmmprobe.schema import FormulateConfig
from lmmprobe.schema.sample import MAX_OPTIONS

__all__ = [
    "MAX_CHOICE_LINES",
    "MAX_EDIT_CELLS",
    "DyscaReading",
    "DyscaStep",
    "dysca_answer",
    "dysca_bound_problem",
    "dysca_choice_lines",
    "dysca_lines",
    "dysca_match",
    "dysca_matcher",
    "dysca_read",
]

log = logging.getLogger(__name__)

DyscaStep = Literal["mark", "capital", "letter", "levenshtein"]
"""What decided a reading: an in-range ``(x)`` mark, an in-range last capital, the whole text
being an option letter (only possible past 26 choice lines), or the Levenshtein fallback."""

DyscaSource = Literal["mark", "capital", "text"]
"""Where the string looked up came from: a ``(x)`` mark, the last capital, or the whole text."""

MAX_CHOICE_LINES = MAX_OPTIONS
"""The most choice lines an instruction read from a file may have (256, the options one
question may have): Dysca's own have at most tens. Each line costs an edit distance against the
answer, so an instruction of 300,000 lines is refused, not read for minutes."""
MAX_EDIT_CELLS = 1 << 32
"""The most answer x choice-line characters the edit-distance fallback may compare for one answer,
read from a file or during a run (about 4.3 billion: well under a second with rapidfuzz's
bit-parallel distance; Dysca's answers and choice lines together are a few thousand characters).
Unbounded, the largest answer a response holds (`lmmprobe.schema.MAX_REPLY_CHARS`, 2^20) against
the most option text a sample may hold (`lmmprobe.schema.sample.MAX_PROMPT_CHARS`, 2^21) is 2^41
pairs: about two minutes for one answer."""

_MARK = re.compile(r"\(([a-zA-Z])\)")
_CAPITAL = re.compile(r"[A-Z]")


@dataclass(frozen=True, slots=True)
class DyscaReading:
    """How Dysca reads one answer.

    Attributes:
        index: The chosen choice line (0-based).
        text: What Dysca compares with the ground truth: the chosen line without its first
            space-separated token (``"(B) doing aerobics"`` -> ``"doing aerobics"``).
        step: What decided it (see `DyscaStep`).
        source: Where the looked-up string came from (see `DyscaSource`).
        extraction: The string looked up among the option letters, and for ``levenshtein`` the
            one whose edit distance to each choice line was measured.

    """

    index: int
    text: str
    step: DyscaStep
    source: DyscaSource
    extraction: str

    @property
    def empty_output(self) -> bool:
        """The answer was empty or whitespace only, and was read by Levenshtein anyway."""
        return self.source == "text" and self.extraction == ""

    @property
    def letter_outside_options(self) -> bool:
        """A ``(x)`` mark or capital was found, but no choice line has that letter."""
        return self.step == "levenshtein" and self.source != "text"


def dysca_choice_lines(instruction: str) -> list[str]:
    r"""The choice lines Dysca parses out of an instruction.

    The text after the last ``"Choices:\n"`` (the whole instruction if there is none), cut at
    the first ``"\nHint:"``, split on ``"\n"``. Every piece is a line, including any question
    line before the options when ``"Choices:\n"`` is missing, and empty pieces.
    """
    return instruction.split("Choices:\n")[-1].split("\nHint:")[0].split("\n")


def dysca_bound_problem(answer: object, choice_lines: Sequence[str]) -> str | None:
    """Why reading `answer` against `choice_lines` is past this module's bounds, or None.

    Readers of Dysca's files ask this before `dysca_read`, so an answer or instruction from
    outside is read in bounded time; within the bounds (every real Dysca entry) the reading
    is exactly Dysca's.

    Returns:
        One line naming the field (``instruction: ...`` or ``answer: ...``) and the bound.

    """
    if len(choice_lines) > MAX_CHOICE_LINES:
        return (
            f"instruction: {len(choice_lines):,} choice lines, more than the "
            f"{MAX_CHOICE_LINES} a question may have"
        )
    text = answer.strip() if isinstance(answer, str) else str(answer)
    if _MARK.search(text) or _CAPITAL.search(text):
        return None  # a letter is looked up; the fallback compares one character at most
    cells = len(text) * sum(len(line) for line in choice_lines)
    if cells > MAX_EDIT_CELLS:
        return (
            f"answer: {len(text):,} characters to compare by edit distance with "
            f"{sum(len(line) for line in choice_lines):,} characters of choice lines, past "
            f"the {MAX_EDIT_CELLS:,} character pairs lmmprobe compares for one answer"
        )
    return None


def _line_text(line: str) -> str:
    # Dysca drops the first space-separated token ("(A)") and rejoins the rest with spaces,
    # which keeps everything after the first space as it was ("" when there is no space).
    return line.partition(" ")[2]


def dysca_read(answer: object, choice_lines: Sequence[str]) -> DyscaReading:
    """Read an answer against choice lines exactly as Dysca does.

    Args:
        answer: The model's answer; a string is stripped, anything else (a JSON number, null,
            ...) is read as ``str(answer)``, as Dysca does.
        choice_lines: The choice lines, e.g. from `dysca_choice_lines`; line ``i`` is letter
            ``chr(65 + i)``.

    Returns:
        The chosen line and how it was chosen.

    Raises:
        ValueError: ``choice_lines`` is empty (Dysca's code fails on ``min`` of nothing).

    """
    if not choice_lines:
        raise ValueError("no choice lines to read the answer against")
    extraction = answer.strip() if isinstance(answer, str) else str(answer)
    source: DyscaSource = "text"
    letters = _MARK.findall(extraction)
    if letters:
        source = "mark"
    else:
        letters = _CAPITAL.findall(extraction)
        if letters:
            source = "capital"
    if letters:
        extraction = letters[-1].upper()
    # Option letters run past "Z" into "[", "\\", ... with more than 26 lines, as in Dysca.
    if len(extraction) == 1 and 0 <= ord(extraction) - 65 < len(choice_lines):
        index = ord(extraction) - 65
        step: DyscaStep = "letter" if source == "text" else source
    else:
        distances = [Levenshtein.distance(extraction, line) for line in choice_lines]
        best = min(distances)
        # Ties go to the last line at the smallest distance, as Dysca's get_most_similar does.
        index = len(distances) - 1 - distances[::-1].index(best)
        step = "levenshtein"
    return DyscaReading(index, _line_text(choice_lines[index]), step, source, extraction)


def dysca_answer(answer: object, instruction: str) -> str:
    """The choice text Dysca reads from an answer to one of its instructions.

    This is ``normalize_extracted_answer(instruction, answer, question_type)`` for the
    multiple-choice and true/false questions of Dysca's files; its result is compared with the
    ground-truth ``answer`` by ``==``.

    Args:
        answer: The model's answer as stored in the output file.
        instruction: The ground truth's ``instruction``.

    Returns:
        The chosen choice line without its ``(X)`` token.

    """
    return dysca_read(answer, dysca_choice_lines(instruction)).text


def dysca_lines(options: Sequence[str]) -> list[str]:
    """Choice lines as Dysca's instruction writes them: ``(A) text``, ``(B) text``, ..."""
    return [f"({chr(65 + i)}) {option}" for i, option in enumerate(options)]


def dysca_match(output: str, options: Sequence[str]) -> tuple[int | None, str]:
    """Option index chosen under Dysca's rule and the step that decided it.

    The choice lines are ``(A) option``, ``(B) option``, ... in the given order.

    Returns:
        ``(index, step)`` with step ``"mark"``, ``"capital"``, ``"letter"`` or
        ``"levenshtein"``; ``(None, "no options")`` when there are no options, and ``(None,
        why)`` for an answer past `dysca_bound_problem`'s bounds. An empty output is read too
        (by Levenshtein), as in Dysca.

    """
    if not options:
        return None, "no options"
    lines = dysca_lines(options)
    problem = dysca_bound_problem(output, lines)
    if problem is not None:
        return None, problem
    reading = dysca_read(output, lines)
    return reading.index, reading.step


@MATCHERS.register(
    "dysca",
    summary="Dysca's rule: last (x) mark, else last capital, else nearest '(X) text' line by "
    "edits (ties: last); unparsed only past the edit-distance bound",
)
def dysca_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """Dysca's rule as a matcher, on choice lines ``(A) option``, ``(B) option``, ...

    The run's `marks` are not used: Dysca reads letters ``A``, ``B``, ... in display order.
    A mark, capital or letter is stage ``mark`` (a format hit) with reason ``mark``,
    ``capital`` or ``letter``; the Levenshtein fallback is stage ``fuzzy`` with reason
    ``levenshtein``. Only a question without options, and an answer past `MAX_EDIT_CELLS`
    (a long text without any capital or ``(x)`` mark, against long options: its reason is
    `dysca_bound_problem`'s line, also logged as a warning), are unparsed.
    """
    if not options:
        return unparsed("no options")
    lines = dysca_lines(options)
    problem = dysca_bound_problem(output, lines)
    if problem is not None:
        # Never a guess: past the bound the answer is unread, and the run says why.
        log.warning("dysca matcher left an answer unparsed: %s", problem)
        return unparsed(problem)
    reading = dysca_read(output, lines)
    if reading.step == "levenshtein":
        return Extraction(reading.index, "fuzzy", reading.step)
    return Extraction(reading.index, "mark", reading.step)
