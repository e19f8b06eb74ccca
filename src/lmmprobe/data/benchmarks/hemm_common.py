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
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks._images import HUB_PATH
from lmmprobe.data.benchmarks.base import RowContext, RowError
from lmmprobe.data.files import check_csv, open_regular, read_regular
from lmmprobe.data.jsonl import MAX_LINE, json_document
from lmmprobe.data.rows import (
    MAX_NESTING,
    check_image,
    nesting_reason,
    outside_folder,
    too_deep,
)
from lmmprobe.schema import YES_NO_READING, ImageRef, Sample

if TYPE_CHECKING:
    from PIL import Image

HEMM_REPO = "pliang279/HEMM"
HEMM_COMMIT = "612fc2ac433082a231f6d4f52785cf27bfef06eb"
CITATION = (
    "Liang et al. 2024, HEMM: Holistic Evaluation of Multimodal Foundation Models. arXiv:2407.03418"
)
METRIC = "hemm_bart_score"
"""The run metric of every HEMM text dataset (`lmmprobe.metrics.builtin.hemm_bart`)."""

YES_NO_NOTE = (
    "accuracy is lmmprobe's (HEMM scores these items by BARTScore only): an answer is right when "
    'what it says by lmmprobe\'s yes/no reading is the gold ("Yes, it is." says yes; an answer '
    "saying neither, both or that it cannot tell is wrong); hemm_bart_score scores the answer's "
    "own text, as HEMM does."
)
"""The note of the datasets whose gold is yes or no (`hemm_sample`'s ``yes_no``)."""

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
    yes_no: bool = False,
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
        yes_no: The reference is ``yes`` or ``no`` (IRFL, Winoground, Hateful Memes, NY
            Cartoon): lmmprobe's ``accuracy`` reads what the answer says (`YES_NO_READING`);
            HEMM's BARTScore still scores the answer's text against the reference.
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
    if yes_no:
        # HEMM has no accuracy of its own (BARTScore only): the reading is lmmprobe's.
        metadata[YES_NO_READING] = True
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
    from lmmprobe.schema.image import open_image, unreadable_reason

    try:
        with open_image(io.BytesIO(data), field) as im:
            im.load()
            image = im.convert("RGB") if convert_rgb or im.mode not in ("RGB", "L", "CMYK") else im
            buffer = io.BytesIO()
            image.save(buffer, format="JPEG")
    except RowError:
        raise
    except Exception as exc:
        raise RowError(field, f"unreadable image data: {unreadable_reason(exc)}") from exc
    return ImageRef.from_base64(base64.b64encode(buffer.getvalue()).decode("ascii"))


def image_bytes(value: Any, field: str, root: Path | None) -> bytes:
    """The bytes of a hub ``Image`` value read undecoded (``{"bytes": ..., "path": ...}``).

    A value without bytes names a file, inside the dataset's folder `root` as written (an
    absolute path or one whose ``..`` climbs out is refused: a copy's row could otherwise have
    a run read, and send to a model, any picture on the machine; links inside the folder are
    its own, as for ``hf:`` folders); a row from the hub cache (no folder) names no file. The
    file is read as a regular file of at most `max_image_file_bytes` (no FIFO, device or
    oversized file, read whole otherwise).

    Args:
        value: The row's value.
        field: The row's field, for errors.
        root: The local copy's folder (`RowContext.root`); None for rows from the hub cache.

    Raises:
        RowError: For `field`: not an image value, a path outside the folder, or its file is
            missing, not a regular file, larger than an image may be or unreadable; one line
            naming the file.

    """
    if isinstance(value, Mapping):
        data = value.get("bytes")
        if data:
            return bytes(data)
        path = value.get("path")
        if isinstance(path, str) and path:
            return _image_file(_inside(path, root, field), field)
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    raise RowError(field, f"expected an image (datasets Image value), got {type(value).__name__}")


def _inside(value: str, root: Path | None, field: str) -> Path:
    """The file a row's image path names, when it is inside the dataset's folder (`image_bytes`).

    Raises:
        RowError: The path leaves the folder, or the row is from the hub cache (no folder).

    """
    # Judged as `lmmprobe.data.benchmarks._images.image_ref` judges a row's path.
    if root is None:
        raise RowError(field, HUB_PATH)
    escapes = outside_folder(value, f"the copy's folder {root}")
    if escapes:
        raise RowError(field, escapes)
    return root / value


