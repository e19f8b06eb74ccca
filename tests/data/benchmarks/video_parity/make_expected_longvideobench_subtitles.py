"""Run LongVideoBench's own subtitle interleaving on generated subtitles; write its file.

LongVideoBench (longvideobench/LongVideoBench @ ``LONGVIDEOBENCH``,
``longvideobench/longvideobench_dataset.py``): ``timestamp_to_seconds`` and
``insert_subtitles_into_frames``, their source taken from the file and run as written (the
file's other imports, decord and torch, are not needed by them), on generated cases: frame
timestamps as ``load_video`` makes them (``int(duration * fps) // n * i / fps`` for
``n = min(16, int(duration))``, at several frame rates), subtitles in both of its formats
(``{"timestamp": [start, end], "text"}``, whose ``end`` is replaced by the duration when it is
not a float: an integer or null; and ``{"start": "HH:MM:SS.fff", "end", "line"}``), a
``starting_timestamp_for_subtitles``, short cues (widened to a second), cues between frames,
before the first and after the last, and overlapping ones. Each frame is passed as the string
``<frame K>``; the list it returns is recorded as it is.

    python tests/data/benchmarks/video_parity/make_expected_longvideobench_subtitles.py \
        LONGVIDEOBENCH_CHECKOUT
"""

from __future__ import annotations

import ast
import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
LONGVIDEOBENCH = "fc3c553250cfee6853a722f9b181f1b69f478426"
WANTED = ("timestamp_to_seconds", "insert_subtitles_into_frames")


def functions(checkout: Path) -> dict[str, Any]:
    """The two functions, defined from their source in the file."""
    path = checkout / "longvideobench" / "longvideobench_dataset.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = ast.Module(
        body=[n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in WANTED],
        type_ignores=[],
    )
    space: dict[str, Any] = {}
    exec(compile(module, str(path), "exec"), space)  # the reference's own code
    return space


def stamp(seconds: float) -> str:
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{int(h):02d}:{int(m):02d}:{s:06.3f}"


def case(rng: random.Random) -> dict[str, Any]:
    fps = rng.choice([30.0, 29.97, 25.0, 24.0, 1.0, 60.0])
    duration = rng.choice([8.5, 12.0, 15.9, 40.0, 61.3, 300.0, 1234.5])
    n = min(16, int(duration))
    frames = [int(int(duration * fps) / n) * i for i in range(n)]
    times = [f / fps for f in frames]
    offset = rng.choice([0.0, 0.0, 3.5, 12.0])
    text_form = rng.random() < 0.5
    subs = []
    t = offset + rng.uniform(-2, 3)
    for k in range(rng.randint(0, 24)):
        length = rng.choice([0.2, 0.6, 0.99, 1.0, 1.5, 3.0, 8.0, duration / 4])
        start = max(0.0, t)
        end = start + length
        if text_form:
            shape = rng.random()
            if shape < 0.15:
                end_value: Any = None  # no end: the duration
            elif shape < 0.3:
                end_value = int(end)  # an integer: also the duration (not a float)
            else:
                end_value = round(end, 3)
            start_value: Any = round(start, 3) if rng.random() < 0.8 else int(start)
            subs.append({"timestamp": [start_value, end_value], "text": f"cue {k} said"})
        else:
            subs.append({"start": stamp(start), "end": stamp(end), "line": f"line {k} said"})
        t = end + rng.choice([-0.5, 0.0, 0.3, 1.0, 4.0, duration / 8])
    return {"duration": duration, "fps": fps, "times": times, "offset": offset, "subtitles": subs}


def main() -> None:
    space = functions(Path(sys.argv[1]))
    rng = random.Random(1337)
    cases = [case(rng) for _ in range(150)]
    for c in cases:
        frames = [f"<frame {k}>" for k in range(len(c["times"]))]
        c["interleaved"] = space["insert_subtitles_into_frames"](
            frames, c["times"], c["subtitles"], c["offset"], c["duration"]
        )
    stamps = ["00:00:01.500", "01:02:03.250", "00:00:00.000", "10:00:59.999", "00:01:5"]
    out = {
        "longvideobench_commit": LONGVIDEOBENCH,
        "cases": cases,
        "seconds": {s: space["timestamp_to_seconds"](s) for s in stamps},
    }
    (HERE / "expected_longvideobench_subtitles.json").write_text(
        json.dumps(out, indent=1) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
