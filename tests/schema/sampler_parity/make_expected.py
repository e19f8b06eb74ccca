"""Run the reference frame samplers on generated (frame count, rate, clip) cases; write expected.json.

Two samplers are run as their repositories hold them:

- lmms-eval (EvolvingLMMs-Lab/lmms-eval @ ``LMMS_EVAL``),
  ``lmms_eval/models/model_utils/load_video.py``: ``_compute_sample_count(total, N, None,
  rate)`` then ``_compute_uniform_indices(total, count)`` (what its PyAV reader samples); the
  module is loaded from the checkout as it is (it imports ``av`` and ``numpy``).
- MVBench (OpenGVLab/Ask-Anything @ ``ASK_ANYTHING``), ``video_chat2/mvbench.ipynb``:
  ``MVBench_dataset.get_index(bound, fps, max_frame, first_idx=0)``, with ``max_frame = len(vr)
  - 1`` as its ``read_video`` passes it. The notebook cell defining the class is executed with
  stand-ins for the names its other methods use (torch transforms, decord), then ``get_index``
  is called on an instance made without ``__init__`` holding ``num_segments``.
- LongVideoBench (longvideobench/LongVideoBench @ ``LONGVIDEOBENCH``),
  ``longvideobench/longvideobench_dataset.py``: ``load_video(video_file, duration,
  max_num_frames)`` run as written, with a stand-in ``decord`` module whose ``VideoReader`` has
  the case's frame count and rate and records the indices ``get_batch`` is asked for;
  ``duration`` is the clip's end (the video's length without a clip). A case where it fails
  (a division by zero under a second) is recorded as null.

    python tests/schema/sampler_parity/make_expected.py LMMS_EVAL_CHECKOUT ASK_ANYTHING_CHECKOUT \
        LONGVIDEOBENCH_CHECKOUT
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
import types
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
LMMS_EVAL = "75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3"
ASK_ANYTHING = "4dd8210b030374bb0c510a57dfbe916f70d3ef71"
LONGVIDEOBENCH = "fc3c553250cfee6853a722f9b181f1b69f478426"


def cases() -> list[dict[str, object]]:
    """Frame counts and rates of real clips (1 s to 2 h at common rates) and edge cases."""
    rng = random.Random(38)
    rates = [
        23.976023976023978,
        24.0,
        25.0,
        29.97002997002997,
        30.0,
        50.0,
        59.94005994005994,
        3.0,
        1.0,
    ]
    out: list[dict[str, object]] = []
    for n in (1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 100, 101):
        for frames in (1, 8, 16, 32):
            out.append({"frames": frames, "count": n, "rate": 25.0})
    for _ in range(150):
        rate = rng.choice(rates)
        count = max(1, round(rng.uniform(1, 7200) * rate))
        case: dict[str, object] = {
            "frames": rng.choice([4, 8, 16, 32, 64]),
            "count": count,
            "rate": rate,
        }
        if rng.random() < 0.4:  # a clip inside the video (MVBench's bound)
            length = count / rate
            start = round(rng.uniform(0, length * 0.8), rng.choice([0, 1, 2]))
            end = round(min(length + 5, start + rng.uniform(0.5, length)), rng.choice([0, 1, 2]))
            if end > start:
                case.update(start=start, end=end)
        out.append(case)
    return out


def lmms_eval_indices(checkout: Path, case: dict[str, object]) -> list[int]:
    path = checkout / "lmms_eval/models/model_utils/load_video.py"
    spec = importlib.util.spec_from_file_location("lmms_load_video", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    total = int(case["count"])  # type: ignore[call-overload]
    count = module._compute_sample_count(total, case["frames"], None, case["rate"])
    return [int(i) for i in module._compute_uniform_indices(total, count)]


def mvbench_class(checkout: Path) -> type:
    notebook = json.loads((checkout / "video_chat2/mvbench.ipynb").read_text(encoding="utf-8"))
    source = next(
        "".join(c["source"])
        for c in notebook["cells"]
        if c["cell_type"] == "code" and "class MVBench_dataset" in "".join(c["source"])
    )
    stub = types.SimpleNamespace
    names = {
        "np": np,
        "Dataset": object,
        "json": json,
        "os": __import__("os"),
        "T": stub(Compose=None),
        "InterpolationMode": stub(BICUBIC=None),
    }
    exec(compile(source, "mvbench.ipynb", "exec"), names)  # the notebook's own cell
    return names["MVBench_dataset"]  # type: ignore[no-any-return]


class _Batch:
    def __init__(self, n: int) -> None:
        self.n = n

    def asnumpy(self) -> np.ndarray:
        return np.zeros((self.n, 2, 2, 3), np.uint8)


def longvideobench_loader(checkout: Path):  # type: ignore[no-untyped-def]
    asked: list[list[int]] = []
    shape: dict[str, float] = {}

    class VideoReader:  # decord's, as load_video uses it
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def get_avg_fps(self) -> float:
            return shape["rate"]

        def __len__(self) -> int:
            return int(shape["count"])

        def get_batch(self, indices: list[int]) -> _Batch:
            asked.append([int(i) for i in indices])
            return _Batch(len(indices))

    sys.modules["decord"] = types.SimpleNamespace(VideoReader=VideoReader, cpu=lambda i: None)  # type: ignore[assignment]
    spec = importlib.util.spec_from_file_location(
        "lvb_dataset", checkout / "longvideobench/longvideobench_dataset.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def indices(count: int, rate: float, duration: float, frames: int) -> list[int] | None:
        shape.update(count=count, rate=rate)
        asked.clear()
        try:
            module.load_video("video.mp4", duration, max_num_frames=frames)
        except ZeroDivisionError:
            return None
        return asked[0]

    return indices


def main() -> None:
    lmms, ask, lvb = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    longvideobench = longvideobench_loader(lvb)
    dataset = mvbench_class(ask)
    rows = []
    for case in cases():
        instance = dataset.__new__(dataset)
        instance.num_segments = case["frames"]
        bound = (case["start"], case["end"]) if "start" in case else None
        mv = instance.get_index(bound, case["rate"], int(case["count"]) - 1, first_idx=0)  # type: ignore[call-overload]
        row = dict(case, mvbench=[int(i) for i in mv])
        count, rate = int(case["count"]), float(case["rate"])  # type: ignore[call-overload, arg-type]
        duration = float(case["end"]) if "end" in case else count / rate  # type: ignore[arg-type]
        row["longvideobench"] = longvideobench(count, rate, duration, int(case["frames"]))  # type: ignore[call-overload]
        if "start" not in case:
            row["linspace"] = lmms_eval_indices(lmms, case)
        rows.append(row)
    out = {
        "lmms_eval": LMMS_EVAL,
        "ask_anything": ASK_ANYTHING,
        "longvideobench": LONGVIDEOBENCH,
        "cases": rows,
    }
    lines = ",\n".join(json.dumps(r) for r in rows)
    text = json.dumps({k: v for k, v in out.items() if k != "cases"})[:-1]
    (HERE / "expected.json").write_text(f'{text}, "cases": [\n{lines}\n]}}\n', encoding="utf-8")


if __name__ == "__main__":
    main()