def _image_file(path: Path, field: str) -> bytes:
    """The bytes of the image file `path` a hub row names, bounded (`image_bytes`)."""
    from lmmprobe.schema.image import max_image_file_bytes

    try:
        return read_regular(path, max_image_file_bytes(), what="an image")
    except DataError as exc:  # not a regular file, larger than the cap
        raise RowError(field, str(exc)) from None
    except OSError as exc:
        raise RowError(field, f"{path}: cannot be read ({exc.strerror or exc})") from None


_COPY = "a benchmark copy"
"""What `open_regular` names in its error for a file of a local copy."""


def open_copy(path: Path, relative: str | None = None) -> IO[bytes]:
    """`path`, a file of a local copy, opened for reading as bytes: a regular file only.

    A FIFO or a device there (``/dev/zero`` behind a link) would hang the read or never end;
    it is refused as what it is, not as missing.

    Args:
        path: The file.
        relative: HEMM's name for it inside the copy, for the "not found" error (None: the
            error names `path` only).

    Raises:
        DataError: Missing (naming the copy's file and where the fetch command is), not a regular
            file, or unreadable; one line naming `path`.

    """
    try:
        return open_regular(path, what=_COPY)
    except OSError as exc:
        raise _copy_error(path, relative, exc) from None


def _copy_error(path: Path, relative: str | None, exc: OSError) -> DataError:
    """The one-line `DataError` for a file of a local copy that cannot be opened (`open_copy`)."""
    if isinstance(exc, FileNotFoundError):
        if relative is None:
            return DataError(f"{path} not found")
        return DataError(
            # Not only HEMM's copies read through here (the video benchmarks' do too).
            f"{path} not found: the local copy lacks its file {relative} (see `lmmprobe "
            "data show` for the command that fetches it)"
        )
    # no permission, a folder on some systems, a loop of links
    return DataError(f"{path}: cannot be read ({exc.strerror or exc})")


def open_file(root: Path, relative: str) -> Path:
    """``root / relative``, which must be a regular file (else a `DataError` naming the path)."""
    path = root / relative
    open_copy(path, relative).close()
    return path


@contextmanager
def copy_image(path: Path, field: str) -> Iterator[Image.Image]:
    """The image file `path` of a local copy, opened (header only) for a reader to decode.

    A regular file only (`open_copy`), within the decoding cap (`open_image`: 40,000,000
    pixels unless ``$LMMPROBE_MAX_IMAGE_PIXELS`` says otherwise). Whatever fails, in opening
    it or in the reader's own decoding and drawing inside the ``with`` block (a truncated
    file, Pillow's decompression-bomb error, which is no `OSError`, a picture built too large
    for memory), is this row's problem, naming the file.

    Raises:
        RowError: For `field`, naming `path`; the other rows still load.

    """
    from PIL import UnidentifiedImageError

    from lmmprobe.schema.image import open_image

    try:
        with open_copy(path) as fh, open_image(fh, str(path)) as image:
            yield image
    except RowError:
        raise
    except UnidentifiedImageError:  # its message names the file object, not the file
        raise RowError(field, f"unreadable image {path}: not an image Pillow can read") from None
    except DataError as exc:  # not a regular file, no permission
        raise RowError(field, str(exc)) from None
    except MemoryError:
        raise RowError(field, f"{path}: not enough memory to decode or draw it") from None
    except Exception as exc:  # Pillow raises many types for a broken file
        why = str(exc) if str(path) in str(exc) else f"unreadable image {path}: {exc}"
        raise RowError(field, why[:500]) from None


def _text(fh: IO[bytes]) -> io.TextIOWrapper:
    return io.TextIOWrapper(fh, encoding="utf-8")


def _json_value(where: str, text: str) -> Any:
    """`text` decoded as JSON under the data loader's rules (`json_document`)."""
    return json_document(where, text)


MAX_JSON_FILE = 1 << 30
"""The largest JSON document of a local copy read whole (1 GiB): HEMM's largest (GQA's and
Visual Genome's question files) are some hundreds of MB, and Python holds a document as
several times its size in objects."""


