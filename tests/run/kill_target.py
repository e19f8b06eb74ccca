"""Subprocess target for the kill-and-resume test: a slow fake model over demo samples.

Usage: python kill_target.py DB CALLS_FILE OUT_DIR DELAY
"""

from __future__ import annotations

import sys

from tests.run.fakes import RecordingModel

from lmmprobe import RunSpec, evaluate
from lmmprobe.models.base import MODELS

db, calls_file, out_dir, delay = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])


@MODELS.register("slowfake")
def _factory(target, options):
    return RecordingModel(name="slowfake", batch=4, delay=delay, calls_file=calls_file)


evaluate(RunSpec(models=["slowfake"], data="demo,n=80", repeats=2, db=db, out=out_dir))
