"""Fetch commands and the automatic download (issue 23 item 4).

Every registered benchmark's printed fetch command is run by a real shell (bash) with the
programs it calls replaced by recording stubs, so the test sees the exact words each program
would get. The hub benchmarks whose command takes only some files run the real ``hf download``
against the loopback hub fake, and the automatic download (``snapshot_download`` of the same
patterns, and ``datasets.load_dataset``) runs against it too: the data files arrive, the
others do not, and ``--data NAME`` loads what arrived.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import datasets
import pytest
from datasets import Dataset, Features, Image, Sequence, Value
from tests.data.benchmarks.conftest import FakeHub, tiny_png, write_hub_snapshot

from lmmprobe.data import load_source
from lmmprobe.data.benchmarks import BENCHMARKS, Benchmark

# The programs fetch commands call; each is a stub that records its words. Anything else is
# not on PATH, so a command naming another program (huggingface-cli, curl) fails here.
STUBBED = ("hf", "kaggle", "wget", "git", "unzip", "gdown", "tar", "mv", "jq", "md5sum")
_STUB = """#!/bin/sh
printf '%s\\0' "${0##*/}" "$@" > "$FETCH_RECORD/$$"
# Make the folder the real program would write, so the command's next `cd` works.
prev=
last=
for a in "$@"; do
  case "$prev" in --local-dir|-p|-P|-d) {mkdir} -p -- "$a" ;; esac
  prev=$a
  last=$a
