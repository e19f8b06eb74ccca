"""``lmmprobe serve`` through the real console script: URL, token, refusals, missing extra."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from PIL import Image

import lmmprobe

LMMPROBE = str(Path(sys.executable).with_name("lmmprobe"))


@contextmanager
def serving(
    *args: str, env: dict[str, str] | None = None, log: list[str] | None = None
) -> Iterator[str]:
    """Run ``lmmprobe serve ARGS --port 0`` and yield the URL it prints; stop it after.

    `log`, when given, receives what the server wrote to stderr once it has stopped.
    """
    proc = subprocess.Popen(
        [LMMPROBE, "serve", *args, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert " at http://" in line, (line, proc.stderr.read() if proc.poll() is not None else "")
        yield line.rsplit(" at ", 1)[1].strip()
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        if log is not None:
            log.append(err)


def test_serve_prints_a_url_that_answers_with_the_runs(demo_db: tuple[Path, str]) -> None:
    db, run_id = demo_db
    with serving("--db", str(db)) as url:
        assert url.startswith("http://127.0.0.1:") and "token" not in url
        page = httpx.get(url, timeout=10)
        assert page.status_code == 200 and run_id in page.text


def test_serve_beyond_loopback_makes_up_a_token_and_requires_it(
    demo_db: tuple[Path, str],
) -> None:
    db, _ = demo_db
    with serving("--db", str(db), "--host", "0.0.0.0") as url:
        assert "?token=" in url
        base, token = url.split("?token=")
        assert len(token) >= 32
        assert httpx.get(base, timeout=10).status_code == 401
        with httpx.Client(timeout=10, follow_redirects=True) as c:
            assert c.get(url).status_code == 200  # the token grants a cookie


def test_serve_given_a_token_on_loopback_requires_it(demo_db: tuple[Path, str]) -> None:
    db, _ = demo_db
    with serving("--db", str(db), env={"LMMPROBE_SERVE_TOKEN": "s3cret-token-of-the-test"}) as url:
        assert url.endswith("?token=s3cret-token-of-the-test")
        assert httpx.get(url.split("?")[0], timeout=10).status_code == 401


def test_serve_without_a_store_says_what_to_do(tmp_path: Path) -> None:
    proc = subprocess.run(
        [LMMPROBE, "serve", "--db", str(tmp_path / "none.db"), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "no store at" in proc.stderr and "lmmprobe run" in proc.stderr
    assert not (tmp_path / "none.db").exists()


def test_serve_without_fastapi_names_the_extra_to_install(
    tmp_path: Path, demo_db: tuple[Path, str]
) -> None:
    # A fastapi that cannot be imported, ahead of the real one on the path.
    fake = tmp_path / "shadow" / "fastapi"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError(\"No module named 'fastapi'\")\n")
    proc = subprocess.run(
        [LMMPROBE, "serve", "--db", str(demo_db[0]), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "shadow")},
    )
    assert proc.returncode == 2
    assert "pip install 'lmmprobe[serve]'" in proc.stderr


def test_serve_refuses_a_recorded_image_that_is_no_longer_a_readable_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Re-test 5 of issue 34, finding 6: the recorded file was read whole, whatever it had
    # become: a FIFO held the request's worker forever, a link to /dev/zero filled the
    # server's memory (9 GB in a minute). Now each is a 404 at once and the server goes on.
    data = tmp_path / "data"
    data.mkdir()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(data / "red.png")
    row = '{"id": "s0", "images": ["red.png"], "question": "Colour?", "choices": ["red", "blue"]'
    (data / "set.jsonl").write_text(row + ', "answer": 0}\n')
    monkeypatch.chdir(tmp_path)
    run_id = lmmprobe.evaluate(db="l.db", data="data/set.jsonl", models=["first"], out="o").run_id
    image = data / "red.png"
    # A decoding cap of 1,000 pixels makes the file cap 16 MiB and 4,000 bytes.
    log: list[str] = []
    with serving("--db", "l.db", env={"LMMPROBE_MAX_IMAGE_PIXELS": "1000"}, log=log) as url:
        get = f"{url.rstrip('/')}/images/{run_id}/s0/0"
        assert httpx.get(get, timeout=10).headers["content-type"] == "image/png"
        image.unlink()
        os.mkfifo(image)
        fifo = httpx.get(get, timeout=10)
        assert fifo.status_code == 404 and "cannot be read now" in fifo.text
        image.unlink()
        with image.open("wb") as f:
            f.truncate((16 << 20) + 4001)  # sparse: no disk used
        large = httpx.get(get, timeout=10)
        assert large.status_code == 404 and "cannot be read now" in large.text
        image.unlink()
        image.symlink_to("/dev/zero")
        zero = httpx.get(get, timeout=10)
        assert zero.status_code == 404 and "cannot be read now" in zero.text
        assert httpx.get(url, timeout=10).status_code == 200  # no worker was held
    assert "not a regular file" in log[0] and "larger than 16,781,216 bytes" in log[0]
