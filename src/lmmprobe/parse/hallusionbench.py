"""lmmprobe's rule reading of a HallusionBench answer, and the ``hallusionbench`` matcher.

HallusionBench's official evaluation has no rules: GPT-4 reads every answer (the
``hallusionbench-correct`` judge protocol). Without a judge lmmprobe reads the answer's yes or
no by its explicit words (`hallusion_yes_no`: lmmprobe's yes/no reading,
`lmmprobe.parse.open_ended.read_yes_no`), which the official figures
(`lmmprobe.metrics.benchmark_choice.hallusion_correctness`) and, as the ``hallusionbench``
matcher, a run's answer rates (``accuracy``) share: a HallusionBench question is a choice
between ``yes`` and ``no`` that is never shown. An answer read as neither is ``unparsed``: where
a judge read it, the judge's verdict decides it in the headline (the judged headline).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from lmmprobe.parse.matcher import MATCHERS, Extraction, yes_no_option
from lmmprobe.parse.open_ended import read_yes_no
from lmmprobe.schema import FormulateConfig

__all__ = ["hallusion_yes_no", "hallusionbench_matcher"]


def hallusion_yes_no(answer: str) -> Literal["yes", "no", "unclear"] | None:
    """What an answer says by lmmprobe's yes/no reading (`read_yes_no`): yes, no, unclear or None.

    ``unclear`` (stated uncertainty) is HallusionBench's judge's third verdict; the figures
    (`lmmprobe.metrics.benchmark_choice.hallusion_correctness`) read it apart from unread.
    """
    return read_yes_no(answer)


@MATCHERS.register(
    "hallusionbench",
    summary="lmmprobe's yes/no reading of a HallusionBench answer: the first sentence's 'yes' "
    "or 'no'/'not' (both or neither, or stated uncertainty: unparsed, the judge's part)",
)
def hallusionbench_matcher(
    output: str, options: Sequence[str], marks: Sequence[str], config: FormulateConfig
) -> Extraction:
    """`hallusion_yes_no` as a matcher over the options ``yes`` and ``no``."""
    # None and "unclear" are no option: unparsed.
    return yes_no_option(hallusion_yes_no(output) or "", options)
