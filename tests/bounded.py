"""Run a reader of hostile text under a time bound, without hanging the suite when it fails.

A regular expression that backtracks holds the interpreter inside one C call, so a slow reader
cannot be interrupted from Python. `bounded` runs the call first in a forked child, kills it
past the bound (the test then fails naming the call and the text's length), and only then
makes the call in the test's own process to return its result, which is then known to be fast.
`bounded_each` runs many calls in one child, each under the bound (one fork for them all).

The bound is generous (2 s for 100,000 characters, read in milliseconds): it tells linear time
from the quadratic or cubic time that took minutes, not one machine's speed from another's.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from typing import TypeVar

import pytest

T = TypeVar("T")

BOUND_S = 2.0
"""Seconds a reader may take on one hostile text."""

# Hostile texts for the readers of judge replies and model answers: long runs of what their
# patterns let repeat (spaces, stars, brackets, dots, digits, tags, the words they look for),
# each n characters or a few more.
SHAPES: dict[str, Callable[[int], str]] = {
    "A, spaces, x": lambda n: "A" + " " * n + "x",
    "dots": lambda n: "." * n,
    "open brackets": lambda n: "(" * n,
    "open square brackets": lambda n: "[" * n,
    "stars": lambda n: "*" * n,
    "spaces and dots": lambda n: " ." * (n // 2) + "x",
    "spaces and brackets": lambda n: " )]." * (n // 4) + "x",
    "spaces, A, spaces, x": lambda n: " " * (n // 2) + "A" + " " * (n // 2) + "x",
    "stars then spaces": lambda n: "*" * (n // 2) + " " * (n // 2) + "x",
    "Verdict: spaces": lambda n: "Verdict:" + " " * n + "x",
    "Verdict: stars, spaces, brackets": lambda n: "verdict:" + " *[" * (n // 3) + "x",
    "Verdict: repeated": lambda n: "Verdict: " * (n // 9),
    "tie, spaces, stars": lambda n: "tie" + " " * (n // 2) + "*" * (n // 2) + "x",
    "grade, spaces": lambda n: "Grade" + " " * n + "x",
    "4, spaces, slash, spaces": lambda n: "4" + " " * (n // 2) + "/" + " " * (n // 2) + "x",
    "digits then x": lambda n: "1" * n + "x",
    "words": lambda n: "correct " * (n // 8),
    "answer is, spaces": lambda n: "The answer is" + " " * n + "x",
    "quoted answers": lambda n: 'The answer is "' * (n // 15),
    "newlines": lambda n: "\n" * n + "x",
    "think opened": lambda n: "<think>" * (n // 7),
    "long thinking, then A": lambda n: "<think>" + "x" * n + "</think> A",
    "closing tags": lambda n: "</think>" * (n // 8) + "A",
    "delimiter tags": lambda n: "</model_answer>" * (n // 15),
    "open tags, spaces": lambda n: "<" + " " * n + "x",
    "I, spaces": lambda n: "I" + " " * n + "x",
    "final, spaces, option, spaces": lambda n: "final" + " " * (n // 2) + "option" + " " * (n // 2),
    "answer is, tabs, colon, spaces": lambda n: (
        "answer is" + " \t" * (n // 4) + ":" + " " * (n // 2) + "x"
    ),
    "cannot see, spaces, the, spaces": lambda n: (
        "cannot see" + " " * (n // 2) + "the" + " " * (n // 2)
    ),
    "none of, repeated": lambda n: "none of " * (n // 8),
    "option, repeated": lambda n: "option " * (n // 7),
    "open bracket, spaces": lambda n: "(" + " " * n + "x",
    "open brackets and spaces": lambda n: "( " * (n // 2) + "x",
    "bold, spaces": lambda n: "**" + " " * n + "x",
    "A, stars, spaces": lambda n: "A" + "*" * (n // 2) + " " * (n // 2) + "x",
    "A. repeated": lambda n: "A." * (n // 2),
    "option words": lambda n: "dark " * (n // 5),
    "number groups": lambda n: "1," * (n // 2),
    "answer tags": lambda n: "<answer>" * (n // 8),
    "box tags": lambda n: "<|begin_of_box|>" * (n // 16),
    "a close, then opens": lambda n: "</think>" + "<think>" * (n // 7),
    "blocks": lambda n: "<think>" + "</think><think>" * (n // 15),
    "capitals": lambda n: "A" * n,
    "marks": lambda n: "(A)" * (n // 3),
}


def _run_and_exit(fn: Callable[..., object], args: tuple[object, ...]) -> None:
    try:
        fn(*args)
    except BaseException:  # the parent reports a failure; the child only says so
        os._exit(1)
    os._exit(0)


def bounded(fn: Callable[..., T], *args: object, seconds: float = BOUND_S) -> T:
    """`fn(*args)`, after checking in a forked child that it returns within `seconds`.

    Raises:
        pytest.fail.Exception: The call ran past the bound (the child is killed).

    """
    # Tried twice: a child forked from a process with other threads (xdist's, a store's
    # background thread) can start with a lock one of them held at the fork, and wait on it
    # forever; that is the fork's doing and rare, while a reader that is slow is slow again.
    for _ in range(2):
        if _within(fn, args, seconds):
            return fn(*args)
    sizes = [len(a) for a in args if isinstance(a, str)]
    pytest.fail(
        f"{getattr(fn, '__qualname__', fn)!s} took over {seconds} s on text of "
        f"{sizes} characters (twice)"
    )


def _within(fn: Callable[..., object], args: tuple[object, ...], seconds: float) -> bool:
    """Whether `fn(*args)` ended within `seconds` in a forked child (killed if not)."""
    ctx = multiprocessing.get_context("fork")
    child = ctx.Process(target=_run_and_exit, args=(fn, args), daemon=True)
    child.start()
    child.join(seconds)
    if child.is_alive():
        child.kill()
        child.join()
        return False
    return True


def _run_each(calls: Mapping[str, Callable[[], object]], done: Connection) -> None:
    for name, call in calls.items():
        try:
            call()
        except BaseException as exc:  # reported by the parent, naming the call
            done.send((name, f"{type(exc).__name__}: {exc}"[:300]))
            os._exit(1)
        done.send((name, None))
    os._exit(0)


def bounded_each(calls: Mapping[str, Callable[[], object]], seconds: float = BOUND_S) -> None:
    """Run every call in one forked child, each within `seconds` of the one before.

    Raises:
        pytest.fail.Exception: A call ran past the bound (named; the child is killed) or
            raised (named, with its error).

    """
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_run_each, args=(calls, send), daemon=True)
    child.start()
    send.close()
    try:
        for name in calls:
            if not receive.poll(seconds):
                pytest.fail(f"{name} took over {seconds} s")
            try:
                done, error = receive.recv()
            except EOFError:
                pytest.fail(f"{name}: the child ended without a word")
            if error is not None:
                pytest.fail(f"{done} failed: {error}")
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receive.close()


def within(seconds: float, fn: Callable[..., T], *args: object) -> T:
    """`fn(*args)` in a thread of this process, the test failing if it takes over `seconds`.

    For calls that start processes of their own (a daemonic forked child, as `bounded` uses,
    may start none). A call past the bound is left running in its (daemon) thread.

    Raises:
        pytest.fail.Exception: The call ran past the bound.

    """
    result: list[T] = []
    error: list[BaseException] = []

    def call() -> None:
        try:
            result.append(fn(*args))
        except BaseException as exc:  # raised again in the test's thread
            error.append(exc)

    thread = threading.Thread(target=call, name="bounded-call", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"{getattr(fn, '__qualname__', fn)!s} took over {seconds} s")
    if error:
        raise error[0]
    return result[0]
