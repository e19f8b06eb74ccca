"""A sample's video through the hf backend to models whose processor takes a video.

Tiny random-weight Qwen2-VL and LLaVA-OneVision checkpoints (`lmmprobe.models.tiny`) get the
sampled frames as one video: the processor's video tensor must be exactly those frames, in
time order, with as many video tokens in the prompt as that many frames make, and generation
must run on it. ``video=frames`` gives the same checkpoint the frames as images instead.

transformers' video processors need torchvision, which the CPU test machine lacks, so these
tests skip there (saying why) and run where torchvision is installed (the GPU machine); the
``cuda`` cases run only on a CUDA device (``-m gpu``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from tests.console import lmmprobe
from tests.videos import frame_index, needs_av, write_video

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip(
    "torchvision",
    reason="transformers' video processors (Qwen2-VL, LLaVA-OneVision) need torchvision",
)
needs_av()

import torch  # noqa: E402

from lmmprobe.data import load_source  # noqa: E402
from lmmprobe.data.video import frame_policy  # noqa: E402
from lmmprobe.formulate import formulate  # noqa: E402
from lmmprobe.models import load_model  # noqa: E402
from lmmprobe.models.tiny import tiny_model_path  # noqa: E402
from lmmprobe.schema import FormulateConfig, FramePolicy, Request  # noqa: E402

pytestmark = pytest.mark.usefixtures("hf_offline")

FPS = 10
DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=[
            pytest.mark.gpu,
            pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
        ],
    ),
]


def _data(folder: Path, frames: tuple[int, ...] = (40, 30)) -> Path:
    """One multiple-choice row per video; video i has ``frames[i]`` index-coded frames."""
    rows = []
    for i, n in enumerate(frames):
        write_video(folder / f"v{i}.mp4", frames=n, fps=FPS)
        rows.append({"id": f"v{i}", "video": f"v{i}.mp4", "question": "Which way?",
                     "choices": ["it moves to the left", "right"], "answer": 0})  # fmt: skip
    data = folder / "videos.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return data


def _requests(data: Path, policy: str, method: str = "generate") -> list[Request]:
    config = FormulateConfig(method=method)  # type: ignore[arg-type]
    with frame_policy(FramePolicy.parse(policy)):
        return [formulate(s, config=config) for s in load_source(str(data)).samples]


def _wanted(frames: int, n: int) -> list[int]:
    """The indices of the frames ``frames=n`` shows of a video of `frames` frames."""
    times = FramePolicy(kind="frames", frames=n).times(0, frames / FPS)
    return [math.floor(t * FPS) for t in times]


def _model(arch: str, device: str, tiny_cache: Path, **options: str) -> Any:
    path = tiny_model_path(arch, cache_dir=tiny_cache)
    extra = "".join(f",{k}={v}" for k, v in options.items())
    return load_model(f"hf:{path},device={device},dtype=float32{extra}")


def _video_tensor(model: Any, frames: list[Any]) -> torch.Tensor:
    """What the checkpoint's own video processor makes of `frames`, as one video."""
    out = model.processor.video_processor(
        videos=[frames], do_sample_frames=False, return_tensors="pt"
    )
    return out["pixel_values_videos"]


def _video_tokens(model: Any, inputs: Any) -> int:
    token = model.processor.video_token_id
    return int((inputs["input_ids"] == token).sum())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("arch", ["qwen2_vl", "llava_onevision"])
