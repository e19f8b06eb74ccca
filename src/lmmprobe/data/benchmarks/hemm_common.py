"""What every HEMM dataset definition shares: the citation, sample building, file and image helpers.

HEMM (Liang et al., 2024, "HEMM: Holistic Evaluation of Multimodal Foundation Models",
arXiv:2407.03418) evaluates each dataset with one loader class (``hemm/data/*.py``) and one
prompt class (``hemm/prompts/*.py``) of its repository, pliang279/HEMM; the definitions in
``hemm_*.py`` read the same files at the same relative paths as those loaders, ask the same
prompt and keep the same ground truth, so ``--data hemm-NAME,path=FOLDER`` asks what HEMM asks
when its ``download_dir`` is FOLDER. Every model output is scored by BARTScore
(`lmmprobe.metrics.builtin.hemm_bart`).

A sample's whole user message is its ``prompt.template`` (the benchmark prompt style renders
it): HEMM's prompt text with every slot but the main one already filled (and its braces
doubled), the main one (the question, caption or statement) left as ``{question}``.
"""

from __future__ import annotations

import base64
import io
import pickle
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks.base import RowContext, RowError
from lmmprobe.data.rows import check_image
from lmmprobe.schema import ImageRef, Sample

HEMM_REPO = "pliang279/HEMM"
HEMM_COMMIT = "612fc2ac433082a231f6d4f52785cf27bfef06eb"
CITATION = (
    "Liang et al. 2024, HEMM: Holistic Evaluation of Multimodal Foundation Models. arXiv:2407.03418"
)
METRIC = "hemm_bart_score"
"""The run metric of every HEMM text dataset (`lmmprobe.metrics.builtin.hemm_bart`)."""

IMAGE_GENERATION = "an image-generation backend"
"""`Benchmark.needs` of the two datasets whose answer is an image (LNCOCO, MagicBrush)."""

MULTI_REF = "hemm_multi_ref"
"""Metadata key: HEMM passes this dataset's references as a list (scored one pair at a time,
best kept) rather than one string (scored in batches)."""

PREDICTION_FILTER = "hemm_prediction_filter"
"""Metadata key: how HEMM's loader rewrites the model output before scoring (``"alpha"``: NLVR2
keeps the letters of the lowercased output)."""

Row = Mapping[str, Any]
"""One row a file-based reader yields (a JSON object, a table row)."""
Rows = Iterator[tuple[str, Row]]
"""What a file-based reader yields: ``(where, row)`` pairs (see `Benchmark.read_files`)."""

# HEMM's prompt texts that several datasets share (hemm/prompts/*.py at HEMM_COMMIT), with
# {question} for the main slot; a prompt of one dataset lives in that dataset's file.
SHORT_ANSWER = (
    "Given an image and a question. Answer the question in a single word. "
    "Question: {question} Short Answer: "
)
PICTURE_OF = "A Picture of "
TRUE_FALSE = (
    "Given an image and the Question: {question}, Answer the question with only 'true' or "
    "'false'. Answer: "
)


def at(path: str) -> str:
    """``pliang279/HEMM PATH @ COMMIT``: where a prompt or loader comes from."""
    return f"{HEMM_REPO} {path} @ {HEMM_COMMIT}"


def loader_confirmed(path: str) -> str:
    """`Benchmark.schema_confirmed` for a layout read exactly as HEMM's loader at `path` reads it."""
    return f"HEMM's loader {at(path)}"