def read_json(root: Path, relative: str) -> Any:
    """The JSON document at `relative` under `root`, at most `MAX_JSON_FILE` bytes.

    Raises:
        DataError: Missing, not a regular file, larger than `MAX_JSON_FILE`, not UTF-8, not
            JSON, or nested more than `MAX_NESTING` levels; one line naming the file.

    """
    path = root / relative
    try:
        raw = read_regular(path, MAX_JSON_FILE, what=_COPY)
    except OSError as exc:
        raise _copy_error(path, relative, exc) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not valid JSON ({exc})") from None
    del raw  # the text is held from here on, not both
    return _json_value(str(path), text)


def json_lines(root: Path, relative: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(PATH:LINE, object)`` for each non-empty line of a JSON-lines file.

    Raises:
        DataError: As `read_json`, or a line longer than `MAX_LINE` (64 MiB, the JSONL data
            loader's rule); naming the file and line.

    """
    path = root / relative
    with open_copy(path, relative) as fh:
        for n, line in _bounded_lines(_text(fh), path):
            if not line.strip():
                continue
            row = _json_value(f"{path}:{n}", line)
            if not isinstance(row, dict):
                raise DataError(f"{path}:{n}: expected a JSON object")
            yield f"{path}:{n}", row


def _bounded_lines(text: IO[str], path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of `text`, each line at most `MAX_LINE` characters.

    The JSONL data loader's rule: a line with no end in sight (a binary file, one huge
    value) is not read whole.

    Raises:
        DataError: A longer line, or bytes that are not UTF-8; naming the file and line.

    """
    n = 0
    try:
        while line := text.readline(MAX_LINE + 1):
            n += 1
            if len(line) > MAX_LINE:
                raise DataError(
                    f"{path}:{n}: a line longer than {MAX_LINE >> 20} MiB (at most "
                    f"{MAX_LINE >> 20} MiB a row)"
                )
            yield n, line
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}:{n + 1}: not UTF-8 text ({exc})") from None


def text_lines(root: Path, relative: str) -> list[str]:
    """The file's lines with their line endings, as Python's ``readlines`` gives them.

    Raises:
        DataError: Missing, not a regular file, not UTF-8, or a line longer than `MAX_LINE`;
            one line naming the file (and line).

    """
    path = root / relative
    with open_copy(path, relative) as fh:
        return [line for _, line in _bounded_lines(_text(fh), path)]


def read_table(path: Path, relative: str | None = None) -> Any:
    """The CSV file `path` of a local copy as pandas reads it (``pd.read_csv``), bounded first.

    pandas holds the whole table and spends memory on each column: a 10 MB header of a
    million columns took gigabytes. So the file is first scanned with the prediction table
    readers' bounds (`check_csv`: a regular file, at most 16,384 columns, fields and lines
    at most 64 MiB, at most 5,000,000 cells), then read by pandas as HEMM reads it.

    Args:
        path: The file.
        relative: HEMM's name for it inside the copy, for the "not found" error.

    Raises:
        DataError: Missing, not a regular file, over a bound, not UTF-8, or a table pandas
            cannot read; one line naming the file.

    """
    import pandas as pd  # type: ignore[import-untyped]

    with open_copy(path, relative) as fh:
        check_csv(path, fh)
        try:
            return pd.read_csv(fh)
        except MemoryError:
            raise DataError(f"{path}: not enough memory to read this table") from None
        except (ValueError, UnicodeDecodeError) as exc:  # pandas' ParserError, EmptyDataError
            why = " ".join(str(exc).split())
            raise DataError(f"{path}: not a readable CSV table ({why})"[:500]) from None


def python_literal(where: str, line: str) -> Any:
    """``ast.literal_eval`` of `line`, as HEMM reads it, its nesting bounded first (`MAX_NESTING`).

    Python's parser is recursive: a line of 200,000 minus signs stops it with a MemoryError,
    ``1+1+...`` with a RecursionError. VCR's lines are JSON, so a line is first decoded as JSON
    (not recursive past the limit it checks) and measured; a line that is not JSON is measured
    by its tokens. Either way the value is then what ``ast.literal_eval`` makes of the line, as
    in HEMM.

    Raises:
        DataError: Not a Python literal, or nested more than `MAX_NESTING` levels; one line
            naming `where` (``FILE:LINE``).

    """
    import ast
    import json

    try:
        deep = too_deep(json.loads(line))
    except RecursionError:
        raise DataError(f"{where}: {nesting_reason()}") from None
    except ValueError:  # not JSON (a Python literal, single quotes): measured by its tokens
        deep = None
        _check_tokens(where, line)
    if deep is not None:
        raise DataError(f"{where}: {deep + ': ' if deep else ''}{nesting_reason()}")
    try:
        row = ast.literal_eval(line)
    except (ValueError, SyntaxError) as exc:
        raise DataError(f"{where}: not a Python/JSON literal ({exc})") from None
    deep = too_deep(row)
    if deep is not None:
        raise DataError(f"{where}: {deep + ': ' if deep else ''}{nesting_reason()}")
    return row


def _check_tokens(where: str, line: str) -> None:
    """Refuse a line whose expression could nest more than `MAX_NESTING` levels.

    Each open bracket is a level, and so is each operator since the last ``,`` or ``:`` inside
    it (``-1`` is one, ``1+1+1`` two): an upper bound on the depth of the tree Python's parser
    builds, read from the tokens (`tokenize`, not recursive).
    """
    import tokenize

    levels = [0]  # per open bracket (and the line itself): operators since its last separator
    try:
        for token in tokenize.generate_tokens(io.StringIO(line).readline):
            if token.type != tokenize.OP:
                continue
            if token.string in "([{":
                levels.append(0)
            elif token.string in ")]}":
                if len(levels) > 1:
                    levels.pop()
            elif token.string in ",:":
                levels[-1] = 0
            else:
                levels[-1] += 1
            if len(levels) + sum(levels) > MAX_NESTING + 1:
                raise DataError(f"{where}: {nesting_reason()}")
    except (tokenize.TokenError, SyntaxError) as exc:
        raise DataError(f"{where}: not a Python/JSON literal ({exc})") from None


def read_row_json(path: Path, field: str, cap: int = MAX_LINE) -> Any:
    """The JSON file of one row (VCR's metadata, MM-IMDb's annotation), as `read_json` reads it.

    Args:
        path: The file.
        field: The row's field that names it, for errors.
        cap: The most bytes it may hold: by default `MAX_LINE`, as a line of the JSONL loader
            (a row's file is a row); a reader whose values cost more than their bytes (VCR's
            outlines: a list per point) gives less.

    Raises:
        RowError: For `field`: the file is missing, not a regular file, larger than `cap`,
            not JSON, or nested too deep; the row is refused, the others still load.

    """
    try:
        text = read_regular(path, cap, what=_COPY).decode("utf-8")
        return _json_value(str(path), text)
    except UnicodeDecodeError as exc:
        raise RowError(field, f"{path}: not UTF-8 text ({exc})") from None
    except FileNotFoundError:
        raise RowError(field, f"{path} not found") from None
    except OSError as exc:
        raise RowError(field, f"{path}: cannot be read ({exc.strerror or exc})") from None
    except DataError as exc:
        raise RowError(field, str(exc)) from None


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


_SCALARS = frozenset(
    {
        "INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "STRING", "BINSTRING",
        "SHORT_BINSTRING", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8", "NONE",
        "NEWTRUE", "NEWFALSE", "UNICODE", "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8",
        "FLOAT", "BINFLOAT",
    }
)  # fmt: skip
"""Opcodes that push one value holding nothing (a number, a string, None)."""
_EMPTY = frozenset({"EMPTY_LIST", "EMPTY_DICT", "EMPTY_SET", "EMPTY_TUPLE"})
_FROM_MARK = frozenset({"LIST", "TUPLE", "DICT", "FROZENSET"})
_TUPLE_N = {"TUPLE1": 1, "TUPLE2": 2, "TUPLE3": 3}
_ADD_FROM_MARK = frozenset({"APPENDS", "SETITEMS", "ADDITEMS"})
_NAMES_CODE = frozenset({"GLOBAL", "STACK_GLOBAL", "INST", "EXT1", "EXT2", "EXT4"})
"""Opcodes that name a class or function: the unpickler's `find_class` refuses them first."""
_PUT = frozenset({"PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"})
_GET = frozenset({"GET", "BINGET", "LONG_BINGET"})


def _memo_index(arg: object) -> int:
    """The memo index a ``PUT`` or ``GET`` opcode names (`pickletools` gives an int)."""
    if not isinstance(arg, int):
        raise ValueError(f"a memo index that is not a number: {arg!r}")
    return arg


def _check_plain_pickle(path: Path, data: bytes) -> None:
    """Refuse a pickle whose value would nest over `MAX_NESTING` levels, before it is loaded.

    Python's unpickler builds any nesting (it is not recursive), but hashing a tuple nested a
    million deep, as a dict key, overflows the C stack and kills the process; ``str()`` of a
    deep list stops at Python's recursion limit. So the opcodes are read first (the standard
    library's `pickletools.genops`, which also checks each declared size against what the file
    holds) and the unpickler's stack is followed with each value's depth in place of the
    value. A list, dict or tuple used in two places (a memo ``GET``) is refused: it would make
    the depth of one place change with the other, and a value shared at every level holds
    exponentially many paths.

    Raises:
        DataError: Not a pickle, nested too deep, shares a container, or uses an opcode no
            plain-data pickle needs; one line naming `path`.

    """
    import pickletools

    limit = MAX_NESTING + 1  # a chain of this many containers holds the top level and 100 below
    stack: list[int] = []  # the depth of each value on the unpickler's stack (0: a scalar)
    marks: list[int] = []
    memo: dict[int, int] = {}

    def pop_mark() -> list[int]:
        at = marks.pop()
        items = stack[at:]
        del stack[at:]
        return items

    def push(depth: int) -> None:
        if depth > limit:
            raise DataError(f"{path}: {nesting_reason()}")
        stack.append(depth)

    try:
        for op, arg, pos in pickletools.genops(io.BytesIO(data)):
            name = op.name
            if name in _SCALARS:
                stack.append(0)
            elif name in _EMPTY:
                stack.append(1)
            elif name == "MARK":
                marks.append(len(stack))
            elif name in _FROM_MARK:
                push(1 + max(pop_mark(), default=0))
            elif name in _TUPLE_N:
                n = _TUPLE_N[name]
                items = stack[-n:]
                del stack[-n:]
                push(1 + max(items))
            elif name in _ADD_FROM_MARK:
                items = pop_mark()
                push(max(stack.pop(), 1 + max(items, default=0)))
            elif name in ("APPEND", "SETITEM"):
                items = [stack.pop() for _ in range(1 if name == "APPEND" else 2)]
                push(max(stack.pop(), 1 + max(items)))
            elif name in _PUT:
                memo[len(memo) if name == "MEMOIZE" else _memo_index(arg)] = stack[-1]
            elif name in _GET:
                depth = memo[_memo_index(arg)]
                if depth:
                    raise DataError(
                        f"{path}: not a plain-data pickle: a list, dict or tuple in two places "
                        f"(opcode {name} at byte {pos})"
                    )
                stack.append(0)
            elif name == "POP":
                stack.pop()
            elif name == "POP_MARK":
                pop_mark()
            elif name in _NAMES_CODE:
                return  # the unpickler refuses it, naming it, before it reads further
            elif name == "STOP":
                return
            elif name not in ("PROTO", "FRAME"):
                raise DataError(
                    f"{path}: not a plain-data pickle: opcode {name} at byte {pos} builds "
                    "something other than lists, dicts and strings"
                )
    except DataError:
        raise
    except (ValueError, IndexError, KeyError) as exc:  # genops: truncated; a stack underflow
        why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise DataError(f"{path}: not a plain-data pickle ({why})"[:500]) from None


def read_plain_pickle(path: Path) -> Any:
    """A pickle of lists, dicts and strings, read without running any code it could name.

    The file is read whole and unpickled from memory, so a size the pickle declares (a string
    of 2**40 bytes) is bounded by the file's: the unpickler finds the data truncated instead of
    reserving the declared size. Its value may nest at most `MAX_NESTING` levels, as a JSON
    row may, checked before it is built (`_check_plain_pickle`).

    Raises:
        DataError: The file is missing, not a regular file, not a pickle, names a class or
            function, builds something no plain pickle does (a key set on a list), or nests
            deeper than `MAX_NESTING`; one line naming the file.

    """
    with open_copy(path) as fh:
        data = fh.read()
    _check_plain_pickle(path, data)
    try:
        return _NoObjects(io.BytesIO(data)).load()
    except Exception as exc:  # it runs no code: every failure is the file's (TypeError ...)
        why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise DataError(f"{path}: not a plain-data pickle ({why})"[:500]) from None


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
