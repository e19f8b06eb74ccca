"""A load of many chunks keeps its first read's chunks and gives them again (issue 35).

`load_in_chunks` reads the data once; each chunk it read is kept in a spill (an anonymous
temporary file, `lmmprobe.data.spill.ChunkSpill`), and `StreamedLoad.chunks` gives those
chunks instead of parsing, validating and checking every row again. Here: every field of a
sample survives the spill; the chunks are the samples a plain read gives, as often as they
are asked; the source is read once (a file gone after the first read changes nothing);
where the spill cannot be written or read the source is read again as before, with the same
samples; a closed or copied load reads the source; memory holds a chunk, not the data.
"""

from __future__ import annotations

import base64
import copy
import io
import json
import math
import pickle
import random
import shutil
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from lmmprobe.data import (
    SOURCES,
    DataError,
    SampleStream,
    StreamedLoad,
    iter_source,
    load_in_chunks,
    load_source,
    sample_fingerprint,
    spill,
    streaming,
)
from lmmprobe.data.spill import ChunkSpill, SpillFull
from lmmprobe.schema import Sample
from lmmprobe.schema.benchmark import BenchmarkTag, PromptTemplate
from lmmprobe.schema.image import ImageRef
from lmmprobe.schema.sample import Turn
from lmmprobe.schema.video import VideoFrame, VideoRef

SIZE = 7
N = 30  # five chunks, the last of two samples


def _png_b64(color: tuple[int, int, int]) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), color).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _rows(folder: Path, n: int = N, *, note: str = "") -> Path:
    """`n` questions, every third with its own picture file, every fifth with a shared one."""
    folder.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (5, 5), (1, 2, 3)).save(folder / "shared.png")
    lines = []
    for i in range(n):
        images: list[str] = []
        if i % 3 == 0:
            Image.new("RGB", (6, 6), (i * 7 % 256, 9, 90)).save(folder / f"p{i}.png")
            images.append(f"p{i}.png")
        if i % 5 == 0:
            images.append("shared.png")
        row = {"id": f"q{i}", "images": images, "question": f"Which is {i}?",
               "choices": ["cat", "dog"], "answer": i % 2,
               "metadata": {"task": f"t{i % 3}", "i": i, "note": note}}  # fmt: skip
        lines.append(json.dumps(row) + "\n")
    path = folder / "rows.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _ids(load: StreamedLoad) -> list[list[str]]:
    return [[s.id for s in chunk] for chunk in load.chunks()]


def _plain_chunks(path: Path) -> list[list[Sample]]:
    samples = load_source(str(path)).samples
    return [samples[i : i + SIZE] for i in range(0, len(samples), SIZE)]


# --- every field of a sample comes back -------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)  # NaN is not equal to itself: checked apart below
    | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def _images(draw: st.DrawFn) -> ImageRef:
    kind = draw(st.sampled_from(["path", "b64", "recipe", "frame", "picture"]))
    if kind == "picture":  # an in-memory picture (a plugin source's), kept with its pixels
        return ImageRef.from_pil(Image.new("RGB", (3, 2), (draw(st.integers(0, 255)), 5, 6)))
    if kind == "path":  # with the hash the loader found, kept on the reference
        return ImageRef.from_path(draw(_text), content_hash="ab" * 32)
    if kind == "b64":
        return ImageRef(data_b64=_png_b64((draw(st.integers(0, 255)), 0, 0)))
    if kind == "recipe":
        return ImageRef(renderer="demo-shapes", recipe={"z": draw(_json), "a": [1, {"y": 2}]})
    return ImageRef.from_video_frame("clip.mp4", draw(st.floats(0, 100)), content_hash="cd" * 32)


