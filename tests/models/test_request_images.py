"""A sample's images are bounded, and a picture listed again is decoded once (issue 34,
re-test 6 #22).

One 2 KB JSONL row naming the same 4000x4000 PNG (40 KB, 16 MP, under the 40 MP cap) 100
times took 28.6 s for one request through the openai backend: every listing was decoded and
downscaled again, and nothing bounded how many images (or pixels) one sample shows.
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageFile
from tests.console import lmmprobe

pytest.importorskip("openai")

from lmmprobe import RunSpec
from lmmprobe.models import load_model
from lmmprobe.models._images import images_problem
from lmmprobe.models.base import internal_error
from lmmprobe.run import run_model
from lmmprobe.schema import ImageRef, Sample
from lmmprobe.store import Store
from lmmprobe.testing import FakeOpenAIServer


def _big(tmp_path: Path) -> Path:
    path = tmp_path / "big.png"
    Image.new("RGB", (4000, 4000), "red").save(path)  # 16 MP, a small file
    return path


def _row_file(tmp_path: Path, images: list[str]) -> Path:
    path = tmp_path / "rows.jsonl"
    row = {"id": "m0", "question": "q?", "choices": ["a", "b"], "answer": 0, "images": images}
    ok = {"id": "ok", "question": "q?", "choices": ["a", "b"], "answer": 0, "images": []}
    path.write_text(json.dumps(row) + "\n" + json.dumps(ok) + "\n")
    return path


@pytest.mark.parametrize(
    ("listing", "says"),
    [
        (
            lambda big, small: [big] * 100,
            "rows.jsonl:1: images: the first 26 of its 100 images hold 416 MP together (a "
            "repeated one counted each time), over the 400 MP a sample may show",
        ),
        (
            lambda big, small: [small] * 1001,
            "rows.jsonl:1: images: 1,001 images; a sample may list at most 1,000",
        ),
    ],
    ids=["pixels", "count"],
)
def test_a_row_listing_more_images_than_a_sample_may_show_is_that_rows_problem(
    tmp_path: Path, listing: Any, says: str
) -> None:
    small = tmp_path / "small.png"
    Image.new("RGB", (8, 8), "blue").save(small)
    rows = _row_file(tmp_path, listing(str(_big(tmp_path)), str(small)))
    done = lmmprobe("run", "-m", "first", "--data", rows, "--db", tmp_path / "db.sqlite")
    assert done.returncode == 0, done.stderr
    problems = [line for line in (done.stdout + done.stderr).splitlines() if "rows.jsonl:1" in line]
    assert len(problems) == 1 and says in problems[0], done.stdout + done.stderr


def _count_decodes(monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]) -> list[int]:
    """Count Pillow's decodes of pictures of `size` (a spy on the library, not on lmmprobe)."""
    calls: list[int] = []
    original = ImageFile.ImageFile.load

    def load(self: ImageFile.ImageFile) -> Any:
        if self.size == size and self._im is None:
            calls.append(1)
        return original(self)

    monkeypatch.setattr(ImageFile.ImageFile, "load", load)
    return calls


def test_a_picture_listed_again_is_decoded_once_per_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = _big(tmp_path)
    sample = Sample(
        id="s", images=[ImageRef.from_path(big) for _ in range(20)], question="q?",
        choices=["a", "b"], answer=0,
    )  # fmt: skip
    decodes = _count_decodes(monkeypatch, (4000, 4000))
    with FakeOpenAIServer() as server:
        model = load_model(f"openai:vlm@{server.base_url}")
        with Store(tmp_path / "db") as store:
            out = run_model("m", model, [sample], RunSpec(models=["m"]), store)
        assert server.requests_total == 1
    assert out.scores[0].error_type is None
    assert len(decodes) == 1  # twenty listings, one decode


def test_a_request_over_the_bound_is_that_samples_error_before_any_decode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A source that does not check its rows' images (an in-memory sample here): the backend
    # refuses the request from the images' headers.
    big = _big(tmp_path)
    sample = Sample(
        id="s", images=[ImageRef.from_path(big) for _ in range(30)], question="q?",
        choices=["a", "b"], answer=0,
    )  # fmt: skip
    decodes = _count_decodes(monkeypatch, (4000, 4000))
    with FakeOpenAIServer() as server:
        model = load_model(f"openai:vlm@{server.base_url}")
        with Store(tmp_path / "db") as store:
            out = run_model("m", model, [sample], RunSpec(models=["m"]), store)
        assert server.requests_total == 0
    assert out.scores[0].error_type == "unsupported_input"
    assert decodes == []


