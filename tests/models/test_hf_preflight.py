"""What ``hf:`` checks before a run starts (issue 23, items 12 and 18), through the console script.

A hub id while the Hub is unreachable is refused at once with the command that fetches it (it
used to cost minutes of the hub client's retries), or read from the cache alone when it is
there; a ``device`` the machine lacks is refused before any request is sent; and likelihood
ranking passes its key/value cache by the name transformers takes today, so ``apex`` prints no
deprecation warnings.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.hub_server import Answer, LoopbackHub

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from lmmprobe.data import load_source  # noqa: E402
from lmmprobe.formulate import formulate  # noqa: E402
from lmmprobe.models import load_model  # noqa: E402
from lmmprobe.models.tiny import TINY_ARCHS, tiny_model_path  # noqa: E402
from lmmprobe.schema import FormulateConfig, Sample  # noqa: E402
from lmmprobe.store import Store  # noqa: E402

EXE = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))


class ModelHub(LoopbackHub):
    """The Hugging Face Hub on loopback, serving one model repo (any revision) from a folder.

    It answers what ``hf download ORG/NAME --local-dir DIR`` asks: the revision's info, the
    recursive tree listing, and ``resolve`` downloads (HEAD and GET) with ``X-Repo-Commit``.
    """

    def __init__(self, repo: str, folder: Path, sha: str = "a" * 40) -> None:
        self.repo, self.sha = repo, sha
        self.files = {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*"))
            if p.is_file()
        }
        super().__init__()

    def _oid(self, name: str) -> str:
        return hashlib.sha1(self.files[name]).hexdigest()

    def answer(self, path: str, query: str, body: bytes) -> Answer:
        resolve, api = f"/{self.repo}/resolve/", f"/api/models/{self.repo}"
        if path.startswith(resolve):
            name = path[len(resolve) :].partition("/")[2]
            if name not in self.files:
                return 404, b'{"error":"Entry not found"}', {"X-Error-Code": "EntryNotFound"}
            return (
                200,
                self.files[name],
                {
                    "Content-Type": "application/octet-stream",
                    "X-Repo-Commit": self.sha,
                    "ETag": f'"{self._oid(name)}"',
                },
            )
        if path == api or path.startswith(f"{api}/revision/"):
            info = {
                "id": self.repo,
                "sha": self.sha,
                "private": False,
                "gated": False,
                "disabled": False,
                "tags": [],
                "siblings": [{"rfilename": f} for f in self.files],
            }
            return 200, json.dumps(info).encode(), {}
        if path.startswith(f"{api}/tree/"):
            tree = [
                {"type": "file", "oid": self._oid(f), "size": len(d), "path": f}
                for f, d in self.files.items()
            ]
            return 200, json.dumps(tree).encode(), {}
        return 404, b'{"error":"not found"}', {"X-Error-Code": "RepoNotFound"}


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections: bound (so nothing else takes it), not listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def _unreachable_hub_env(tmp_path: Path, port: int) -> dict[str, str]:
    """The environment of a machine whose Hub does not answer and whose hub cache is empty."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    }
    env.update(HF_ENDPOINT=f"http://127.0.0.1:{port}", HF_HOME=str(tmp_path / "hf-home"))
    env.pop("HF_HUB_CACHE", None)
    return env


