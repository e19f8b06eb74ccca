"""A sample's images are bounded, and a picture listed again is decoded once (issue 34,
re-test 6 #22).

One 2 KB JSONL row naming the same 4000x4000 PNG (40 KB, 16 MP, under the 40 MP cap) 100
times took 28.6 s for one request through the openai backend: every listing was decoded and
downscaled again, and nothing bounded how many images (or pixels) one sample shows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageFile
from tests.console import lmmprobe

pytest.importorskip("openai")

from lmmprobe import RunSpec
from lmmprobe.models import load_model
from lmmprobe.models._images import images_problem
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