def test_images_problem_counts_each_listing_and_reads_each_picture_once(tmp_path: Path) -> None:
    big = ImageRef.from_path(_big(tmp_path))
    assert images_problem([big] * 25) is None  # 400 MP: at the bound
    problem = images_problem([big] * 26)
    assert problem is not None and problem.startswith("its 26 images hold 416 MP together")
    tiny = ImageRef.from_pil(Image.new("RGB", (2, 2)))
    assert images_problem([tiny] * 1000) is None
    problem = images_problem([tiny] * 1001)
    assert problem is not None and problem.startswith("1,001 images")


def _padded_png(path: Path, extra: int) -> Path:
    """A valid 1x1 PNG with a private chunk of `extra` (whole MiB) zeros, written sparse."""
    buf = io.BytesIO()
    Image.new("RGB", (1, 1), "red").save(buf, "PNG")
    png = buf.getvalue()
    crc, zeros = zlib.crc32(b"prVt"), bytes(1 << 20)
    for _ in range(extra >> 20):
        crc = zlib.crc32(zeros, crc)
    with path.open("wb") as f:
        f.write(png[:33] + struct.pack(">I", extra) + b"prVt")
        f.seek(33 + 8 + extra)  # zeros that cost nothing on disk
        f.write(struct.pack(">I", crc) + png[33:])
    return path


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (
            20 << 20,
            "rows.jsonl:1: images[0]: image fat.png: the file is {:,} bytes for a picture "
            "of 1 pixel (at most 8 bytes a pixel and 16 MiB more): it carries data that is not "
            "the picture",
        ),
        (
            3 << 30,
            "rows.jsonl:1: images[0]: image fat.png: the file is {:,} bytes, over the "
            "176,777,216 an image within the 40 MP decoding limit may take",
        ),
    ],
    ids=["for-its-pixels", "for-any-picture"],
)
def test_an_image_file_larger_than_its_picture_may_be_is_that_rows_problem(
    tmp_path: Path, extra: int, says: str
) -> None:
    # Re-test 7 #7: a 1x1 PNG carrying a 50 MB chunk, listed 20 times, passed every check
    # and built a 1.3 GB request ("MemoryError:"); a sparse file claiming 3 GiB took 6.4 GB
    # in the load check. Now the file's size is bounded by its pixels, refused unread.
    _padded_png(tmp_path / "fat.png", extra)
    rows = _row_file(tmp_path, ["fat.png"] * 20)
    done = lmmprobe("run", "-m", "first", "--data", rows, "--db", tmp_path / "db.sqlite")
    assert done.returncode == 0, done.stderr
    problems = [line for line in (done.stdout + done.stderr).splitlines() if "rows.jsonl:1" in line]
    size = (tmp_path / "fat.png").stat().st_size
    assert len(problems) == 1 and says.format(size) in problems[0], done.stdout + done.stderr


def test_a_request_whose_files_are_too_large_together_is_that_samples_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With a 1,000-pixel cap a sample may read 4 x 10,000 bytes and 16 MiB: two 1x1 pictures
    # in 10 MB files each fit alone (8 bytes a pixel and 16 MiB) and not together. One of them
    # listed twice is one file, read once: it fits (re-test 7 #7).
    monkeypatch.setenv("LMMPROBE_MAX_IMAGE_PIXELS", "1000")
    fat = ImageRef.from_path(_padded_png(tmp_path / "fat.png", 10 << 20))
    other = ImageRef.from_path(_padded_png(tmp_path / "other.png", 10 << 20))
    assert images_problem([fat]) is None
    assert images_problem([fat, fat, fat]) is None
    problem = images_problem([fat, fat, other])
    assert problem is not None and problem.startswith(
        f"2 image files among its 3 images are {2 * Path(fat.path or '').stat().st_size:,} "
        "bytes together (a file listed again counted once), over the 16,817,216 a sample may read"
    )
    sample = Sample(id="s", images=[fat, other], question="q?", choices=["a", "b"], answer=0)
    with FakeOpenAIServer() as server:
        model = load_model(f"openai:vlm@{server.base_url}")
        with Store(tmp_path / "db") as store:
            out = run_model("m", model, [sample], RunSpec(models=["m"]), store)
        assert server.requests_total == 0
    assert out.scores[0].error_type == "unsupported_input"


def test_an_out_of_memory_error_says_what_ran_out() -> None:
    assert internal_error(MemoryError()).message == (
        "MemoryError: out of memory building or reading this request"
    )
    assert internal_error(MemoryError("no room")).message == "MemoryError: no room"