done
if [ "${0##*/}" = git ] && [ "$1" = clone ]; then {mkdir} -p -- "$last"; fi
exit 0
"""


@pytest.fixture
def stub_path(tmp_path: Path) -> Path:
    """A PATH folder holding only the recording stubs (and mkdir, which commands use)."""
    mkdir = shutil.which("mkdir")
    assert mkdir is not None
    folder = tmp_path / "stub-bin"
    folder.mkdir()
    for name in STUBBED:
        stub = folder / name
        stub.write_text(_STUB.replace("{mkdir}", mkdir), encoding="utf-8")
        stub.chmod(0o755)
    (folder / "mkdir").symlink_to(mkdir)
    return folder


def _shell_commands() -> list[str]:
    # A suite's fetch is a sentence pointing at its members' commands, not a command.
    return [n for n in BENCHMARKS.names() if not BENCHMARKS.get(n).members]


def _expected_hf_words(b: Benchmark, data_dir: Path) -> list[str]:
    assert b.hub_id is not None
    words = ["hf", "download", b.hub_id, "--repo-type", "dataset"]
    if b.revision:
        words += ["--revision", b.revision]
    for pattern in b.include:
        words += ["--include", pattern]
    # Definitions sharing one copy (ReForm-Eval's, `Benchmark.copy`) write it to its folder.
    return [*words, "--local-dir", f"{data_dir}/{b.copy or b.name}"]


def _run_in_bash(command: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash")
    assert bash is not None
    return subprocess.run(
        [bash, "-c", command], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )


def test_every_fetch_command_runs_in_a_real_shell_with_the_words_intended(
    tmp_path: Path, stub_path: Path
) -> None:
    # A data dir with a space: a word that is not quoted would split here.
    data_dir = tmp_path / "bench data"
    data_dir.mkdir()
    names = _shell_commands()
    assert len(names) > 30  # the standard and HEMM benchmarks are all registered
    for name in names:
        b = BENCHMARKS.get(name)
        record = tmp_path / "records" / name
        record.mkdir(parents=True)
        cwd = tmp_path / "cwd" / name
        cwd.mkdir(parents=True)
        env = {
            "PATH": str(stub_path),
            "LMMPROBE_DATA_DIR": str(data_dir),
            "FETCH_RECORD": str(record),
        }
        proc = _run_in_bash(b.fetch, env, cwd)
        assert proc.returncode == 0, f"{name}: {b.fetch}\n{proc.stderr}"
        calls = [f.read_bytes().split(b"\0")[:-1] for f in record.iterdir()]
        words = [[w.decode() for w in call] for call in calls]
        assert words, f"{name}: the command ran no program: {b.fetch}"
        hf = [w for w in words if w[0] == "hf"]
        if b.hub_id is not None and b.fetch.startswith("hf download "):
            assert hf, name
        if b.hub_id is not None and b.fetch == b.fetch.split(" && ")[0] and "refs/" not in b.fetch:
            # A command made from the definition's fields: exactly those words, once.
            assert hf == [_expected_hf_words(b, data_dir)], f"{name}: {b.fetch}"


def test_patterns_reach_hf_as_separate_unexpanded_words(tmp_path: Path, stub_path: Path) -> None:
    # Files matching the patterns in the working directory must not be expanded by the shell.
    b = BENCHMARKS.get("mmbench")
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "x.parquet").write_bytes(b"")
    record = tmp_path / "record"
    record.mkdir()
    env = {"PATH": str(stub_path), "LMMPROBE_DATA_DIR": "/d", "FETCH_RECORD": str(record)}
    assert _run_in_bash(b.fetch, env, tmp_path).returncode == 0
    (call,) = [f.read_bytes().split(b"\0")[:-1] for f in record.iterdir()]
    words = [w.decode() for w in call]
    assert words[words.index("--include") :] == [
        "--include", "en/*", "--include", "README.md", "--local-dir", "/d/mmbench",
    ]  # fmt: skip
    assert b.include == ("en/*", "README.md")


def test_hub_benchmarks_are_pinned_or_say_why_not() -> None:
    unpinned = []
    for name in BENCHMARKS.names():
        b = BENCHMARKS.get(name)
        if b.hub_id is None or name.startswith("hemm-"):  # HEMM's own loads are unpinned
            continue
        if b.revision is None:
            assert any("not pinned" in note for note in b.notes), name
            unpinned.append(name)
        else:
            assert re.fullmatch(r"[0-9a-f]{40}", b.revision), (name, b.revision)
            assert f"--revision {b.revision} " in b.fetch, name
    # SEED-Bench: the hub shows only an abbreviated commit and no public source gives it whole.
    # ReForm-Eval-Data: ReForm-Eval's code reads the repository's main, whose commit at the
    # time of its release could not be found (reform_common.UNPINNED says so in each note).
    # MM-Vet and LLaVA-Bench (In-the-Wild): lmms-lab's copies, whose commits could not be found
    # offline (their notes say so). HR-Bench: VLMEvalKit reads DreamMr/HR-Bench's main and
    # checks the file's md5, as the fetch command does. MME-RealWorld: lmms-eval reads its main.
    # MVBench, Video-MME (both settings) and LongVideoBench (with and without its subtitles): no
    # commit id could be read offline.
    assert [n for n in unpinned if not n.startswith("reform-eval")] == [
        "hrbench-4k",
        "hrbench-8k",
        "llava-wild",
        "longvideobench",
        "longvideobench-subtitles",
        "mme-realworld",
        "mmvet",
        "mvbench",
        "seedbench",
        "videomme",
        "videomme-subtitles",
    ]
    assert len([n for n in unpinned if n.startswith("reform-eval")]) == 61 + 8 + 1


# --- the real `hf download` and the automatic download, against the hub fake ---------------

IMG = Image()


def _img(i: int) -> dict[str, Any]:
    return {"bytes": tiny_png((40 * i % 255, 90, 20)), "path": f"{i}.png"}


def _table(rows: dict[str, list[Any]], feats: dict[str, Any]) -> Dataset:
    return Dataset.from_dict(rows, features=Features(feats))


def _str_feats(rows: dict[str, list[Any]], **special: Any) -> dict[str, Any]:
    return {k: special.get(k, Value("string")) for k in rows}


def _mmbench(root: Path) -> None:
    rows = {
        "index": ["1", "2"], "question": ["Colour?", "Shape?"], "hint": ["nan", "nan"],
        "answer": ["A", "B"], "A": ["red", "round"], "B": ["blue", "square"],
        "C": [None, None], "D": [None, None], "category": ["c", "s"],
        "image": [_img(1), _img(2)], "source": ["s", "s"], "L2-category": ["p", "p"],
        "comment": [None, None], "split": ["dev", "dev"],
    }  # fmt: skip
    ds = _table(rows, _str_feats(rows, image=IMG))
    write_hub_snapshot(root, {"dev": ds}, config="en")
    write_hub_snapshot(root, {"dev": ds}, config="cn")  # another language: not fetched


def _mmmu(root: Path) -> None:
    rows: dict[str, list[Any]] = {
        "id": ["validation_Art_1", "validation_Art_2"],
        "question": ["<image 1> Which? #a", "How many? #b"],
        "options": ["['oil', 'ink']", "[]"], "explanation": ["", ""],
        "image_1": [_img(1), _img(2)], **{f"image_{k}": [None, None] for k in range(2, 8)},
        "img_type": ["['P']"] * 2, "answer": ["B", "12"], "topic_difficulty": ["Easy"] * 2,
        "question_type": ["multiple-choice", "open"], "subfield": ["Art"] * 2,
    }  # fmt: skip
    feats = {k: (IMG if k.startswith("image_") else Value("string")) for k in rows}
    write_hub_snapshot(root, {"validation": _table(rows, feats), "test": _table(rows, feats)})


def _mme(root: Path) -> None:
    rows = {
        "question_id": ["existence/1.png", "existence/1.png"], "image": [_img(1), _img(2)],
        "question": ["Is it a? Please answer yes or no.", "Is it b? Please answer yes or no."],
        "answer": ["Yes", "No"], "category": ["existence", "existence"],
    }  # fmt: skip
    write_hub_snapshot(root, {"test": _table(rows, _str_feats(rows, image=IMG))})


def _pope(root: Path) -> None:
    rows = {
        "id": ["0", "1"], "question_id": ["1", "2"],
        "question": ["Is there a cat in the image?", "Is there a dog in the image?"],
        "answer": ["yes", "no"], "image_source": ["COCO_1", "COCO_2"],
        "image": [_img(1), _img(2)], "category": ["adversarial", "random"],
    }  # fmt: skip
    write_hub_snapshot(root, {"test": _table(rows, _str_feats(rows, image=IMG))})


def _scienceqa(root: Path) -> None:
    rows: dict[str, list[Any]] = {
        "image": [_img(1), _img(2)], "question": ["Mammal?", "Hotter?"],
        "choices": [["frog", "whale"], ["ice", "fire"]], "answer": [1, 1], "hint": ["", ""],
        **{k: ["x", "y"] for k in ("task", "grade", "subject", "topic", "category", "skill",
                                    "lecture", "solution")},
    }  # fmt: skip
    feats = _str_feats(rows, image=IMG, choices=Sequence(Value("string")), answer=Value("int8"))
    ds = _table(rows, feats)
    write_hub_snapshot(root, {"test": ds}, config="ScienceQA-IMG")
    write_hub_snapshot(root, {"test": ds}, config="ScienceQA-FULL")  # not fetched


def _mmstar(root: Path) -> None:
    rows = {
        "index": [0, 1], "question": ["Where? #a\nOptions: A: x, B: y", "Count? #b\nOptions: A: 1, B: 2"],
        "image": [_img(1), _img(2)], "answer": ["A", "B"], "category": ["c", "m"],
        "l2_category": ["s", "n"],
        "meta_info": [{"source": "S", "split": "val", "image_path": "1.jpg"}] * 2,
    }  # fmt: skip
    meta = {"source": Value("string"), "split": Value("string"), "image_path": Value("string")}
    feats = _str_feats(rows, index=Value("int64"), image=IMG, meta_info=meta)
    root.mkdir(parents=True)
    _table(rows, feats).to_parquet(str(root / "mmstar.parquet"))
    card = "---\nconfigs:\n- config_name: val\n  data_files:\n  - split: val\n    path: mmstar.parquet\n---\n"
    (root / "README.md").write_text(card, encoding="utf-8")
    (root / "images.zip").write_bytes(b"not fetched")


def _mathvista(root: Path) -> None:
    meta = {k: Value("string") for k in ("category", "context", "grade", "language", "source",
                                         "split", "task")}  # fmt: skip
    meta_row = {k: "x" for k in meta}
    rows: dict[str, list[Any]] = {
        "pid": ["1", "2"], "question": ["Larger?", "How many?"],
        "image": ["images/1.jpg", "images/2.jpg"], "decoded_image": [_img(1), _img(2)],
        "choices": [["3", "5"], None], "unit": [None, None], "precision": [None, None],
        "answer": ["5", "7"], "question_type": ["multi_choice", "free_form"],
        "answer_type": ["text", "integer"], "metadata": [meta_row] * 2,
        "query": ["Question: Larger?\nChoices:\n(A) 3\n(B) 5", "Question: How many?"],
    }  # fmt: skip
    feats = _str_feats(
        rows, decoded_image=IMG, choices=Sequence(Value("string")), precision=Value("float64"),
        metadata=meta,
    )  # fmt: skip
    write_hub_snapshot(root, {"testmini": _table(rows, feats), "test": _table(rows, feats)})


def _textvqa(root: Path) -> None:
    rows: dict[str, list[Any]] = {
        "image_id": ["a", "b"], "question_id": [1, 2], "question": ["what brand?", "what year?"],
        "question_tokens": [["what"], ["what"]], "image": [_img(1), _img(2)],
        "image_width": [8, 8], "image_height": [8, 8], "flickr_original_url": ["u", "u"],
        "flickr_300k_url": ["u", "u"], "answers": [["nokia"] * 10, ["1999"] * 10],
        "image_classes": [["c"], ["c"]], "set_name": ["val", "val"], "ocr_tokens": [[], []],
    }  # fmt: skip
    feats = _str_feats(
        rows, question_id=Value("int32"), question_tokens=Sequence(Value("string")), image=IMG,
        image_width=Value("int32"), image_height=Value("int32"),
        answers=Sequence(Value("string")), image_classes=Sequence(Value("string")),
        ocr_tokens=Sequence(Value("string")),
    )  # fmt: skip
    write_hub_snapshot(root, {"validation": _table(rows, feats), "train": _table(rows, feats)})


# name -> (writes the repository in the layout the Hub serves, the split `--data NAME` reads)
REPOS: dict[str, Callable[[Path], None]] = {
    "mmbench": _mmbench,
    "mathvista": _mathvista,
    "mme": _mme,
    "mmmu": _mmmu,
    "pope": _pope,
    "scienceqa-img": _scienceqa,
    "mmstar": _mmstar,
    "textvqa": _textvqa,
}


def _wanted(b: Benchmark, repo: Path) -> set[str]:
    """The repository's files the definition's patterns take (what a copy must hold)."""
    from huggingface_hub.utils import filter_repo_objects

    files = [p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file()]
    return set(filter_repo_objects(files, allow_patterns=list(b.include)))


def _copy_files(folder: Path) -> set[str]:
    return {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and ".cache" not in p.relative_to(folder).parts
    }


@pytest.fixture(scope="module")
def hub_repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, Path]]:
    """Each benchmark's repository (data files and files its command leaves out), by hub id."""
    root = tmp_path_factory.mktemp("repos")
    datasets.disable_progress_bars()
    repos = {}
    for name, write in REPOS.items():
        b = BENCHMARKS.get(name)
        assert b.hub_id is not None and b.revision is not None, name
        write(root / name)
        # Every hub repository has one; no fetch command takes it.
        (root / name / ".gitattributes").write_text("*.parquet filter=lfs\n", encoding="utf-8")
        wanted = _wanted(b, root / name)
        assert wanted and wanted != _copy_files(root / name), name  # some files are left out
        repos[b.hub_id] = (b.revision, root / name)
    return repos


