"""The scene-text check of Dysca's cleaning: a real OCR model must read an image's text back.

Origin: Dysca (Zhang et al., 2024) checks its generated scene-text images with PP-OCR and
drops those whose text the OCR model does not recognise. Dysca's repository does not release
that step's code (its ``image_generate/`` holds the CLIP filter only), so the rule for "read
back" is lmmprobe's own, named ``ocr_readback``: the expected text, lowercased and reduced to
letters and digits, must occur in the OCR model's recognised lines joined in reading order and
reduced the same way (so a word split over two boxes, or read with other punctuation or case,
still counts; any extra text does not matter). An expected text with no letter or digit is
never read back.

The OCR model is PP-OCR (PaddleOCR's v4 detector and recogniser and its v2 direction
classifier) in ONNX form, run by ``rapidocr_onnxruntime``, whose wheel ships the weights: it
runs offline, on the CPU. Install with ``pip install 'lmmprobe[ocr]'``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any

from lmmprobe._optional import require

if TYPE_CHECKING:
    from PIL import Image

__all__ = ["OcrFilter", "normalize_text", "read_back"]

_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_DISTRIBUTION = "rapidocr_onnxruntime"


def normalize_text(text: str) -> str:
    """Lowercase, keep only ASCII letters and digits (``"Hello, World!"`` → ``"helloworld"``)."""
    return _NOT_ALNUM.sub("", text.lower())


def read_back(expected: str, recognised: Sequence[str]) -> bool:
    """Whether `expected` occurs in the `recognised` lines (``ocr_readback``, module docstring).

    Args:
        expected: The text the image was made to show.
        recognised: The OCR model's lines, in reading order.

    """
    want = normalize_text(expected)
    return bool(want) and want in normalize_text("".join(recognised))


class OcrFilter:
    """Keep scene-text images whose text a PP-OCR model reads back.

    Attributes:
        name: ``"ocr"``.

    Raises:
        ImportError: rapidocr_onnxruntime is missing; the message gives the pip command.

    """

    name = "ocr"

    def __init__(self) -> None:
        (module,) = require(_DISTRIBUTION, extra="ocr", purpose="the OCR check of text images")
        self._engine: Any = module.RapidOCR()
        self.version = metadata.version(_DISTRIBUTION)

    def __repr__(self) -> str:
        return f"OcrFilter(rapidocr_onnxruntime {self.version})"

    def read(self, image: Image.Image) -> list[str]:
        """The text lines the OCR model finds in `image`, in its reading order."""
        import numpy as np

        result, _elapsed = self._engine(np.asarray(image.convert("RGB")))
        return [str(line[1]) for line in result or []]

    def keep(self, images: Sequence[Image.Image], texts: Sequence[str]) -> list[bool]:
        """Whether each image's expected text is read back (`read_back`).

        Raises:
            ValueError: `images` and `texts` differ in length.

        """
        if len(images) != len(texts):
            raise ValueError(f"got {len(images)} images but {len(texts)} texts; pass one per image")
        return [read_back(t, self.read(im)) for im, t in zip(images, texts, strict=True)]

    def describe(self) -> dict[str, Any]:
        """Manifest record: filter name, OCR engine and models, the read-back rule."""
        return {
            "name": self.name,
            "engine": f"{_DISTRIBUTION} {self.version}",
            "models": "PP-OCRv4 det + rec (ch), PP-OCR mobile v2.0 cls, ONNX, shipped in the wheel",
            "rule": "ocr_readback: normalized expected text occurs in the joined recognised lines",
        }
