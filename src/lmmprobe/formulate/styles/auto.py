"""Each sample's own wording: the style its ``metadata.prompt_style`` names, else ReForm-Eval's.

Synthetic (Dysca-style) samples carry ``prompt_style: dysca``, so a run mixing them with other
data asks each question the way its benchmark does.
"""

from __future__ import annotations

from lmmprobe.formulate.styles import PROMPT_STYLES, ChoicePrompt

DEFAULT = "reform"


@PROMPT_STYLES.register(
    "auto", summary="each sample's metadata.prompt_style (synthetic samples: dysca), else reform"
)
def auto_style(prompt: ChoicePrompt) -> list[str]:
    """Word the prompt in the style the sample asks for, or ReForm-Eval's."""
    wanted = prompt.sample.metadata.get("prompt_style")
    name = (
        wanted
        if isinstance(wanted, str) and wanted != "auto" and wanted in PROMPT_STYLES
        else DEFAULT
    )
    return PROMPT_STYLES.get(name)(prompt)
