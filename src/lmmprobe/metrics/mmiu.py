"""MMIU's answer reading and correctness, as its released evaluation code computes them.

MMIU (Meng et al. 2024; OpenGVLab/MMIU at `MMIU_COMMIT`) reads each answer in ``evaluate.py``
``process_data`` and counts it in ``evaluate_correct.py``; reproduced here with their quirks:

- The answer is stripped. The inference scripts' failure texts (``image none``, ``model error``,
  ``image error``, ``model error or image error``) and the empty answer read as ``Z``.
- Otherwise no-break spaces are removed, the answer stripped again, and a leading and a trailing
  run of ``.``, ``,``, ``(`` and ``)`` removed (``remove_punctuation``): that is the prediction.
  A prediction that is one of the letters a-n (any case) is the choice as it stands (``b``
  stays ``b``); any other goes to gpt-4o-mini with ``build_prompt`` (the ``mmiu-choice`` judge
  protocol), whose stripped reply is the choice, whatever it says.
- A choice is right when, stripped and lower-cased, it is a substring of the gold answer
  stripped and lower-cased (``choice in gt``): a letter equal to the gold letter, and also an
  empty reply from the judge (``'' in 'a'``).

The figure is the mean over the stored ``task`` values of each task's accuracy (``Overall``).
"""

from __future__ import annotations

__all__ = [
    "MMIU_COMMIT",
    "MMIU_LETTERS",
    "mmiu_correct",
    "mmiu_prediction",
    "mmiu_rule",
]

MMIU_COMMIT = "36c48ec6d59732bc49e9c5ebd7670be41d34a874"
"""The OpenGVLab/MMIU commit whose ``evaluate.py`` and ``evaluate_correct.py`` are reproduced."""

MMIU_LETTERS = frozenset("abcdefghijklmn")
"""The predictions ``process_data`` takes as a choice without asking the judge (lower-cased)."""

_FAILED = frozenset(("image none", "model error or image error", "image error", "model error", ""))
"""Texts the inference scripts write for a failed question; ``process_data`` reads them as Z."""

_PUNCTUATION = ".,()"


def mmiu_prediction(answer: str) -> str:
    """The prediction ``process_data`` reads (and quotes to its judge) from a model's answer.

    The answer stripped, its no-break spaces removed, stripped again, and then
    ``remove_punctuation``: ``re.sub(r'^[.,()]+|[.,()]+$', '', text)``. On a stripped text that
    pattern removes exactly a leading and a trailing run of those characters (``$`` could only
    stop before a final line break, which a stripped text lacks), so it is done here by
    ``lstrip``/``rstrip``, which take linear time where the pattern backtracks quadratically on
    a long run of them followed by another character.
    """
    text = answer.strip().replace("\u00a0", "").strip()
    return text.lstrip(_PUNCTUATION).rstrip(_PUNCTUATION)


def mmiu_rule(answer: str) -> str | None:
    """The choice ``process_data`` reads without its judge; None where it asks the judge.

    Args:
        answer: The model's answer.

    Returns:
        ``Z`` for a failure text or an empty answer, the prediction (stripped, case kept) where
        it is one of the letters a-n in any case, else None.

    """
    if answer.strip() in _FAILED:
        return "Z"
    prediction = mmiu_prediction(answer).strip()
    return prediction if prediction.lower() in MMIU_LETTERS else None


def mmiu_correct(choice: str, gold: str) -> bool:
    """``evaluate_correct.py``'s test: the choice, stripped and lower-cased, is in the gold.

    Args:
        choice: The rule's or the judge's choice (the judge's stripped reply, as it is).
        gold: The gold answer (the release's ``output``, a letter).

    """
    return choice.strip().lower() in gold.strip().lower()