@st.composite
def _samples(draw: st.DrawFn) -> Sample:
    formulation = draw(st.sampled_from(["single_choice", "true_false", "open_ended", "caption"]))
    choices = answer = None
    if formulation in ("single_choice", "true_false"):
        choices = draw(st.lists(_text, min_size=2, max_size=4))
        answer = draw(st.integers(0, len(choices) - 1))
    else:
        answer = draw(st.lists(_text, min_size=1, max_size=2))
    video = None
    if draw(st.booleans()):
        frames = [VideoFrame(time=t, sha256="ef" * 32) for t in draw(st.lists(st.floats(0, 9)))]
        video = VideoRef(path="clip.mp4", start=draw(st.none() | st.floats(0, 1)), end=5.0,
                         frames=frames, sampled_with="frames=8", decoder="pyav 14",
                         alternates={"frames=4": frames[:1]} if frames else None)  # fmt: skip
    return Sample(
        id=draw(_text),
        images=draw(st.lists(_images(), max_size=3)),
        question=draw(_text),
        choices=choices,
        answer=answer,
        formulation=formulation,
        context=draw(st.none() | _text),
        history=[Turn(role=r, content=c) for r, c in draw(
            st.lists(st.tuples(st.sampled_from(["user", "assistant"]), _text), max_size=2))],
        metadata=draw(st.dictionaries(_text, _json, max_size=4)),
        prompt=draw(st.none() | st.just(PromptTemplate("{question}\n{options}", source="x@1"))),
        benchmark=draw(st.none() | st.just(BenchmarkTag(name="mmbench", split="dev"))),
        video=video,
    )  # fmt: skip


@given(st.lists(st.lists(_samples(), max_size=4), min_size=1, max_size=3))
@settings(max_examples=60, deadline=None)
def test_every_field_of_every_sample_comes_back_from_the_spill(chunks: list[list[Sample]]) -> None:
    spill: ChunkSpill[Sample] = ChunkSpill()
    try:
        for chunk in chunks:
            spill.add(chunk)
        for i in reversed(range(len(chunks))):  # by index, in any order, as often as asked
            back = spill.get(i)
            assert back == chunks[i]
            assert [s.model_dump() for s in back] == [s.model_dump() for s in chunks[i]]
            assert list(map(sample_fingerprint, back)) == list(map(sample_fingerprint, chunks[i]))
        assert spill.get(0) == chunks[0]
    finally:
        spill.close()
    assert spill.closed


def test_a_value_not_equal_to_itself_keeps_its_fingerprint_through_the_spill() -> None:
    sample = Sample(id="a", question="q?", choices=["x", "y"], answer=0,
                    metadata={"score": math.nan, "inf": math.inf})  # fmt: skip
    spill: ChunkSpill[Sample] = ChunkSpill()
    with pytest.raises(IndexError):
        spill.get(0)
    spill.add([sample])
    (back,) = spill.get(0)
    spill.close()
    assert math.isnan(back.metadata["score"]) and back.metadata["inf"] == math.inf
    assert sample_fingerprint(back) == sample_fingerprint(sample)
    assert back.model_dump_json() == sample.model_dump_json()


# --- a load of many chunks -------------------------------------------------------------------


def test_the_kept_chunks_are_what_a_plain_read_gives_as_often_as_asked(tmp_path: Path) -> None:
    path = _rows(tmp_path)
    with load_in_chunks(str(path), size=SIZE) as load:
        assert isinstance(load, StreamedLoad) and load.count == N
        plain = _plain_chunks(path)
        assert list(load.chunks()) == plain
        assert list(load.chunks()) == plain  # once per model, then for the judges
        # Two readers at once (each at its own chunk) get each its own samples.
        first, second = load.chunks(), load.chunks()
        assert next(first) == plain[0] and next(second) == plain[0]
        assert next(second) == plain[1] and next(first) == plain[1]


_READ = [0]
"""Rows the ``countedjsonl`` source gave."""


