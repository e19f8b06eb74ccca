r"""MVBench's answer check, reproduced exactly, and the ``mvbench`` matcher.

MVBench's evaluation (OpenGVLab/Ask-Anything @ 4dd8210, ``video_chat2/mvbench.ipynb``) makes
the model's answer start with ``(`` (its answer prompt ``Best option:(``), keeps the first line
of the reply with ``(`` put back in front (``return_prompt + llm_message.strip().split('\n')[0]``),
and ``check_ans`` compares the first space-separated word of that, lower-cased and without
dots, with the gold option's ``(x)``: right where one holds the other. So a reply that begins
with a space or is empty leaves the word ``(``, which every gold ``(x)`` holds: such a reply is
right, as there.
"""

from __future__ import annotations

from collections.abc import Sequence

from lmmprobe.parse.matcher import MATCHERS, Extraction, unparsed
from lmmprobe.schema import FormulateConfig

__all__ = ["ASK_ANYTHING_COMMIT", "mvbench_check", "mvbench_matcher", "mvbench_prediction"]

ASK_ANYTHING_COMMIT = "4dd8210b030374bb0c510a57dfbe916f70d3ef71"
"""The OpenGVLab/Ask-Anything commit whose ``video_chat2/mvbench.ipynb`` is reproduced."""

MVBENCH_RETURN_PROMPT = "("
"""What MVBench puts back in front of a reply (the end of its answer prompt)."""


def mvbench_prediction(output: str) -> str:
    """The prediction MVBench checks: ``(`` and the reply's first line (``infer_mvbench``)."""
    return MVBENCH_RETURN_PROMPT + output.strip().split("\n")[0]


def mvbench_check(prediction: str, gold: str) -> bool:
    """``check_ans(pred, gt)``: whether `prediction`'s first word and `gold`'s hold each other.

    Args:
        prediction: `mvbench_prediction` of the reply.
        gold: The gold answer as MVBench's ``qa_template`` writes it: ``(B) text``.

    """
    pred_option = prediction.lower().split(" ")[0]
    gt_option = gold.lower().split(" ")[0]
    return pred_option.replace(".", "") in gt_option or gt_option in pred_option


@MATCHERS.register(
    "mvbench",
    summary="MVBench's check_ans: '(' and the reply's first line; its first word, without dots, "
    "and an option's '(x)' holding one another; the one option that does, else unparsed",
)
def mvbench_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """The option `mvbench_check` accepts, where exactly one is (MVBench checks the gold only)."""
    if not options:
        return unparsed("no options")
    prediction = mvbench_prediction(output)
    accepted = [
        i for i in range(len(options)) if mvbench_check(prediction, f"({chr(ord('a') + i)})")
    ]
    if len(accepted) != 1:
        return unparsed("no_match" if not accepted else "ambiguous")
    return Extraction(accepted[0], "mark", "option letter")
