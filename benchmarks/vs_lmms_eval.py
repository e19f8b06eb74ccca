"""lmmprobe against lmms-eval 0.7.3: the same 10,000 multiple-choice questions, whole CLI.

Both tools read one JSONL file of text multiple-choice questions (four options, answer index)
and ask an instant model that answers at once: lmmprobe's built-in ``first`` baseline, and for
lmms-eval a model class registered through its plugin hook that answers "A" to every request.
Each side runs as a whole process (start-up, loading, prompting, the model, scoring, writing
every sample: lmmprobe's store, lmms-eval's ``--log_samples``), interleaved A B A B so a
comparison holds when the shared machine's speed drifts. lmmprobe's first runs each use a fresh
store; its cached re-runs answer every question from one store.

lmms-eval is never one of lmmprobe's dependencies: it lives in a scratch virtual environment.
``--setup`` makes one (``python -m venv`` then ``pip install lmms-eval==0.7.3``; add
``--reuse-site`` to let it see this interpreter's packages so pip does not fetch torch again).
Without an lmms-eval there the script says so and exits 0.

Usage:
    python benchmarks/vs_lmms_eval.py [--setup] [--venv /tmp/lmms-eval-0.7.3] [--rounds 5]
    python benchmarks/vs_lmms_eval.py --commands DIR   # write the inputs, print both commands
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LMMS_EVAL_VERSION = "0.7.3"
FILELOCK_FOR_LMMS_EVAL = "filelock==3.18.0"
LETTERS = "ABCD"

_TASK_YAML = """\
task: probe_mc
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_visual: !function utils.doc_to_visual
doc_to_text: !function utils.doc_to_text
doc_to_target: !function utils.doc_to_target
process_results: !function utils.process_results
generation_kwargs:
  max_new_tokens: 4
  temperature: 0
  do_sample: false
metric_list:
  - metric: accuracy
    aggregation: mean
    higher_is_better: true
"""

# The same prompt lmmprobe's default formulation builds: question, lettered options, instruction.
_TASK_UTILS = """\
LETTERS = "ABCD"


def doc_to_visual(doc):
    return []


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    options = "\\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(doc["choices"]))
    return f"{doc['question']}\\n{options}\\nAnswer with the option's letter from the given choices directly."


def doc_to_target(doc):
    return LETTERS[doc["answer"]]


def process_results(doc, results):
    reply = results[0].strip()
    letter = reply[:1].upper()
    return {"accuracy": float(letter == LETTERS[doc["answer"]])}
"""

_PLUGIN_INIT = 'AVAILABLE_MODELS = {"instant": "Instant"}\n'

_PLUGIN_MODEL = '''\
"""An instant model: answers "A" to every request without looking at it."""

from lmms_eval.api.model import lmms


class Instant(lmms):
    def __init__(self, **kwargs):
        super().__init__()

    def generate_until(self, requests):
        return ["A" for _ in requests]

    def loglikelihood(self, requests):
        raise NotImplementedError("instant: generation only")

    def generate_until_multi_round(self, requests):
        raise NotImplementedError("instant: generation only")
'''


def write_questions(path: Path, n: int, seed: int = 0) -> None:
    """Write `n` four-option text questions in lmmprobe's JSONL format (lmms-eval reads it too).

    Args:
        path: The file to write.
        n: How many questions.
        seed: Seeds the answers' positions and the numbers asked about.

    """
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            a, b = rng.randint(2, 99), rng.randint(2, 99)
            right = a + b
            wrong = rng.sample([v for v in range(right - 9, right + 10) if v != right], 3)
            answer = rng.randrange(4)
            choices = [str(v) for v in [*wrong[:answer], right, *wrong[answer:]]]
            row = {
                "id": f"q{i:05d}",
                "images": [],
                "question": f"What is {a} + {b}?",
                "choices": choices,
                "answer": answer,
            }
            f.write(json.dumps(row) + "\n")


def write_lmms_inputs(root: Path, data: Path) -> tuple[Path, Path]:
    """Write lmms-eval's task folder and the plugin package holding the instant model.

    Returns:
        The task folder (``--include_path``) and the folder to put on ``PYTHONPATH``.

    """
    # lmms-eval's plugin hook reads the package's models/ and tasks/ folders.
    package = root / "plugin" / "probe_instant"
    tasks = package / "tasks" / "probe_mc"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / "probe_mc.yaml").write_text(_TASK_YAML.format(data=data), encoding="utf-8")
    (tasks / "utils.py").write_text(_TASK_UTILS, encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "tasks" / "__init__.py").write_text("", encoding="utf-8")
    models = package / "models"
    models.mkdir(parents=True, exist_ok=True)
    (models / "__init__.py").write_text(_PLUGIN_INIT, encoding="utf-8")
    (models / "instant.py").write_text(_PLUGIN_MODEL, encoding="utf-8")
    return tasks.parent, root / "plugin"


def lmms_command(python: Path, root: Path, tasks: Path, plugin: Path, out: Path) -> list[str]:
    """lmms-eval's whole CLI on the task, through ``env`` so it can be timed as one process."""
    return [
        "env",
        f"PYTHONPATH={plugin}",
        "LMMS_EVAL_PLUGINS=probe_instant",
        f"HF_HOME={root / 'hf'}",
        "HF_DATASETS_OFFLINE=1",
        "HF_HUB_OFFLINE=1",
        "TOKENIZERS_PARALLELISM=false",
        str(python),
        "-m",
        "lmms_eval",
        "--model",
        "instant",
        "--tasks",
        "probe_mc",
        "--include_path",
        str(tasks),
        "--batch_size",
        "1",
        "--log_samples",
        "--output_path",
        str(out),
        "--verbosity",
        "WARNING",
    ]