def escape(text: str) -> str:
    """`text` made literal inside a ``str.format`` template (braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def hemm_sample(
    ctx: RowContext,
    sid: str,
    images: Sequence[ImageRef],
    question: str,
    template: str,
    references: Sequence[str] | str,
    *,
    multi_ref: bool = False,
    prediction_filter: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Sample:
    """One open-ended HEMM sample.

    Args:
        ctx: The row's context (its benchmark gives the catalog task).
        sid: Identifier, unique within the dataset.
        images: The images HEMM gives the model (one for every HEMM dataset).
        question: The main slot's value (for prompts without a slot: the prompt itself).
        template: HEMM's prompt with ``{question}`` for the main slot and every other slot
            filled (see `escape`).
        references: HEMM's ground truth: one string, or the list it scores against.
        multi_ref: HEMM passes the references as a list (`MULTI_REF`).
        prediction_filter: How HEMM rewrites the output before scoring (`PREDICTION_FILTER`).
        extra: More metadata.

    Raises:
        RowError: No reference text (HEMM's ground truth is empty).

    """
    refs = [references] if isinstance(references, str) else [str(r) for r in references]
    if not refs:
        raise RowError("answer", "no reference answer")
    if not question:
        raise RowError("question", "empty")
    metadata: dict[str, Any] = {
        "task": ctx.benchmark.hemm,
        MULTI_REF: multi_ref,
    }
    if prediction_filter is not None:
        metadata[PREDICTION_FILTER] = prediction_filter
    if extra:
        metadata.update(extra)
    return Sample(
        id=sid,
        images=list(images),
        question=question,
        answer=refs,
        formulation="open_ended",
        metadata=metadata,
        # The row's own filled template, worded as the definition's prompt says.
        prompt=replace(ctx.benchmark.prompt, template=template),
    )


def need_root(ctx: RowContext) -> Path:
    """The local copy's folder, which file-based readers resolve HEMM's paths against."""
    if ctx.root is None:
        raise DataError(
            f"benchmark {ctx.benchmark.name} reads its images from a local copy; pass "
            f"path=FOLDER (fetch it with: {ctx.benchmark.fetch})"
        )
    return ctx.root


def file_image(root: Path, relative: str, field: str = "image") -> ImageRef:
    """The image file at `relative` under `root`, checked (missing or unreadable: `RowError`)."""
    return check_image(root, relative, field)


def png_image(image: Any) -> ImageRef:
    """A PIL image HEMM builds (resized, composed, drawn on) as an in-memory PNG `ImageRef`."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return ImageRef.from_base64(base64.b64encode(buffer.getvalue()).decode("ascii"))


def jpeg_image(data: bytes, field: str, *, convert_rgb: bool) -> ImageRef:
    """The image in `data` saved as JPEG with Pillow's defaults, as HEMM writes hub images.

    HEMM saves a hub dataset's image to ``current_image.jpg`` (Pillow picks JPEG from the
    name, quality 75) and gives the model that file, so the model sees the re-encoded image.

    Args:
        data: The hub row's image bytes.
        field: The row's field, for errors.
        convert_rgb: HEMM converts to RGB first (Winoground); elsewhere it saves the image as
            it is, which Pillow refuses for modes JPEG cannot hold (RGBA, P): those rows are
            converted to RGB here rather than failing as HEMM's loop would.

    Raises:
        RowError: The bytes are not an image Pillow can read.

    """
    from lmmprobe.schema.image import open_image

    try:
        with open_image(io.BytesIO(data), field) as im:
            im.load()
            image = im.convert("RGB") if convert_rgb or im.mode not in ("RGB", "L", "CMYK") else im
            buffer = io.BytesIO()
            image.save(buffer, format="JPEG")
    except RowError:
        raise
    except Exception as exc:
        raise RowError(field, f"unreadable image data: {exc}") from exc
    return ImageRef.from_base64(base64.b64encode(buffer.getvalue()).decode("ascii"))


def image_bytes(value: Any, field: str) -> bytes:
    """The bytes of a hub ``Image`` value read undecoded (``{"bytes": ..., "path": ...}``)."""
    if isinstance(value, Mapping):
        data = value.get("bytes")
        if data:
            return bytes(data)
        path = value.get("path")
        if isinstance(path, str) and path and Path(path).is_file():
            return Path(path).read_bytes()
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    raise RowError(field, f"expected an image (datasets Image value), got {type(value).__name__}")


def open_file(root: Path, relative: str) -> Path:
    """``root / relative``, which must exist (else a `DataError` naming the path and the fix)."""
    path = root / relative
    if not path.is_file():
        raise DataError(
            f"{path} not found: the local copy lacks HEMM's file {relative} (see `lmmprobe "
            "data show` for the command that fetches it)"
        )
    return path


def read_json(root: Path, relative: str) -> Any:
    """The JSON document at `relative` under `root` (`DataError` if missing or not JSON)."""
    import json

    path = open_file(root, relative)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not valid JSON ({exc})") from exc


def json_lines(root: Path, relative: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(PATH:LINE, object)`` for each non-empty line of a JSON-lines file."""
    import json

    path = open_file(root, relative)
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise DataError(f"{path}:{n}: not valid JSON ({exc})") from exc
            if not isinstance(row, dict):
                raise DataError(f"{path}:{n}: expected a JSON object")
            yield f"{path}:{n}", row


def text_lines(root: Path, relative: str) -> list[str]:
    """The file's lines with their line endings, as Python's ``readlines`` gives them."""
    path = open_file(root, relative)
    with path.open(encoding="utf-8") as f:
        return f.readlines()


def hemm_tenth(lines: list[str]) -> list[str]:
    """HEMM's evaluation subset of a table (DECIMER, Enrico): header dropped, shuffled, last tenth.

    The loaders call ``random.seed(0)``, drop the first line, ``random.shuffle`` the rest and
    keep ``lines[-len(lines) // 10:]`` (Python reads that as ``(-len) // 10``: the last
    ``ceil(len / 10)`` lines). ``random.Random(0)`` draws the same shuffle.
    """
    import random

    rows = lines[1:]
    random.Random(0).shuffle(rows)
    return rows[-len(rows) // 10 :]


class _NoObjects(pickle.Unpickler):
    """Unpickles plain data only: a pickle naming any class or function is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(
            f"refused to load {module}.{name}: a dataset pickle may hold only plain data"
        )


def read_plain_pickle(path: Path) -> Any:
    """A pickle of lists, dicts and strings, read without running any code it could name.

    Raises:
        DataError: The file is missing, not a pickle, or names a class or function.

    """
    if not path.is_file():
        raise DataError(f"{path} not found")
    try:
        with path.open("rb") as f:
            return _NoObjects(f).load()
    except (pickle.UnpicklingError, EOFError, ValueError) as exc:
        raise DataError(f"{path}: {exc}") from exc


def release_files(fetch: str) -> dict[str, Any]:
    """`Benchmark` fields of a dataset read from its release files, fetched by `fetch`."""
    return {"layout": "files", "fetch": fetch}


def fixed_sample(ctx: RowContext, sid: str, image: Any, prompt: str, gold: str) -> Sample:
    """A sample of a prompt without slots: the prompt is the whole message."""
    return hemm_sample(ctx, sid, [image], prompt, escape(prompt), gold)


def needs_generation(row: Row, ctx: RowContext) -> Sample:
    """The reader of a dataset whose answer is an image: it says so (`DataError`)."""
    raise DataError(
        f"benchmark {ctx.benchmark.name} needs {IMAGE_GENERATION}: its answer is an image, "
        "scored by CLIP-I against the reference image; lmmprobe's backends generate text"
    )
