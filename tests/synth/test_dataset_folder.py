"""A synthetic-dataset folder read and written as an outside folder (issue 34, re-test 11).

``synth show`` and ``synth filter`` read the folder's manifest.json, samples.jsonl and
dysca.json with no checks: tracebacks (KeyError, RecursionError, AttributeError), a link to
/dev/zero read until memory ran out, and a bad dysca.json found after samples.jsonl had been
rewritten (#1). ``synth filter`` wrote through links leaving the folder, creating a file where
a dangling one pointed (#2). ``synth generate --overwrite`` removed whatever the folder held,
a store included (#14). ``--data synth,n=`` held any number of samples, and ``--workers`` had
no bound (#12). Everything here goes through the console script.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.console import lmmprobe

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-item set (6 samples) at 32 px."""
    out = tmp_path_factory.mktemp("synth") / "set"
    made = lmmprobe("synth", "generate", "--n", "2", "--size", "32", "--out", out)
    assert made.returncode == 0, made.stderr
    return out


def _copy(dataset: Path, where: Path, name: str) -> Path:
    folder = where / name
    shutil.copytree(dataset, folder)
    return folder


def _one_error(result: object) -> str:
    stderr: str = result.stderr  # type: ignore[attr-defined]
    assert result.returncode == 2, stderr  # type: ignore[attr-defined]
    assert "Traceback" not in stderr
    (line,) = stderr.strip().splitlines()
    return line


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("manifest.json", "{}\n", "manifest.json: config: expected an object, got nothing"),
        ("manifest.json", "[1]\n", "manifest.json: (the document): expected an object, got list"),
        ("manifest.json", DEEP, "manifest.json: nested more than 100 levels deep"),
        ("manifest.json", '{"config": {}, "renderer": {}, "counts": {}}', "config.seed: expected"),
        ("manifest.json", b"\x00\xaf\xfe", "manifest.json: not UTF-8 text (byte 0xaf at offset 1)"),
        ("samples.jsonl", "[1,2]\n", "samples.jsonl:1: (the row): expected an object, got list"),
        ("samples.jsonl", '{"metadata": {}}\n{"metadata": [1]}\n', "samples.jsonl:2: metadata:"),
        ("samples.jsonl", '{"metadata": ' + DEEP + "}\n", "samples.jsonl:1: metadata: nested"),
        ("samples.jsonl", b'{"metadata": {}}\n\xff\xfe\n', "samples.jsonl:2: not UTF-8 text"),
        ("samples.jsonl", Path("/dev/zero"), "samples.jsonl: a link to /dev/zero, outside"),
    ],
)
def test_show_refuses_a_damaged_folder_in_one_line(
    dataset: Path, tmp_path: Path, name: str, content: str | bytes | Path, expected: str
) -> None:
    folder = _copy(dataset, tmp_path, "bad")
    target = folder / name
    target.unlink()
    if isinstance(content, Path):
        target.symlink_to(content)
    elif isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content, encoding="utf-8")
    line = _one_error(lmmprobe("synth", "show", folder, timeout=60))
    assert line.startswith(f"error: {target}") and expected in line, line