def lmmprobe_command(data: Path, db: Path, out: Path) -> list[str]:
    """lmmprobe's whole CLI (the console script beside this interpreter) on the same file."""
    script = Path(sys.executable).with_name("lmmprobe")
    exe = [str(script)] if script.exists() else [sys.executable, "-m", "lmmprobe.cli.main"]
    return [*exe, "run", "-m", "first", "-d", str(data), "--db", str(db), "--out", str(out)]


def has_lmms_eval(python: Path) -> bool:
    """Whether `python` exists and imports lmms-eval at the pinned version."""
    if not python.exists():
        return False
    probe = "import importlib.metadata as m; print(m.version('lmms-eval'))"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=False)
    return done.returncode == 0 and done.stdout.strip() == LMMS_EVAL_VERSION


def setup_venv(venv: Path, reuse_site: bool) -> None:
    """Make the scratch environment and install lmms-eval into it (never into this one)."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if reuse_site:
        # Seen after the venv's own packages: pip installs only what is missing or clashes.
        import site

        pth = next((venv / "lib").glob("python*/site-packages")) / "_reuse_base.pth"
        pth.write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, f"lmms-eval=={LMMS_EVAL_VERSION}"], check=True)
    # lmms-eval 0.7.3 imports filelock._api, which filelock 4 no longer has.
    subprocess.run([*pip, FILELOCK_FOR_LMMS_EVAL], check=True)


def timed(cmd: list[str]) -> float:
    """Wall seconds of one whole process; its output is kept only when it fails."""
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    dt = time.perf_counter() - t0
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-2000:]
        raise SystemExit(f"{cmd[0]} ... exited {done.returncode}:\n{tail}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds after a warm-up")
    ap.add_argument("--venv", type=Path, default=Path("/tmp/lmms-eval-0.7.3"))
    ap.add_argument(
        "--setup", action="store_true", help="make the scratch venv if it lacks lmms-eval"
    )
    ap.add_argument(
        "--reuse-site", action="store_true", help="with --setup: reuse this venv's packages"
    )
    ap.add_argument("--commands", type=Path, help="write the inputs under DIR, print both commands")
    args = ap.parse_args()
    python = args.venv / "bin" / "python"
    if args.setup and not has_lmms_eval(python):
        setup_venv(args.venv, args.reuse_site)
    if not has_lmms_eval(python):
        print(
            f"skipped: lmms-eval {LMMS_EVAL_VERSION} is not installed in {args.venv} "
            "(run with --setup to make that scratch venv)"
        )
        return
    root = args.commands or Path(tempfile.mkdtemp(prefix="vs-lmms-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        data = root / "questions.jsonl"
        write_questions(data, args.samples)
        tasks, plugin = write_lmms_inputs(root, data)
        lmms = lmms_command(python, root, tasks, plugin, root / "lmms-out")
        if args.commands:
            print("lmmprobe (first run, fresh store):")
            print(" ", " ".join(lmmprobe_command(data, root / "fresh.db", root / "probe-out")))
            print("lmmprobe (cached re-run):")
            print(" ", " ".join(lmmprobe_command(data, root / "cached.db", root / "probe-out")))
            print("lmms-eval:")
            print(" ", " ".join(lmms))
            return
        cached = lmmprobe_command(data, root / "cached.db", root / "probe-out")
        timed(lmms)  # warm-up: the datasets cache, the OS file cache
        timed(cached)  # fills the store the cached re-runs read
        rows: list[tuple[float, float, float]] = []
        for r in range(args.rounds):
            fresh = timed(lmmprobe_command(data, root / f"fresh-{r}.db", root / "probe-out"))
            other = timed(lmms)
            again = timed(cached)
            rows.append((args.samples / fresh, args.samples / other, args.samples / again))
            print(
                f"round {r + 1}: lmmprobe {rows[-1][0]:.0f}/s  lmms-eval {rows[-1][1]:.0f}/s  "
                f"lmmprobe cached {rows[-1][2]:.0f}/s  ratio {rows[-1][0] / rows[-1][1]:.2f}"
            )
    finally:
        if not args.commands:
            shutil.rmtree(root, ignore_errors=True)
    ratios = [p / q for p, q, _ in rows]
    cached_ratios = [c / q for _, q, c in rows]
    med = statistics.median
    print(f"{'':<22} {'median':>8} {'min':>8} {'max':>8}")
    for label, vals in (
        ("lmmprobe samples/s", [p for p, _, _ in rows]),
        ("lmmprobe cached /s", [c for _, _, c in rows]),
        ("lmms-eval samples/s", [q for _, q, _ in rows]),
        ("ratio first run", ratios),
        ("ratio cached re-run", cached_ratios),
    ):
        print(f"{label:<22} {med(vals):>8.2f} {min(vals):>8.2f} {max(vals):>8.2f}")
    print(
        f"lmmprobe_samples_per_s={med(r[0] for r in rows):.0f} "
        f"lmmprobe_cached_samples_per_s={med(r[2] for r in rows):.0f} "
        f"lmms_eval_samples_per_s={med(r[1] for r in rows):.0f} "
        f"ratio={med(ratios):.2f} cached_ratio={med(cached_ratios):.2f}"
    )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