def _counted(
    target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> SampleStream:
    inner = iter_source(str(target), strict=strict, limit=limit)

    def rows(stream: SampleStream) -> Iterator[Sample]:
        for sample in inner:
            _READ[0] += 1
            yield sample
        stream.invalid, stream.problems = inner.invalid, inner.problems

    return SampleStream(str(target), rows)


@pytest.fixture
def counted() -> Iterator[list[int]]:
    SOURCES.register("countedjsonl")(streaming(_counted))
    _READ[0] = 0
    try:
        yield _READ
    finally:
        SOURCES.unregister("countedjsonl")


def test_the_source_is_read_once_and_a_file_gone_after_it_changes_nothing(
    tmp_path: Path, counted: list[int]
) -> None:
    path = _rows(tmp_path)
    plain = _plain_chunks(path)
    load = load_in_chunks(f"countedjsonl:{path}", size=SIZE)
    assert isinstance(load, StreamedLoad)
    assert counted[0] == N
    path.unlink()  # nothing reads it again
    assert list(load.chunks()) == plain
    assert list(load.chunks()) == plain
    assert counted[0] == N
    load.close()
    # Closed, the load reads its source again, which is gone now: said, not a wrong answer.
    with pytest.raises(DataError, match="not found"):
        list(load.chunks())


def test_a_closed_or_copied_load_reads_its_source_again_and_still_refuses_a_change(
    tmp_path: Path, counted: list[int]
) -> None:
    path = _rows(tmp_path)
    plain = _plain_chunks(path)
    load = load_in_chunks(f"countedjsonl:{path}", size=SIZE)
    assert isinstance(load, StreamedLoad)
    for other in (copy.copy(load), copy.deepcopy(load), pickle.loads(pickle.dumps(load))):
        assert other == load  # the same figures: count, fingerprints, kinds, places
        counted[0] = 0
        assert list(other.chunks()) == plain
        assert counted[0] == N  # read from the source: an open file does not travel
    # The original still gives its kept chunks, reading nothing.
    counted[0] = 0
    assert list(load.chunks()) == plain and counted[0] == 0
    load.close()
    load.close()  # closing again does nothing
    assert list(load.chunks()) == plain and counted[0] == N
    path.write_text(path.read_text(encoding="utf-8").replace("Which is 9?", "Which is 9!"))
    with pytest.raises(DataError, match=r"changed while the run read it: samples 8-14 "):
        list(load.chunks())


def test_a_load_closed_while_its_chunks_are_read_reads_the_rest_from_the_source(
    tmp_path: Path, counted: list[int]
) -> None:
    path = _rows(tmp_path)
    plain = _plain_chunks(path)
    load = load_in_chunks(f"countedjsonl:{path}", size=SIZE)
    assert isinstance(load, StreamedLoad)
    got = []
    for chunk in load.chunks():
        got.append(chunk)
        if len(got) == 2:
            load.close()
    assert got == plain
    assert counted[0] == 2 * N  # the first read, then the source again for the rest


def test_without_a_temporary_folder_the_load_reads_its_source_again(
    tmp_path: Path, counted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _rows(tmp_path)
    plain = _plain_chunks(path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))
    load = load_in_chunks(f"countedjsonl:{path}", size=SIZE)
    plain_load = load_in_chunks(str(path), size=SIZE)
    assert isinstance(load, StreamedLoad) and isinstance(plain_load, StreamedLoad)
    assert load.chunk_fingerprints == plain_load.chunk_fingerprints
    assert list(load.chunks()) == plain
    assert counted[0] == 2 * N
    # As before the spill: a file changed since the first read is refused.
    path.write_text(path.read_text(encoding="utf-8").replace("Which is 20?", "Which is 20!"))
    with pytest.raises(DataError, match=r"changed while the run read it: samples 15-21 "):
        list(load.chunks())


class _Unpicklable:
    """A metadata value a plugin source might give: shown alike every time, never pickled."""

    def __str__(self) -> str:
        return "a value of its own"

    def __reduce__(self) -> Any:
        raise TypeError("cannot pickle this value")


_ODD_AT = 17


def _with_odd_value(
    target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> SampleStream:
    inner = iter_source(str(target), strict=strict, limit=limit)

    def rows(stream: SampleStream) -> Iterator[Sample]:
        for i, sample in enumerate(inner):
            _READ[0] += 1
            if i == _ODD_AT:  # in the third chunk: two were kept before it
                sample = sample.model_copy(update={"metadata": {"odd": _Unpicklable()}})
            yield sample
        stream.invalid, stream.problems = inner.invalid, inner.problems

    return SampleStream(str(target), rows)


def test_a_chunk_that_cannot_be_kept_drops_the_spill_and_the_source_is_read_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _rows(tmp_path)
    SOURCES.register("oddvalue")(streaming(_with_odd_value))
    _READ[0] = 0
    try:
        with caplog.at_level("DEBUG", logger="lmmprobe.data.base"):
            load = load_in_chunks(f"oddvalue:{path}", size=SIZE)
        assert isinstance(load, StreamedLoad)
        assert "could not keep a chunk (TypeError: cannot pickle this value)" in caplog.text
        chunks = list(load.chunks())
    finally:
        SOURCES.unregister("oddvalue")
    assert _READ[0] == 2 * N  # read again, as before there was a spill
    assert [[s.id for s in c] for c in chunks] == [[s.id for s in c] for c in _plain_chunks(path)]
    assert str(chunks[_ODD_AT // SIZE][_ODD_AT % SIZE].metadata["odd"]) == "a value of its own"


def test_a_load_of_many_chunks_holds_a_chunk_not_the_data(tmp_path: Path) -> None:
    path = _rows(tmp_path, 6_000, note="x" * 600)
    load_in_chunks(str(_rows(tmp_path / "warm", SIZE + 1)), size=SIZE)  # imports done
    tracemalloc.start()
    try:
        load = load_in_chunks(str(path), size=100)
        assert isinstance(load, StreamedLoad)
        seen = sum(len(chunk) for chunk in load.chunks())
        chunked = tracemalloc.get_traced_memory()[1]
        load.close()
        tracemalloc.reset_peak()
        whole = load_source(str(path)).samples
        held = tracemalloc.get_traced_memory()[1]
        del whole
    finally:
        tracemalloc.stop()
    assert seen == 6_000
    # Held whole, 6,000 samples of ~1 KiB; read and given again by chunk, 100 at a time.
    assert held > 6 * 2**20
    assert chunked < held / 5


def _pictures(
    target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> SampleStream:
    """The rows with a picture each made in memory (as a plugin or synth source gives them):
    64x64 noise, which no compression shrinks, the same for a row every time it is read."""
    inner = iter_source(str(target), strict=strict, limit=limit)

    def rows(stream: SampleStream) -> Iterator[Sample]:
        for i, sample in enumerate(inner):
            _READ[0] += 1
            noise = random.Random(i).randbytes(64 * 64 * 3)
            picture = ImageRef.from_pil(Image.frombytes("RGB", (64, 64), noise))
            yield sample.model_copy(update={"images": [picture]})
        stream.invalid, stream.problems = inner.invalid, inner.problems

    return SampleStream(str(target), rows)


@pytest.mark.parametrize("budget", [150_000, 1 << 30])
def test_a_spill_past_its_budget_is_dropped_and_the_source_read_again(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    budget: int,
) -> None:
    """Re-test 18: in-memory pictures were pickled into the spill with their pixels (a quarter
    of their raw size), so a large source of them filled the shared temporary folder. A chunk
    that would pass the budget (12 KB a sample here, 85 KB a chunk) drops the spill."""
    path = _rows(tmp_path)
    monkeypatch.setattr(spill, "MAX_SPILL_BYTES", budget)
    SOURCES.register("pictures")(streaming(_pictures))
    _READ[0] = 0
    try:
        with caplog.at_level("DEBUG", logger="lmmprobe.data.base"):
            load = load_in_chunks(f"pictures:{path}", size=SIZE)
        assert isinstance(load, StreamedLoad)
        kept = load.spill is not None
        chunks = list(load.chunks())
        load.close()
    finally:
        SOURCES.unregister("pictures")
    if budget < 1 << 20:
        assert not kept
        assert "could not keep a chunk (SpillFull: chunk 2 (" in caplog.text
        assert f"past its budget of {budget:,} bytes" in caplog.text
        assert _READ[0] == 2 * N  # read again, as before there was a spill
    else:  # within the budget: kept, and the source read once
        assert kept and "SpillFull" not in caplog.text and _READ[0] == N
    assert [[s.id for s in c] for c in chunks] == [[s.id for s in c] for c in _plain_chunks(path)]
    pixels = chunks[1][0].images[0].load().tobytes()
    assert pixels == random.Random(SIZE).randbytes(64 * 64 * 3)


def test_a_spill_writes_nothing_past_its_budget_nor_a_tenth_of_the_free_space() -> None:
    kept = ChunkSpill[bytes](budget=3_000)
    kept.add([b"a" * 10])
    with pytest.raises(SpillFull, match=r"chunk 2 \(\d[\d,]* bytes\) would take the spill past"):
        kept.add([random.Random(0).randbytes(4_000)])
    assert len(kept) == 1 and kept.get(0) == [b"a" * 10]
    kept.add([b"b"])  # a smaller chunk still fits
    assert kept.get(1) == [b"b"]
    kept.close()
    before = shutil.disk_usage(tempfile.gettempdir()).free
    whole = ChunkSpill[bytes]()
    after = shutil.disk_usage(tempfile.gettempdir()).free  # others write meanwhile: either
    assert whole.budget <= min(spill.MAX_SPILL_BYTES, max(before, after) // 10 + (1 << 20))
    whole.close()
