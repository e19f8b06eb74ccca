"""What ``hf:`` checks before a run starts (issue 23, items 12 and 18), through the console script.

A hub id while the Hub is unreachable is refused at once with the command that fetches it (it
used to cost minutes of the hub client's retries), or read from the cache alone when it is
there; a ``device`` the machine lacks is refused before any request is sent; and likelihood
ranking passes its key/value cache by the name transformers takes today, so ``apex`` prints no
deprecation warnings.
"""

from __future__ import annotations

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

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from lmmprobe.data import load_source  # noqa: E402
from lmmprobe.formulate import formulate  # noqa: E402
from lmmprobe.models import load_model  # noqa: E402
from lmmprobe.models.tiny import TINY_ARCHS, tiny_model_path  # noqa: E402
from lmmprobe.schema import FormulateConfig, Sample  # noqa: E402
from lmmprobe.store import Store  # noqa: E402

EXE = shutil.which("lmmprobe", path=str(Path(sys.executable).parent))


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


def test_hub_id_without_network_is_refused_at_once_with_the_fetch_command(
    tmp_path: Path, closed_port: int
) -> None:
    env = _unreachable_hub_env(tmp_path, closed_port)
    proc = _lmmprobe(
        "run", "-m", "hf:some-org/some-model,revision=v1.0", "--limit", "2",
        "--db", tmp_path / "db", env=env, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert len(lines) == 1, lines  # one line: no retries logged, no traceback
    assert "Retry" not in lines[0] and f"127.0.0.1:{closed_port}" in lines[0]
    command = lines[0].split("with: ", 1)[1]
    assert shlex.split(command) == [
        "hf", "download", "some-org/some-model", "--revision", "v1.0",
        "--local-dir", "./checkpoints/some-model",
    ]  # fmt: skip
    assert "-m hf:./checkpoints/some-model" in lines[0]
    # The command is one the installed `hf` accepts: run through a real shell it gets past its
    # option parsing (exit 2 is a usage error) to the download, which offline mode stops.
    hf = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**env, "HF_HUB_OFFLINE": "1",
             "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"},
    )  # fmt: skip
    assert hf.returncode == 1 and "offline" in hf.stdout + hf.stderr, hf.stdout + hf.stderr


def test_a_cached_hub_checkpoint_loads_without_waiting_for_the_hub(
    tmp_path: Path, closed_port: int, tiny_cache: Path
) -> None:
    # The hub cache's layout, as `hf download ORG/NAME` leaves it.
    built = tiny_model_path("llava", cache_dir=tiny_cache)
    env = _unreachable_hub_env(tmp_path, closed_port)
    repo = tmp_path / "hf-home" / "hub" / "models--acme--llava-mini"
    sha = "0123456789abcdef0123456789abcdef01234567"
    shutil.copytree(built, repo / "snapshots" / sha)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(sha)
    proc = _lmmprobe(
        "run", "-q", "-m", "hf:acme/llava-mini,device=cpu,dtype=float32",
        "-d", "demo,n=2,size=64", "--max-new-tokens", "2", "--db", tmp_path / "db",
        env=env, cwd=tmp_path,
    )  # fmt: skip
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
