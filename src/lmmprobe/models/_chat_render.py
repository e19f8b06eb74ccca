"""A checkpoint's chat template rendered in a child process, bounded in time, memory and length.

The chat template comes with the checkpoint: it is outside text, and transformers renders it in
Jinja's sandbox, which caps one ``range`` at 100,000 items but not loops inside loops, nor
``{{ 'x' * 4000000000 }}``. Checking it once at load cannot bound it, since a template can
branch on a message's text. So each `hf:` model renders in a long-lived child of its own (a
fresh interpreter, ``python -m lmmprobe.models._chat_render``, holding no copy of the weights;
not multiprocessing's spawn, which would run the caller's own ``__main__`` script again in
the child, and which a daemonic process may not use), which loads the checkpoint's processor (its tokenizer and template side; no weights) and calls the processor's
own ``apply_chat_template(..., tokenize=False)`` with the arguments the backend gives, so what
it renders is exactly what the processor renders in process. The bounds:

- time: a render that takes longer than `RenderLimits.timeout_s` has its child killed (the
  next render starts a new one) and fails;
- memory: once its processor is loaded, the child's address space may grow by at most
  `RenderLimits.memory_mib` (``RLIMIT_AS``, Linux): past it a render fails with a
  `MemoryError` the child reports;
- length: a rendering longer than `RenderLimits.max_chars` is not sent back; it fails.

The child starts without PyTorch where it can (``light``): importing torch is most of its
start (about 4 s of CPU with it, 1 s without, and a fifth of the memory:
``benchmarks/chat_template_render.py``), yet a render with
``tokenize=False`` never touches a tensor; it reads the tokenizer, the template and the
processor's own class. So when the parent names the classes it loaded (`processor_classes`:
only for a processor whose code is transformers' own, not a checkpoint's), the child makes
torch unimportable before it imports transformers and keeps going only if it loaded a processor
of the same class with a tokenizer of the same class and the same parts. Otherwise (a class
differs, the load fails, torch was imported already) it says so and a child with torch takes
its place, as every child did before; the renderer remembers and starts the torch one from
then on. Image and video processors may come in another backend (PIL rather than torchvision):
they are not called when rendering text.

A failed render raises `TemplateFailed` (`TemplateRejected` when the template itself raised a
Jinja error, e.g. ``raise_exception``); the backend makes it that request's error. The child
ends with its model (`ChatTemplateRenderer.close`, or when the renderer is collected, or at
exit), when its parent's end closes its pipe, or when its parent is gone (a thread watches).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import IO, Any

from lmmprobe.schema.sample import MAX_PROMPT_CHARS

DEFAULT_TIMEOUT_S = 10.0
"""Seconds one render may take (real templates take milliseconds)."""
DEFAULT_MEMORY_MIB = 2048
"""MiB the child's address space may grow by while it renders, past its loaded processor."""
MAX_RENDERED_CHARS = 2 * MAX_PROMPT_CHARS
"""The longest rendering kept: twice the text one request may hold (`MAX_PROMPT_CHARS`), so a
template may add as much again of its own."""
START_TIMEOUT_S = 600.0
"""Seconds the child may take to start and load the processor (as the parent loaded it)."""
_MESSAGE_CHARS = 500
"""How much of an error's text the child sends back (a template chooses what it raises)."""
_TORCH_MODULES = ("torch", "torchvision", "torchaudio")
"""What a light child makes unimportable: transformers then finds no torch (and no library
built on it) and loads no model code, which rendering text does not need."""
_PARTS = ("tokenizer", "image_processor", "video_processor", "feature_extractor")
"""A processor's parts whose presence a light child's processor must share with the parent's."""


@dataclass(frozen=True)
class RenderLimits:
    """The bounds of one model's renders (see the module docstring)."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mib: int = DEFAULT_MEMORY_MIB
    max_chars: int = MAX_RENDERED_CHARS


class TemplateFailed(Exception):
    """A render failed; the message completes "the chat template of MODEL ..."."""


class TemplateRejected(TemplateFailed):
    """The template raised a Jinja error (it refuses the conversation); the message is Jinja's."""


def processor_classes(processor: Any) -> dict[str, str] | None:
    """What a light child's processor must match: its class, its tokenizer's, its parts.

    None when the processor's class is not transformers' own (remote code, which may import
    torch itself): its renderer starts with torch.
    """
    cls = type(processor)
    if not cls.__module__.startswith("transformers."):
        return None
    classes = {"processor": f"{cls.__module__}.{cls.__qualname__}"}
    for part in _PARTS:
        value = getattr(processor, part, None)
        if value is not None:
            # The tokenizer's class matters (special tokens, how kwargs are split); of the
            # others only that they exist (a processor's override may read their settings).
            kind = type(value)
            classes[part] = f"{kind.__module__}.{kind.__qualname__}" if part == "tokenizer" else ""
    return classes


