"""A small synthetic video run made as a user makes one: ``synth generate --video``, then ``run``.

The report and serve tests show its frames; each clip's recorded frames (times and pixel
hashes) are read back from the store as the run wrote them.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.console import lmmprobe


@dataclass
class VideoRun:
    """A run over a generated video set: its store, id, set folder and recorded videos."""

    db: Path
    run_id: str
    data: Path

    def videos(self) -> dict[str, dict[str, Any]]:
        """Each sample's recorded ``video`` object, by sample id."""
        with sqlite3.connect(self.db) as con:
            rows = con.execute(
                "SELECT sample_id, sample FROM samples WHERE run_id = ? ORDER BY sample_id",
                (self.run_id,),
            ).fetchall()
        return {sid: json.loads(doc)["video"] for sid, doc in rows}

    def video_file(self, sample_id: str) -> Path:
        """The video file `sample_id` recorded."""
        return Path(self.videos()[sample_id]["path"])


def make_video_run(root: Path, *run_args: str, clips: int = 3) -> VideoRun:
    """Generate `clips` 64 px clips under `root` and run `run_args` (models, --frames) on them."""
    data = root / "set"
    if not data.exists():
        made = lmmprobe("synth", "generate", "--video", "--n", str(clips), "--size", "64",
                        "--out", data)  # fmt: skip
        assert made.returncode == 0, made.stderr
    db = root / "runs.db"
    ran = lmmprobe("run", "--data", f"synth:{data}", *run_args, "--db", db,
                   "--out", root / f"out{len(list(root.glob('out*')))}")  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    found = re.search(r"run id: (\S+)", ran.stdout)
    assert found, ran.stdout
    return VideoRun(db, found.group(1), data)