@pytest.fixture(scope="module")
def reference_run(dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store holding one run of ``random`` on `dataset`, and that run's id."""
    db = tmp_path_factory.mktemp("store") / "db.sqlite"
    ran = lmmprobe("run", "-m", "random", "--data", f"synth:{dataset}", "--db", db)
    assert ran.returncode == 0, ran.stderr
    runs = lmmprobe("runs", "--db", db, "-f", "json")
    return db, json.loads(runs.stdout)[0]["id"]


def _filter(folder: Path, run: tuple[Path, str]) -> object:
    return lmmprobe("synth", "filter", folder, "--run", run[1], "--db", run[0], timeout=120)


def test_filter_never_writes_through_a_link_leaving_the_folder(
    dataset: Path, reference_run: tuple[Path, str], tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    folder = _copy(dataset, tmp_path, "f1")
    victim = outside / "victim.jsonl"
    (folder / "samples.jsonl").rename(victim)
    (folder / "samples.jsonl").symlink_to(victim)
    (folder / "samples.unfiltered.jsonl").symlink_to(outside / "created.txt")  # dangling
    before = victim.read_bytes()
    line = _one_error(_filter(folder, reference_run))
    assert "a link to" in line and "outside" in line and "synth filter" in line
    assert victim.read_bytes() == before
    assert sorted(p.name for p in outside.iterdir()) == ["victim.jsonl"]  # nothing created
    # Only a dangling link to a backup name: refused the same, nothing created.
    folder = _copy(dataset, tmp_path, "f2")
    (folder / "dysca.unfiltered.json").symlink_to(outside / "made.json")
    line = _one_error(_filter(folder, reference_run))
    assert "dysca.unfiltered.json: a link to" in line
    assert sorted(p.name for p in outside.iterdir()) == ["victim.jsonl"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (DEEP, "dysca.json: nested more than 100 levels deep"),
        ('{"a": 1}', "dysca.json: expected a list of questions, got dict"),
        ('[{"x": 1}]', "dysca.json: [0].id: missing"),
    ],
)
def test_filter_checks_every_file_before_it_writes_any(
    dataset: Path, reference_run: tuple[Path, str], tmp_path: Path, content: str, expected: str
) -> None:
    folder = _copy(dataset, tmp_path, "f")
    (folder / "dysca.json").write_text(content, encoding="utf-8")
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    line = _one_error(_filter(folder, reference_run))
    assert expected in line, line
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert after == before  # samples.jsonl and the manifest untouched, no backups made


def test_filter_replaces_each_file_atomically(
    dataset: Path, reference_run: tuple[Path, str], tmp_path: Path
) -> None:
    folder = _copy(dataset, tmp_path, "f")
    # A hard link shares the file: written through, it would change too; replaced, it keeps
    # the old bytes.
    keep = tmp_path / "old-samples.jsonl"
    keep.hardlink_to(folder / "samples.jsonl")
    original = keep.read_bytes()
    done = _filter(folder, reference_run)
    assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
    assert keep.read_bytes() == original
    assert (folder / "samples.unfiltered.jsonl").read_bytes() == original
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".")]  # no temporaries
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    kept = len((folder / "samples.jsonl").read_text(encoding="utf-8").splitlines())
    assert manifest["counts"]["samples"] == kept
    assert sum(manifest["counts"]["by_subtask"].values()) == kept


def test_overwrite_replaces_only_a_synthetic_dataset(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "ow"
    (out / "sub").mkdir(parents=True)
    (out / "db.sqlite").write_bytes(b"SQLite format 3\x00")
    (out / "notes.txt").write_text("precious")
    (out / "sub" / "keep.txt").write_text("deep")
    args = ("synth", "generate", "--n", "1", "--size", "32", "--out", out)
    line = _one_error(lmmprobe(*args, "--overwrite"))
    assert line == (
        f"error: {out} holds files that are not a synthetic dataset (db.sqlite, notes.txt, sub): "
        "choose an empty or new folder"
    )
    assert sorted(p.name for p in out.iterdir()) == ["db.sqlite", "notes.txt", "sub"]
    # A dataset folder with one foreign file beside it (a store under images/ too).
    mixed = _copy(dataset, tmp_path, "mixed")
    (mixed / "images" / "db.sqlite").write_bytes(b"")
    line = _one_error(lmmprobe(*args[:-1], mixed, "--overwrite"))
    assert "(images/db.sqlite)" in line and (mixed / "images" / "db.sqlite").exists()
    # A dataset folder: the flag is named without it, and it is replaced with it.
    ours = _copy(dataset, tmp_path, "ours")
    line = _one_error(lmmprobe(*args[:-1], ours))
    assert line == (
        f"error: {ours} holds a synthetic dataset: pass --overwrite to replace it, or choose "
        "another folder"
    )
    link = tmp_path / "link"
    link.symlink_to(ours)
    line = _one_error(lmmprobe(*args[:-1], link, "--overwrite"))
    assert line == f"error: {link} is a link, not a dataset folder: name the folder itself"
    made = lmmprobe(*args[:-1], ours, "--overwrite")
    assert made.returncode == 0, made.stderr
    manifest = json.loads((ours / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["n"] == 1


def test_on_the_fly_n_and_workers_are_bounded(tmp_path: Path) -> None:
    line = _one_error(
        lmmprobe(
            "run",
            "-m",
            "random",
            "--data",
            "synth,n=100000000",
            "--dry-run",
            "--db",
            tmp_path / "db.sqlite",
            timeout=60,
        )
    )
    assert "n=100,000,000 is more than the 10,000 items made on the fly" in line
    assert "synth generate --n 100000000 --out DIR" in line
    refused = lmmprobe("synth", "generate", "--n", "1", "--workers", "100000", "--out", tmp_path)
    assert refused.returncode == 2 and "less than or equal to 256" in refused.stderr
    from lmmprobe.synth.generate import worker_count

    assert worker_count(16, 1) == 1  # one chunk: one process (16 spawned took 19 s)
    assert worker_count(3, 10) == 3 and worker_count(0, 5) == 1