class ChatTemplateRenderer:
    """Renders through one checkpoint's processor in a child process, under `RenderLimits`.

    The child starts on the first `render` and is reused; one render at a time (a lock). A
    process forked from the one that started it (its pipe shared) starts a child of its own.
    """

    def __init__(
        self,
        path: str,
        load_kwargs: Mapping[str, Any],
        limits: RenderLimits | None = None,
        *,
        classes: Mapping[str, str] | None = None,
    ) -> None:
        """Remember how to load the processor: `path` and `load_kwargs` as the parent loaded it.

        `classes` (`processor_classes` of the parent's processor) lets the child start without
        torch when it loads the same; without it the child imports torch, as transformers does.
        """
        self.path = path
        self.load_kwargs = dict(load_kwargs)
        self.limits = limits or RenderLimits()
        self.classes = dict(classes) if classes is not None else None
        self.light: bool | None = None
        """Whether the running (or last) child renders without torch; None before the first."""
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._owner = 0
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self.starts = 0
        """How many children were started (the first, then one after each kill); a light child
        that declined counts with the one that took its place."""
        self.start_s: float | None = None
        """Seconds the last child took to start and load its processor."""

    def render(self, conversation: list[dict[str, Any]], **kwargs: Any) -> str:
        """``processor.apply_chat_template(conversation, tokenize=False, **kwargs)``, bounded.

        Raises:
            TemplateRejected: The template raised a Jinja error.
            TemplateFailed: It raised another error, ran past the time or memory bound, rendered
                more than `RenderLimits.max_chars`, or its child ended while it rendered.
            RuntimeError: The child could not start or load the processor.

        """
        job = (conversation, {**kwargs, "tokenize": False})
        with self._lock:
            conn = self._started()
            try:
                conn.send(job)
            except (BrokenPipeError, EOFError, OSError):
                # The child ended between renders (not this render's doing): a new one.
                self._stop()
                conn = self._started()
                conn.send(job)
            if not conn.poll(self.limits.timeout_s):
                self._stop()
                raise TemplateFailed(
                    f"did not render within {self.limits.timeout_s:g} s (a runaway loop?); its "
                    "renderer was stopped (the hf option chat_template_timeout sets the bound)"
                )
            try:
                kind, value = conn.recv()
            except (EOFError, OSError):
                code = self._stop()
                raise TemplateFailed(
                    f"ended its renderer while rendering (exit code {code})"
                ) from None
        if kind == "ok":
            return str(value)
        if kind == "rejected":
            raise TemplateRejected(value)
        if kind == "memory":
            raise TemplateFailed(
                f"needed more than {self.limits.memory_mib:,} MiB to render (the hf option "
                "chat_template_memory sets the bound)"
            )
        if kind == "too_long":
            raise TemplateFailed(
                f"rendered {int(value):,} characters, more than the {self.limits.max_chars:,} "
                "a prompt may hold"
            )
        raise TemplateFailed(f"failed on this conversation ({value})")

    def close(self) -> None:
        """End the child (it is started again by a later `render`); safe to call twice."""
        with self._lock:
            self._stop(gently=True)

    def _started(self) -> Connection:
        if self._conn is not None and self._owner != os.getpid():
            # Forked: the pipe and the child are the parent's, to be left alone.
            if self._finalizer is not None:
                self._finalizer.detach()
            self._proc = self._conn = self._finalizer = None
        if self._conn is None:
            self._start()
        assert self._conn is not None
        return self._conn

    def _start(self) -> None:
        self.starts += 1
        # What the child says on stderr is kept for a failed start's message.
        light = self.classes is not None and self.light is not False
        with tempfile.TemporaryFile() as log:
            reply = self._spawn(log, light)
        if reply is not None and reply[0] == "heavy":
            # It needs torch after all: a child with it, from now on.
            self._stop(gently=True)
            light = False
            with tempfile.TemporaryFile() as log:
                reply = self._spawn(log, light)
        self.light = light
        if reply is None:
            self._stop()
            raise RuntimeError(
                f"the chat template renderer of {self.path} did not start within "
                f"{START_TIMEOUT_S:g} s"
            )
        if reply[0] != "ready":
            self._stop()
            raise RuntimeError(
                f"the chat template renderer of {self.path} could not load its processor: "
                f"{reply[1]}"
            )

    def _spawn(self, log: IO[bytes], light: bool) -> tuple[str, Any] | None:
        """Start a child and wait until it has loaded the processor: its first reply, if any.

        A `light` child loads it without torch and may reply ``("heavy", why)`` instead.
        """
        ours, theirs = socket.socketpair()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-P", "-m", __name__, str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                env=env,
            )
        finally:
            theirs.close()
        conn = Connection(ours.detach())
        self._proc, self._conn, self._owner = proc, conn, os.getpid()
        self._finalizer = weakref.finalize(self, _shutdown, proc, conn, os.getpid())
        try:
            conn.send(
                (
                    self.path,
                    self.load_kwargs,
                    self.limits.memory_mib,
                    self.limits.max_chars,
                    self.classes if light else None,
                )
            )
            reply: tuple[str, Any] | None = conn.recv() if conn.poll(START_TIMEOUT_S) else None
        except (EOFError, OSError):
            code = self._stop()
            log.seek(0)
            said = log.read().decode("utf-8", "replace").strip().splitlines() or [""]
            return ("failed", f"it ended while starting (exit code {code}) {said[-1]}".strip())
        self.start_s = time.monotonic() - started
        return reply

    def _stop(self, *, gently: bool = False) -> int | None:
        """End the child (asked first when `gently`, else killed); its exit code."""
        proc, conn, finalizer = self._proc, self._conn, self._finalizer
        self._proc = self._conn = self._finalizer = None
        if finalizer is not None:
            finalizer.detach()
        if proc is None or conn is None:
            return None
        return _shutdown(proc, conn, os.getpid(), gently=gently)


