"""HEMM: NLVR2 (dev): the ``hemm-nlvr2`` benchmark definition."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext, RowError
from lmmprobe.data.benchmarks.hemm_common import (
    CITATION,
    METRIC,
    TRUE_FALSE,
    Row,
    Rows,
    at,
    hemm_sample,
    json_lines,
    loader_confirmed,
    need_root,
    open_copy,
    png_image,
    release_files,
)
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.schema import Sample

if TYPE_CHECKING:
    from PIL import Image

__all__ = ["NLVR2", "NLVR2_IMAGES"]

_NLVR2_DEV = "nlvr/nlvr2/data/dev.json"

NLVR2_IMAGES = "nlvr2_images"
"""Folder of the copy holding each row's left_url/right_url file under the URL's last part."""


def _nlvr2_rows(root: Path, split: str) -> Rows:
    yield from json_lines(root, _NLVR2_DEV)


def _url_file(root: Path, url: str) -> Path:
    return root / NLVR2_IMAGES / url.rstrip("/").split("/")[-1]


def _side_by_side(left: Path, right: Path) -> Image.Image:
    """HEMM's picture of a row: both images resized to their mean size, side by side on white.

    Each image is opened under the decoding cap (`open_image`), and the picture HEMM builds
    is checked against the same cap before anything is resized: a 1×60,000 and a 60,000×1
    image (a few hundred bytes) would otherwise make a 60,000×30,000 picture.

    Raises:
        ImageTooLargeError: An image over the cap, or the picture they make; naming both files.
        OSError: An image that cannot be read.
        DataError: A file that is not a regular file.

    """
    from PIL import Image

    from lmmprobe.schema.image import check_pixels, open_image

    with (
        open_copy(left) as fh_1,
        open_copy(right) as fh_2,
        open_image(fh_1, str(left)) as img_1,
        open_image(fh_2, str(right)) as img_2,
    ):
        size1, size2 = img_1.size, img_2.size
        avg = ((size1[0] + size2[0]) // 2, (size1[1] + size2[1]) // 2)
        shown = f"{left} ({size1[0]}×{size1[1]}) and {right} ({size2[0]}×{size2[1]})"
        check_pixels((2 * avg[0], avg[1]), f"made side by side from {shown}")
        a, b = img_1.resize(avg), img_2.resize(avg)
        image = Image.new("RGB", (2 * avg[0], avg[1]), (255, 255, 255))
        image.paste(a, (0, 0))
        image.paste(b, (avg[0], 0))
    return image


def _nlvr2_sample(row: Row, ctx: RowContext) -> Sample | None:
    from lmmprobe.schema.image import ImageTooLargeError

    root = need_root(ctx)
    left, right = _url_file(root, str(row["left_url"])), _url_file(root, str(row["right_url"]))
    # HEMM downloads both images and skips the row when either fails.
    if not (left.is_file() and right.is_file()):
        return None
    try:
        image = _side_by_side(left, right)
    except (ImageTooLargeError, DataError) as exc:
        raise RowError("left_url", str(exc)) from None
    except MemoryError:
        raise RowError("left_url", f"{left} and {right}: not enough memory for them") from None
    except OSError:
        return None  # HEMM's bare except skips an unreadable download the same way
    return hemm_sample(
        ctx,
        str(row.get("identifier", ctx.index)),
        [png_image(image)],
        str(row["sentence"]),
        TRUE_FALSE,
        str(row["label"]).lower(),
        prediction_filter="alpha",
    )


NLVR2 = benchmark(
    Benchmark(
        name="hemm-nlvr2",
        title="HEMM: NLVR2 (dev)",
        citation=CITATION,
        license="CC BY 4.0 (NLVR2 annotations); images from the web",
        formulation="open_ended",
        metric=METRIC,
        prompt=PromptTemplate(TRUE_FALSE, at("hemm/prompts/nlvr2prompt.py")),
        to_sample=_nlvr2_sample,
        split="dev",
        splits=("dev",),
        read_files=_nlvr2_rows,
        hemm="NLVR2",
        schema_confirmed=loader_confirmed("hemm/data/nlvr2.py"),
        notes=(
            "HEMM downloads left_url and right_url at run time; the local copy keeps each file "
            f"in {NLVR2_IMAGES}/ under the URL's last part (lmmprobe's layout; the fetch command "
            "makes it). Rows whose images are missing are skipped, as HEMM skips failed downloads.",
            "As HEMM: both images are resized to their mean size and put side by side on white; "
            "the output's letters, lowercased, are what is scored.",
        ),
        **release_files(
            'git clone https://github.com/lil-lab/nlvr.git "$LMMPROBE_DATA_DIR"/hemm-nlvr2/nlvr && '
            "cd \"$LMMPROBE_DATA_DIR\"/hemm-nlvr2 && jq -r '.left_url, .right_url' "
            f"nlvr/nlvr2/data/dev.json | wget -nc -q -P {NLVR2_IMAGES} -i -"
        ),
    )
)
