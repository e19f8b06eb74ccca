"""Helpers for benchmark fixtures in each benchmark's published layout.

Import them in a test module: ``from tests.data.benchmarks.conftest import tiny_png,
write_hub_snapshot``. `write_hub_snapshot` lays parquet files out as the Hugging Face Hub serves a
dataset (``data/{split}-00000-of-00001.parquet``, or ``{config}/{split}-...`` with the card's
``configs:`` front matter), which ``--data NAME,path=FOLDER`` then reads as it would a
``hf download`` of the real thing.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs

import datasets
import pytest
from datasets import Sequence as _Seq
from datasets import Value as _Value
from PIL import Image
from tests.hub_server import Answer, LoopbackHub

from lmmprobe.models.base import MODELS, Capabilities, ModelIdentity
from lmmprobe.schema import Request, Response


def tiny_png(
    color: tuple[int, int, int] | str = (200, 30, 30), size: tuple[int, int] = (8, 8)
) -> bytes:
    """Encoded bytes of a small one-colour PNG (give each row its own colour to tell them apart)."""
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def _card(folder: Path) -> str:
    # The front matter the Hub writes for a dataset with configs: one entry per config folder,
    # one data_files pattern per split.
    lines = ["---", "configs:"]
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        splits = sorted({f.name.split("-", 1)[0] for f in sub.glob("*.parquet")})
        if not splits:
            continue
        lines += [f"- config_name: {sub.name}", "  data_files:"]
        for split in splits:
            lines += [f"  - split: {split}", f"    path: {sub.name}/{split}-*"]
    lines += ["---", "", "Test fixture written by tests/data/benchmarks/conftest.py.", ""]
    return "\n".join(lines)


def write_hub_snapshot(
    folder: Path, split_files: Mapping[str, Any], *, config: str | None = None
) -> Path:
    """Write `datasets.Dataset` objects as a hub snapshot folder, one parquet file per split.

    Args:
        folder: The snapshot folder (created).
        split_files: ``{"dev": Dataset, ...}``; build each with ``Dataset.from_dict(...,
            features=Features(...))`` in the benchmark's published schema (``Image()`` columns
            are stored as the Hub stores them: ``{"bytes", "path"}`` structs).
        config: Write under ``{config}/`` and (re)write README.md naming every config folder,
            as the Hub lays out a dataset with several configs.

    Returns:
        `folder`.

    """
    base = folder / (config if config is not None else "data")
    base.mkdir(parents=True, exist_ok=True)
    datasets.disable_progress_bars()  # tests' stderr stays readable
    for split, ds in split_files.items():
        ds.to_parquet(str(base / f"{split}-00000-of-00001.parquet"))
    if config is not None:
        (folder / "README.md").write_text(_card(folder), encoding="utf-8")
    return folder


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty ``$LMMPROBE_DATA_DIR`` for the test, with the Hub switched off."""
    root = tmp_path / "lmmprobe-data"
    root.mkdir()
    monkeypatch.setenv("LMMPROBE_DATA_DIR", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-hub-cache"))
    yield root


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


class FakeHub(LoopbackHub):
    """A stand-in for the Hugging Face Hub on loopback, serving one dataset repo at one commit.

    It speaks the part of the Hub's HTTP API that `datasets.load_dataset(ID, revision=SHA)` uses
    (revision info, tree listing, paths-info, ``resolve`` downloads with ``X-Repo-Commit``), so a
    test can point ``HF_ENDPOINT`` at `url` and load as if online. `requests` records each
    ``METHOD path`` asked. Use as a context manager.
    """

    def __init__(
        self,
        repo: str,
        sha: str,
        folder: Path,
        more: Mapping[str, tuple[str, Path]] | None = None,
    ) -> None:
        """Serve the files under `folder` as dataset `repo` at commit `sha`.

        `more` serves further repos on the same endpoint: ``{repo: (sha, folder)}``.
        """
        self.repo, self.sha = repo, sha
        self.repos = {
            name: (commit, _files(path))
            for name, (commit, path) in {repo: (sha, folder), **(more or {})}.items()
        }
        self.files = self.repos[repo][1]
        super().__init__()

    @staticmethod
    def _entry(files: Mapping[str, bytes], path: str) -> dict[str, Any]:
        if path in files:
            data = files[path]
            return {
                "type": "file",
                "oid": hashlib.sha1(data).hexdigest(),
                "size": len(data),
                "path": path,
            }
        return {
            "type": "directory",
            "oid": hashlib.sha1(path.encode()).hexdigest(),
            "size": 0,
            "path": path,
        }

    def _tree(self, files: Mapping[str, bytes], sub: str, recursive: bool) -> list[dict[str, Any]]:
        prefix = f"{sub.strip('/')}/" if sub.strip("/") else ""
        found: dict[str, dict[str, Any]] = {}
        for name in files:
            if not name.startswith(prefix):
                continue
            parts = name[len(prefix) :].split("/")
            if not recursive and len(parts) > 1:
                found.setdefault(prefix + parts[0], self._entry(files, prefix + parts[0]))
                continue
            for i in range(1, len(parts)):
                folder = prefix + "/".join(parts[:i])
                found.setdefault(folder, self._entry(files, folder))
            found[name] = self._entry(files, name)
        return list(found.values())

    def answer(self, path: str, query: str, body: bytes) -> Answer:
        """The status, body and headers the Hub gives for one request."""
        for repo, (sha, files) in self.repos.items():
            if path.startswith((f"/datasets/{repo}/", f"/api/datasets/{repo}/")) or path == (
                f"/api/datasets/{repo}"
            ):
                return self._answer(repo, sha, files, path, query, body)
        return 404, b'{"error":"not found"}', {"X-Error-Code": "RepoNotFound"}

    def _answer(
        self, repo: str, sha: str, files: Mapping[str, bytes], path: str, query: str, body: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        resolve = f"/datasets/{repo}/resolve/"
        api = f"/api/datasets/{repo}"
        if path.startswith(resolve):
            name = path[len(resolve) :].partition("/")[2]
            if name not in files:
                return 404, b'{"error":"Entry not found"}', {"X-Error-Code": "EntryNotFound"}
            data = files[name]
            etag = f'"{hashlib.sha1(data).hexdigest()}"'
            headers = {
                "Content-Type": "application/octet-stream",
                "X-Repo-Commit": sha,
                "ETag": etag,
            }
            return 200, data, headers
        if path == api or path.startswith(f"{api}/revision/"):
            info = {
                "id": repo,
                "sha": sha,
                "private": False,
                "gated": False,
                "disabled": False,
                "tags": [],
                "cardData": {},
                "siblings": [{"rfilename": f} for f in files],
            }
            return 200, json.dumps(info).encode(), {}
        if path.startswith(f"{api}/tree/"):
            sub = path[len(f"{api}/tree/") :].partition("/")[2]
            recursive = "recursive=true" in query.lower()
            return 200, json.dumps(self._tree(files, sub, recursive)).encode(), {}
        if path.startswith(f"{api}/paths-info/"):
            try:
                asked = json.loads(body)["paths"]
            except ValueError:
                asked = parse_qs(body.decode()).get("paths", [])
            known = [p for p in asked if p in files or any(f.startswith(f"{p}/") for f in files)]
            return 200, json.dumps([self._entry(files, p) for p in known]).encode(), {}
        return 404, b'{"error":"not found"}', {"X-Error-Code": "RepoNotFound"}


_TAG = re.compile(r"#(\w+)")


@dataclass
class Script:
    """A scripted model's name, its replies by tag, and the prompts it was sent by tag."""

    name: str
    replies: dict[str, str] = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)


def scripted_model(name: str) -> Script:
    """Register model `name`: it replies ``replies[tag]`` for the ``#tag`` its question carries.

    An external-model stand-in for end-to-end runs on benchmark fixtures (each question holds
    ``#tag``); the prompts it receives are recorded by tag, so a test can check the wording.
    """
    if name in MODELS.names():
        # This module may run twice (imported as a conftest and by a test module's path),
        # and so may the test module that calls this: each copy must fill the one script
        # the registered model reads, not a second one the registry has forgotten.
        # (Its Script class may be the other copy's, hence the test by name.)
        known = getattr(MODELS.get(name), "script", None)
        if type(known).__name__ == "Script":
            return cast(Script, known)
    script = Script(name)

    class Scripted:
        def __init__(self, target: str | None, options: dict[str, str]) -> None:
            self.identity = ModelIdentity(backend=name, name=name)
            self.capabilities = Capabilities(multi_image=True, max_batch_size=16)

        def generate(self, requests: Sequence[Request]) -> list[Response]:
            out = []
            for r in requests:
                tag = _TAG.search(r.prompt)
                assert tag is not None, r.prompt
                script.prompts[tag.group(1)] = r.prompt
                out.append(Response(key=r.key, text=script.replies[tag.group(1)]))
            return out

        def loglikelihood(self, requests: Sequence[Request]) -> list[Response]:
            raise NotImplementedError

    Scripted.script = script  # type: ignore[attr-defined]
    MODELS.register(name, summary="test: scripted replies")(Scripted)
    return script


@pytest.fixture
def own_datasets_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`datasets` caches a local folder by its name and config, not by its files: two fixtures
    in folders of the same name would share one cache entry. Each test gets its own cache."""
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "datasets-cache")


# MathVista's `metadata` struct, its features and one row: shared by the benchmark's tests and the
# prediction readers' (a test module imported by another would register its scripted model twice).
MATHVISTA_META = {
    "category": _Value("string"), "context": _Value("string"), "grade": _Value("string"),
    "img_height": _Value("int64"), "img_width": _Value("int64"), "language": _Value("string"),
    "skills": _Seq(_Value("string")), "source": _Value("string"), "split": _Value("string"),
    "task": _Value("string"),
}  # fmt: skip
MATHVISTA_META_ROW = {
    "category": "math-targeted-vqa", "context": "bar chart", "grade": "high school",
    "img_height": 8, "img_width": 8, "language": "english", "skills": ["arithmetic"],
    "source": "x", "split": "testmini", "task": "figure question answering",
}  # fmt: skip


def break_column_name(path: Path, table: Any, marker: str = "QmarkQ") -> None:
    """Write `table` (a pyarrow table with a column named `marker`) to the parquet file `path`,
    then make that name invalid UTF-8: each copy of its bytes in the footer is replaced by as
    many bytes of ``0xAC`` (a continuation byte with no lead), so the footer still parses."""
    import pyarrow.parquet as pq

    pq.write_table(table, path, store_schema=False)
    data = path.read_bytes()
    raw = marker.encode()
    assert data.count(raw) >= 1
    path.write_bytes(data.replace(raw, b"\xac" * len(raw)))