def test_the_processor_gets_the_sampled_frames_as_one_video_in_time_order(
    arch: str, device: str, tmp_path: Path, tiny_cache: Path
) -> None:
    model = _model(arch, device, tiny_cache)
    assert model.capabilities.video
    assert model.identity.options["video"] == "processor"
    request = _requests(_data(tmp_path, (40,)), "frames=5")[0]
    assert request.video_frames == 5
    frames = [ref.load().convert("RGB") for ref in request.images]
    assert [frame_index(f) for f in frames] == _wanted(40, 5)
    text = model.render(request)
    assert text.count("<image>") == 0 and "<|image_pad|>" not in text  # one video part
    inputs = model.prompt_inputs(request)
    assert "pixel_values" not in inputs  # no frame went as an image
    got = inputs["pixel_values_videos"].cpu()
    assert torch.equal(got, _video_tensor(model, frames))
    assert not torch.equal(got, _video_tensor(model, frames[::-1]))  # order is seen
    if arch == "qwen2_vl":
        # Two frames per temporal patch (the fifth repeated); a 64x48 frame is resized to
        # 32x24 (1024 pixels at most, multiples of 8): 8x6 patches, merged 2x2 into 12.
        assert inputs["video_grid_thw"].tolist() == [[3, 6, 8]]
        assert _video_tokens(model, inputs) == 3 * 12
    else:
        assert tuple(got.shape) == (1, 5, 3, 32, 32)
        assert _video_tokens(model, inputs) == 5 * 4 + 1  # 2x2 pooled per frame, one newline
    (answer,) = model.generate([request])
    assert answer.ok, answer.error
    assert answer.usage is not None
    assert answer.usage.prompt_tokens == inputs["input_ids"].shape[1]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("arch", ["qwen2_vl", "llava_onevision"])
def test_ranking_over_a_video_matches_one_full_pass_per_option(
    arch: str, device: str, tmp_path: Path, tiny_cache: Path
) -> None:
    # The options are scored from the prompt's key/value cache (video encoded once); Qwen2-VL
    # continues with the position offsets its video's M-RoPE grid left, so a wrong offset
    # shows up here against one full forward pass (video included) per option.
    model = _model(arch, device, tiny_cache)
    request = _requests(_data(tmp_path, (40,)), "frames=4", method="likelihood")[0]
    scored = model.loglikelihood([request])[0]
    assert scored.ok, scored.error
    assert max(scored.token_counts) > 1
    assert scored.loglikelihoods == pytest.approx(model.naive_scores(request), abs=1e-4)


@pytest.mark.parametrize("arch", ["qwen2_vl", "llava_onevision"])
def test_a_batch_of_videos_with_different_frame_counts_is_answered(
    arch: str, tmp_path: Path, tiny_cache: Path
) -> None:
    # fps=3 samples the 40-frame video at 12 frames and the 20-frame one at 6: LLaVA-
    # OneVision's processor cannot stack those into one batch, so they go in two.
    model = _model(arch, "cpu", tiny_cache, batch_size="4")
    requests = _requests(_data(tmp_path, (40, 20, 40)), "fps=3")
    assert [r.video_frames for r in requests] == [12, 6, 12]
    for i, r in enumerate(requests):
        r.key = f"k{i}"
    answers = model.generate(requests)
    assert [a.key for a in answers] == [r.key for r in requests]
    assert all(a.ok for a in answers), [a.error for a in answers]


@pytest.mark.parametrize("arch", ["qwen2_vl", "llava_onevision"])
def test_video_frames_gives_the_same_checkpoint_the_frames_as_images(
    arch: str, tmp_path: Path, tiny_cache: Path
) -> None:
    model = _model(arch, "cpu", tiny_cache, video="frames")
    assert not model.capabilities.video
    assert "video" not in model.identity.options
    request = _requests(_data(tmp_path, (40,)), "frames=3")[0]
    inputs = model.prompt_inputs(request)
    assert "pixel_values_videos" not in inputs
    placeholder = "<|image_pad|>" if arch == "qwen2_vl" else "<image>"
    assert model.render(request).count(placeholder) == 3
    if arch == "qwen2_vl":
        assert inputs["image_grid_thw"].shape[0] == 3  # one grid per frame
    else:
        assert inputs["pixel_values"].shape[0] == 3
    (answer,) = model.generate([request])
    assert answer.ok, answer.error


def test_a_video_model_answers_through_the_console_script(tmp_path: Path) -> None:
    data = _data(tmp_path)
    proc = lmmprobe(
        "run", "-d", data, "-m", "hf:tiny-qwen2-vl,device=cpu,dtype=float32", "--frames", "4",
        "--db", tmp_path / "s.db", "--out", tmp_path / "out", "-q",
        HF_HUB_OFFLINE="1", LMMPROBE_CACHE=str(tmp_path / "cache"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "0 errors" in proc.stdout
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert results["manifest"]["video"]["frames"] == "frames=4"
    (identity,) = results["manifest"]["models"].values()
    assert identity["options"]["video"] == "processor"  # the video went as a video