def _shutdown(
    proc: subprocess.Popen[bytes], conn: Connection, owner: int, *, gently: bool = True
) -> int | None:
    """End a child: asked to stop (when `gently`), killed if it does not within a second."""
    if owner != os.getpid():
        return None  # a forked copy: the child is the parent's
    if gently:
        try:
            conn.send(None)
            proc.wait(1.0)
        except (OSError, subprocess.TimeoutExpired):
            pass
    if proc.poll() is None:
        proc.kill()
    code = proc.wait()
    conn.close()
    return code


# -- the child --------------------------------------------------------------------------------


def serve(conn: Connection) -> None:
    """The child's loop: load the processor, cap memory, then render each job until told to stop.

    First message: ``(path, load_kwargs, memory_mib, max_chars, classes)``; with `classes`
    (`processor_classes`) the processor is loaded without torch. Replies: ``("ready", None)``,
    ``("failed", why)`` or, without torch, ``("heavy", why)`` once; then per job ``("ok",
    text)``, ``("rejected", jinja's message)``, ``("memory", None)``, ``("too_long", length)``
    or ``("error", "Type: message")``.
    """
    parent = os.getppid()
    # Ctrl-C in the terminal reaches the whole process group: the parent decides, and ends this.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    path, load_kwargs, memory_mib, max_chars, classes = conn.recv()
    if classes is not None:
        why = _without_torch()
        if why is None:
            try:
                processor = _load_processor(path, load_kwargs)
            except Exception as exc:  # perhaps for want of torch: a child with it will tell
                why = f"it did not load without torch ({_short(exc)})"
            else:
                loaded = processor_classes(processor)
                if loaded != classes:
                    why = f"without torch it loaded {loaded}, not {classes}"
        if why is not None:
            conn.send(("heavy", why))
            return
    else:
        try:
            processor = _load_processor(path, load_kwargs)
        except Exception as exc:  # told to the parent, which raises it there
            conn.send(("failed", _short(exc)))
            return
    from jinja2 import TemplateError

    _cap_address_space(memory_mib)
    conn.send(("ready", None))
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if job is None:
            return
        conversation, kwargs = job
        try:
            text = str(processor.apply_chat_template(conversation, **kwargs))
        except MemoryError:
            reply: tuple[str, Any] = ("memory", None)
        except TemplateError as exc:
            reply = ("rejected", str(exc)[:_MESSAGE_CHARS])
        except Exception as exc:  # the template's own failure, whatever it is
            reply = ("error", _short(exc))
        else:
            reply = ("ok", text) if len(text) <= max_chars else ("too_long", len(text))
            del text
        conn.send(reply)


def _without_torch() -> str | None:
    """Make torch unimportable here (None), or say why not (it is imported already).

    A None in ``sys.modules`` is Python's own way of saying a module is not there: importing it
    raises ``ModuleNotFoundError`` and ``importlib.util.find_spec`` (which transformers asks)
    finds nothing.
    """
    present = [name for name in _TORCH_MODULES if name in sys.modules]
    if present:
        return f"{', '.join(present)} is imported already"
    for name in _TORCH_MODULES:
        sys.modules[name] = None  # type: ignore[assignment]
    return None


def _load_processor(path: str, load_kwargs: dict[str, Any]) -> Any:
    import warnings

    from transformers import AutoProcessor
    from transformers.utils import logging as hf_logging

    # The parent loaded this processor already and showed its warnings; not twice.
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    warnings.simplefilter("ignore")
    return AutoProcessor.from_pretrained(path, **load_kwargs)  # type: ignore[no-untyped-call]


def _cap_address_space(memory_mib: int) -> None:
    """Let the address space grow by `memory_mib` past what it holds now (Linux; else no cap)."""
    import resource

    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return
    limit = pages * os.sysconf("SC_PAGE_SIZE") + memory_mib * (1 << 20)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _watch_parent(parent: int) -> None:
    """End this child once its parent is gone (a render stuck in a loop never reads the pipe)."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:_MESSAGE_CHARS]


if __name__ == "__main__":
    serve(Connection(int(sys.argv[1])))
    # Nothing to flush or save: skip the interpreter's (and torch's) slow way out.
    os._exit(0)