def _lmmprobe(
    *args: str | Path, env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    assert EXE is not None, "pip install -e . installs the lmmprobe console script"
    # Before the preflight the hub client retried for ~150 s; the timeout fails such a run.
    return subprocess.run(
        [EXE, *map(str, args)], capture_output=True, text=True, timeout=120, env=env, cwd=cwd
    )


def _shell(command: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a printed command through a real shell, with this environment's `hf` on PATH."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=120, cwd=cwd,
        env={**env, "PATH": path},
    )  # fmt: skip


def test_hub_id_without_network_is_refused_at_once_with_the_command_that_fetches_it(
    tmp_path: Path, closed_port: int, tiny_cache: Path
) -> None:
    offline = _unreachable_hub_env(tmp_path, closed_port)
    proc = _lmmprobe(
        "run", "-m", "hf:acme/llava-mini,revision=v1.0,device=cpu,dtype=float32",
        "-d", "demo,n=2,size=64", "--max-new-tokens", "2", "--db", tmp_path / "db",
        env=offline, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, lines  # one line: no retries logged, no traceback
    assert "Retry" not in lines[0] and f"127.0.0.1:{closed_port}" in lines[0]
    command = lines[0].split("with: ", 1)[1]
    assert shlex.split(command) == [
        "hf", "download", "acme/llava-mini", "--revision", "v1.0",
        "--local-dir", "./checkpoints/llava-mini",
    ]  # fmt: skip
    assert "then use -m hf:./checkpoints/llava-mini" in lines[0]
    # Where the Hub is reachable, the command as printed, through a real shell, fetches the
    # checkpoint; the copy then runs with the Hub unreachable again.
    with ModelHub("acme/llava-mini", tiny_model_path("llava", cache_dir=tiny_cache)) as hub:
        fetched = _shell(command, {**offline, "HF_ENDPOINT": hub.url}, tmp_path)
    assert fetched.returncode == 0, fetched.stderr
    assert (tmp_path / "checkpoints" / "llava-mini" / "model.safetensors").is_file()
    run = _lmmprobe(
        "run", "-q", "-m", "hf:./checkpoints/llava-mini,device=cpu,dtype=float32",
        "-d", "demo,n=2,size=64", "--max-new-tokens", "2", "--db", tmp_path / "db",
        env=offline, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr


def test_a_cached_hub_checkpoint_loads_without_waiting_for_the_hub(
    tmp_path: Path, closed_port: int, tiny_cache: Path
) -> None:
    env = _unreachable_hub_env(tmp_path, closed_port)
    # Into the hub cache (no --local-dir), as a download on a machine with network leaves it.
    with ModelHub("acme/llava-mini", tiny_model_path("llava", cache_dir=tiny_cache)) as hub:
        fetched = _shell("hf download acme/llava-mini", {**env, "HF_ENDPOINT": hub.url}, tmp_path)
    assert fetched.returncode == 0, fetched.stderr
    proc = _lmmprobe(
        "run", "-q", "-m", "hf:acme/llava-mini,device=cpu,dtype=float32",
        "-d", "demo,n=2,size=64", "--max-new-tokens", "2", "--db", tmp_path / "db",
        env=env, cwd=tmp_path,
    )  # fmt: skip
    # Before, the hub client retried every file for minutes before falling back to the cache.
    assert proc.returncode == 0, proc.stderr
    assert "Retry" not in proc.stderr and "thrown while requesting" not in proc.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="refusing device=cuda needs a CPU-only torch")
def test_device_cuda_without_cuda_is_refused_before_any_request(tmp_path: Path) -> None:
    proc = _lmmprobe(
        "run", "-m", "random", "-m", "hf:tiny-llava,device=cuda", "--limit", "2",
        "--db", tmp_path / "db", env=dict(os.environ), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert "device=cuda" in lines[0] and "available: device=cpu" in lines[0]
    # Refused before the run: no run recorded, so no request was sent (not even random's).
    with Store(tmp_path / "db") as store:
        assert store.list_runs() == []


def test_a_gpu_index_past_the_last_or_malformed_is_refused_naming_the_option() -> None:
    missing = torch.cuda.device_count()  # cuda:N for N = the count never exists
    with pytest.raises(ValueError, match=f"device=cuda:{missing}.*available: device=cpu"):
        load_model(f"hf:tiny-llava,device=cuda:{missing}")
    with pytest.raises(ValueError, match="device=cuda:x: must be auto, cpu, cuda or cuda:N"):
        load_model("hf:tiny-llava,device=cuda:x")


# -- item 18: no deprecation warnings from our calls ------------------------------------------


@pytest.mark.parametrize("arch", TINY_ARCHS)
def test_likelihood_ranking_raises_no_deprecation_warning(arch: str, tiny_cache: Path) -> None:
    model = load_model(f"hf:{tiny_model_path(arch, cache_dir=tiny_cache)},device=cpu,dtype=float32")
    img = load_source("demo,n=1,size=64").samples[0].images[0]
    sample = Sample(
        id="long", images=[img], question="Describe the picture.", answer=0,
        choices=["a red star on gray", "two green squares and a circle"],
    )  # fmt: skip
    req = formulate(sample, config=FormulateConfig(method="likelihood"))
    req.key = "k"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = model.loglikelihood([req])[0]  # type: ignore[union-attr]
    assert max(scores.token_counts or [0]) > 1  # the cached continuation pass ran
    assert not [w for w in caught if issubclass(w.category, FutureWarning)], [
        str(w.message) for w in caught
    ]


def test_apex_on_a_tiny_hf_model_prints_no_future_warnings(
    tmp_path: Path, tiny_cache: Path
) -> None:
    spec = f"hf:{tiny_model_path('llava', cache_dir=tiny_cache)},device=cpu,dtype=float32"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = _lmmprobe(
        "apex", "Can models identify rotated images?", "-m", spec, "-m", "random",
        "--out", tmp_path / "apex", "--cache-dir", tmp_path / "cache",
        "--images-per-answer", "3", "--image-size", "32", "--bootstrap", "50", "-q",
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    # Before: one FutureWarning per experiment whose answers span several tokens.
    assert "Warning" not in proc.stderr and "deprecated" not in proc.stderr, proc.stderr