def _online_env(tmp_path: Path, hub: FakeHub, data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "LMMPROBE_"))}
    env.update(
        HF_ENDPOINT=hub.url,
        HF_HOME=str(tmp_path / "hf-home"),
        HF_HUB_CACHE=str(tmp_path / "hub-cache"),
        HF_DATASETS_CACHE=str(tmp_path / "datasets-cache"),
        HF_HUB_DISABLE_TELEMETRY="1",
        LMMPROBE_DATA_DIR=str(data_dir),
        PYTHONPATH=os.pathsep.join(sys.path),
        # The real hf, the interpreter's own; system folders for bash itself.
        PATH=os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
    )
    return env


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("LMMPROBE_DATA_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "loaded-cache")
    yield


def test_the_printed_commands_fetch_the_data_files_with_the_real_hf(
    tmp_path: Path,
    hub_repos: dict[str, tuple[str, Path]],
    offline: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not (Path(sys.executable).parent / "hf").is_file():
        pytest.skip("huggingface_hub's hf command is not installed next to this interpreter")
    data_dir = tmp_path / "bench data"  # a space: the command's quoting must hold
    data_dir.mkdir()
    first, *rest = hub_repos.items()
    with FakeHub(first[0], *first[1], more=dict(rest)) as hub:
        env = _online_env(tmp_path, hub, data_dir)
        for name in REPOS:
            b = BENCHMARKS.get(name)
            proc = _run_in_bash(b.fetch, env, tmp_path)
            assert proc.returncode == 0, f"{name}: {b.fetch}\n{proc.stdout}\n{proc.stderr}"
            assert b.hub_id is not None
            repo = hub_repos[b.hub_id][1]
            assert _copy_files(data_dir / name) == _wanted(b, repo), name
    # Offline, `--data NAME` reads each copy from $LMMPROBE_DATA_DIR/NAME.
    monkeypatch.setenv("LMMPROBE_DATA_DIR", str(data_dir))
    for name in REPOS:
        result = load_source(name)
        assert result.source.startswith(str(data_dir / name)), name
        assert len(result.samples) == 2 and not result.problems, (name, result.problems)


_AUTOMATIC = """
import json, sys
from lmmprobe.data import load_source

out = {}
for name in sys.argv[1:]:
    result = load_source(name)  # no copy, the Hub reachable: the automatic download
    out[name] = {"source": result.source, "n": len(result.samples),
                 "problems": [str(p) for p in result.problems]}
print(json.dumps(out))
"""


def test_the_automatic_download_fetches_the_data_files_and_loads_them(
    tmp_path: Path, hub_repos: dict[str, tuple[str, Path]], offline: None
) -> None:
    first, *rest = hub_repos.items()
    with FakeHub(first[0], *first[1], more=dict(rest)) as hub:
        env = _online_env(tmp_path, hub, tmp_path / "no-copies-here")
        proc = subprocess.run(
            [sys.executable, "-c", _AUTOMATIC, *REPOS],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for name in REPOS:
        b = BENCHMARKS.get(name)
        assert b.hub_id is not None and b.revision is not None
        repo = f"datasets--{b.hub_id.replace('/', '--')}"
        snapshot = tmp_path / "hub-cache" / repo / "snapshots" / b.revision
        # The definition's patterns were downloaded: the data files, nothing else.
        assert _copy_files(snapshot) == _wanted(b, hub_repos[b.hub_id][1]), name
        assert got[name]["source"].startswith(str(snapshot)), (name, got[name])
        assert got[name]["n"] == 2 and got[name]["problems"] == [], (name, got[name])
        # Offline later, the same copy is read from the hub cache.
        result = load_source(name)
        assert result.source.startswith(str(snapshot)), (name, result.source)
        assert len(result.samples) == 2 and not result.problems, name