def test_a_request_image_on_a_kernel_filesystem_is_that_samples_error(tmp_path: Path) -> None:
    # Re-test 7 #8: a benchmark copy whose image links to /proc/kmsg (regular, size 0) hung the
    # request's header read forever when run as root; sources that do not check their rows'
    # images meet it here.
    if not os.access("/proc/kmsg", os.R_OK):
        pytest.skip("/proc/kmsg is not readable here (it blocks only for a reader allowed to)")
    (tmp_path / "km.png").symlink_to("/proc/kmsg")
    ref = ImageRef.from_path(tmp_path / "km.png")
    with pytest.raises(OSError, match=r"km\.png: a kernel file, not a regular file"):
        images_problem([ref])


def _fat_rows(tmp_path: Path, extra: int, listed: int) -> Path:
    """Re-test 7 #7's shape: a 1x1 PNG carrying `extra` bytes, listed `listed` times in a row."""
    _padded_png(tmp_path / "fat.png", extra)
    return _row_file(tmp_path, ["fat.png"] * listed)


def _problems(done: Any, sample: str) -> list[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if sample in line]


def test_a_file_listed_again_is_read_once_and_a_request_past_what_it_may_carry_is_not_sent(
    tmp_path: Path,
) -> None:
    # Re-test 7 #7: a 15 MB 1x1 PNG (within the 16 MiB a file may carry besides its pixels)
    # listed 100 times passed the 1.6 GB a sample may read, each listing counted, and the
    # request ended in MemoryError at 1.79 GB building 2 GB of base64. Listed 110 times it was
    # refused as 1.7 GB read. The file is one reference, read once (15 MB); what the request
    # would carry (each listing, as base64) is over the 50,000,000 bytes it may, so the sample
    # is refused before anything is encoded or sent, and the other sample goes on.
    rows = _fat_rows(tmp_path, 15 << 20, 110)
    size = (tmp_path / "fat.png").stat().st_size
    as_sent = 110 * (len("data:image/png;base64,") + 4 * ((size + 2) // 3))
    with FakeOpenAIServer() as server:
        done = lmmprobe(
            "run", "-m", f"openai:vlm@{server.base_url}", "--data", rows,
            "--db", tmp_path / "db.sqlite", OPENAI_API_KEY="test-key",
        )  # fmt: skip
        assert server.requests_total == 1  # the other sample only
        assert server.received_images == []
    out = done.stdout + done.stderr
    assert "rows.jsonl:1" not in out, out  # within what a sample may read
    problems = _problems(done, "sample m0")
    assert len(problems) == 1, out
    assert f"unsupported_input x1: sample m0: its 110 images are {as_sent:,} bytes" in problems[0]
    exported = lmmprobe("export", "latest", "--db", tmp_path / "db.sqlite")
    errors = {
        row["sample_id"]: row["error_message"]
        for row in map(json.loads, exported.stdout.splitlines())
    }
    assert errors == {
        "m0": f"sample m0: its 110 images are {as_sent:,} bytes as sent, over the 50,000,000 "
        "one request may carry (max_request_image_bytes=50000000; each listing of a picture "
        "is sent, base64-encoded): list fewer or smaller images, or raise "
        "max_request_image_bytes for a server that takes more",
        "ok": None,
    }


def test_a_request_image_cap_is_an_option_and_a_repeated_picture_is_sent_each_time(
    tmp_path: Path,
) -> None:
    rows = _fat_rows(tmp_path, 1 << 20, 5)
    (tmp_path / "rows.jsonl").write_text(
        json.dumps(
            {"id": "m0", "question": "q?", "choices": ["a", "b"], "answer": 0,
             "images": ["fat.png", "blue.png", "fat.png", "fat.png", "blue.png"]}
        ) + "\n"
    )  # fmt: skip
    Image.new("RGB", (4, 4), "blue").save(tmp_path / "blue.png")
    fat, blue = ((tmp_path / name).read_bytes() for name in ("fat.png", "blue.png"))
    with FakeOpenAIServer() as server:
        sent = lmmprobe(
            "run", "-m", f"openai:vlm@{server.base_url}", "--data", rows,
            "--db", tmp_path / "db.sqlite", OPENAI_API_KEY="test-key",
        )  # fmt: skip
        assert sent.returncode == 0, sent.stdout + sent.stderr
        assert server.requests_total == 1
        sent_raw = [fat, blue, fat, fat, blue]
        assert server.received_images == sent_raw  # five, in order
        server.reset_stats()
        refused = lmmprobe(
            "run", "-m", f"openai:vlm@{server.base_url},max_request_image_bytes=4000000",
            "--data", rows, "--db", tmp_path / "db2.sqlite", OPENAI_API_KEY="test-key",
        )  # fmt: skip
        assert server.requests_total == 0  # nothing sent, nothing paid
    problems = _problems(refused, "sample m0")
    assert len(problems) == 1, refused.stdout + refused.stderr
    as_sent = sum(len("data:image/png;base64,") + 4 * ((len(raw) + 2) // 3) for raw in sent_raw)
    wanted = f"sample m0: its 5 images are {as_sent:,} bytes as sent, over the 4,000,000"
    assert wanted in problems[0]


def test_a_batch_holds_at_most_max_concurrency_request_bodies_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 34: each request's body (its images base64-encoded, up to max_request_image_bytes,
    # 50 MB) was built before the request waited for a slot, so a batch of N held N bodies at
    # once whatever max_concurrency said. Now a body is built once its slot is held and dropped
    # with it: the k-th body is built only after k - 2 requests reached the server (and were
    # answered), with 2 in flight at most. The builder is the real one, counted on its way in.
    import asyncio

    from lmmprobe.formulate import formulate
    from lmmprobe.models import openai_api

    samples = []
    for i in range(8):
        path = tmp_path / f"{i}.png"
        Image.new("RGB", (8, 8), (30 * i, 0, 0)).save(path)
        samples.append(
            Sample(id=f"s{i}", images=[ImageRef.from_path(path)], question="q?",
                   choices=["a", "b"], answer=0)
        )  # fmt: skip
    requests = [formulate(s) for s in samples]
    for r in requests:
        r.key = r.sample_id
    arrived_at_build: list[int] = []
    build = openai_api.data_urls
    with FakeOpenAIServer(latency=0.05) as server:

        def counted(*args: Any, **kwargs: Any) -> dict[str, str]:
            arrived_at_build.append(server.requests_total)
            return build(*args, **kwargs)

        monkeypatch.setattr(openai_api, "data_urls", counted)
        model = load_model(f"openai:vlm@{server.base_url},max_concurrency=2")

        async def go() -> list[Any]:
            try:
                return await model.agenerate(requests)  # type: ignore[attr-defined,no-any-return]
            finally:
                await model.aclose()  # type: ignore[attr-defined]

        responses = asyncio.run(go())
        assert server.requests_total == 8
        assert server.max_in_flight <= 2
    assert [r.error for r in responses] == [None] * 8
    assert len(arrived_at_build) == 8  # one body each, none built twice
    ahead = [k - arrived for k, arrived in enumerate(arrived_at_build, 1)]
    assert max(ahead) <= 2, arrived_at_build  # before: [0] * 8, eight bodies alive at once


def test_a_sample_refused_before_sending_is_not_counted_as_sent(tmp_path: Path) -> None:
    """The run's line said "2 sent" when the server got 1 request: a sample whose images are
    over what a request may carry is refused by the backend before anything leaves, yet was
    counted among those sent. Now its error says it never left, and the line, results.json and
    the report count it apart; what they call sent is what the server got, run after run."""
    rows = _fat_rows(tmp_path, 1 << 20, 5)
    model = "openai:vlm@{},max_request_image_bytes=4000000"
    out = tmp_path / "o"
    with FakeOpenAIServer() as server:
        runs = []
        for _ in range(2):  # the refused sample is asked again on resume, and refused again
            done = lmmprobe(
                "run", "-m", model.format(server.base_url), "--data", rows,
                "--db", tmp_path / "db.sqlite", "--out", out, OPENAI_API_KEY="test-key",
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
            runs.append(done.stdout)
        assert server.requests_total == 1  # the other sample, once
    first = re.search(r": 2 requests, 0 from the store, (\d+) sent, (.*?), 1 errors", runs[0])
    assert first is not None, runs[0]
    assert int(first[1]) == server.requests_total
    assert first[2] == "1 refused before sending (unsupported_input)"
    assert ": 2 requests, 1 from the store, 0 sent, 1 refused before sending" in runs[1]
    (model_results,) = json.loads((out / "results.json").read_text())["models"].values()
    stats = model_results["stats"]
    assert (stats["called"], stats["not_sent"], stats["errors"]) == (0, 1, 1)  # the re-run's
    report = (out / "results.md").read_text()
    assert "1 request(s) refused before sending for what they hold" in report
