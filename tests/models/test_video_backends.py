"""A sample's video through the backends: frames as images in order, a video_url, refusals.

The OpenAI-compatible backend is driven through the console script against the loopback fake
server, which checks what arrives; the hf backend gets the frames as images on tiny-llava (the
native video path, which needs torchvision, is tests/models/test_hf_video.py).
"""

from __future__ import annotations

import base64
import io
import json
import math
from pathlib import Path

import pytest
from PIL import Image
from tests.console import lmmprobe_with_key
from tests.videos import frame_index, needs_av, write_video

from lmmprobe.schema import FramePolicy
from lmmprobe.testing.openai_server import FakeOpenAIServer


def _data(folder: Path, *, clip: bool = False) -> Path:
    write_video(folder / "a.mp4")  # 40 frames at 10 fps
    write_video(folder / "b.mp4", frames=30)
    rows = [
        {"id": "a", "video": "a.mp4"},
        {"id": "b", "video": {"path": "b.mp4", "start": 1} if clip else "b.mp4"},
    ]
    data = folder / "videos.jsonl"
    data.write_text(
        "".join(
            json.dumps({**r, "question": "Which way?", "choices": ["left", "right"], "answer": 0})
            + "\n"
            for r in rows
        ),
        encoding="utf-8",
    )
    return data


def _wanted(seconds: float, n: int) -> list[int]:
    """The indices of the frames `frames=n` shows of a `seconds`-long clip at 10 fps."""
    return [math.floor(t * 10) for t in FramePolicy(kind="frames", frames=n).times(0, seconds)]


def test_frames_reach_the_server_as_images_in_time_order(tmp_path: Path) -> None:
    needs_av()
    data = _data(tmp_path)
    with FakeOpenAIServer() as server:
        proc = lmmprobe_with_key(
            "run", "-d", data, "-m", f"openai:fake-vlm@{server.base_url}", "--frames", "5",
            "--db", tmp_path / "s.db", "-q",
        )  # fmt: skip
        received = server.received_images
    assert proc.returncode == 0, proc.stderr
    assert "0 errors" in proc.stdout
    assert len(received) == 10  # two requests, five frames each
    shown = [frame_index(Image.open(io.BytesIO(raw)).convert("RGB")) for raw in received]
    # Requests may arrive in either order; each one's frames arrive in time order.
    assert sorted([shown[:5], shown[5:]]) == sorted([_wanted(4, 5), _wanted(3, 5)])


def test_video_url_sends_the_video_once_to_a_server_that_takes_it(tmp_path: Path) -> None:
    needs_av()
    data = _data(tmp_path)
    with FakeOpenAIServer(video=True) as server:
        proc = lmmprobe_with_key(
            "run", "-d", data, "-m", f"openai:fake-vlm@{server.base_url},video=url",
            "--db", tmp_path / "s.db", "-q",
        )  # fmt: skip
        videos, images = server.received_videos, server.received_images
    assert proc.returncode == 0, proc.stderr
    assert images == []
    sent = sorted(base64.b64decode(url.partition(",")[2]) for url in videos)
    assert all(url.startswith("data:video/mp4;base64,") for url in videos)
    assert sent == sorted((tmp_path / n).read_bytes() for n in ("a.mp4", "b.mp4"))


def test_a_clip_cannot_go_as_a_video_url_and_says_so(tmp_path: Path) -> None:
    needs_av()
    data = _data(tmp_path, clip=True)
    with FakeOpenAIServer(video=True) as server:
        proc = lmmprobe_with_key(
            "run", "-d", data, "-m", f"openai:fake-vlm@{server.base_url},video=url",
            "--db", tmp_path / "s.db", "-q",
        )  # fmt: skip
        assert len(server.received_videos) == 1  # the whole video "a"; the clip of "b" not sent
    assert proc.returncode == 0, proc.stderr
    assert "1 refused before sending (unsupported_input)" in proc.stdout
    assert "sample b: a video_url sends the whole video" in proc.stdout


def test_a_model_taking_neither_images_nor_video_is_refused_before_any_call(
    tmp_path: Path,
) -> None:
    needs_av()
    data = _data(tmp_path)
    with FakeOpenAIServer() as server:
        proc = lmmprobe_with_key(
            "run", "-d", data, "-m", f"openai:fake-vlm@{server.base_url},images=false",
            "--db", tmp_path / "s.db", "-q",
        )  # fmt: skip
        assert server.requests_total == 0
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "takes neither images nor video, and 2 sample(s) ask about a video" in proc.stderr


def test_hf_gives_the_frames_as_images_to_a_model_without_video_input(tmp_path: Path) -> None:
    needs_av()
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from lmmprobe.data import load_source
    from lmmprobe.data.video import frame_policy
    from lmmprobe.formulate import formulate
    from lmmprobe.models import load_model
    from lmmprobe.models.tiny import tiny_model_path

    model = load_model(f"hf:{tiny_model_path('llava')},device=cpu,dtype=float32")
    assert not model.capabilities.video and model.capabilities.images
    with frame_policy(FramePolicy.parse("frames=3")):
        sample = load_source(str(_data(tmp_path))).samples[0]
    request = formulate(sample)
    inputs = model.prompt_inputs(request)  # type: ignore[attr-defined]
    assert inputs["pixel_values"].shape[0] == 3  # one picture per frame
    assert model.render(request).count("<image>") == 3  # type: ignore[attr-defined]
    (answer,) = model.generate([request])  # type: ignore[attr-defined]
    assert answer.ok


def test_hf_video_option_takes_auto_or_frames(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from lmmprobe.models import load_model
    from lmmprobe.models.tiny import tiny_model_path

    path = tiny_model_path("llava", cache_dir=tmp_path)
    auto = load_model(f"hf:{path},device=cpu")
    frames = load_model(f"hf:{path},device=cpu,video=frames")
    # An image model gets frames either way, so both specs send the same prompts.
    assert auto.identity == frames.identity and not frames.capabilities.video
    with pytest.raises(ValueError, match="hf backend: video=url: must be auto or frames"):
        load_model(f"hf:{path},video=url")
