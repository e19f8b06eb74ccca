"""Progress reporting for the runner: a rich bar, or nothing."""

from __future__ import annotations

from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class ProgressSink(Protocol):
    """Receives the runner's progress events."""

    def start(self, model: str, total: int, cached: int) -> None:
        """A model's requests begin; `cached` of `total` were answered from the store."""
        ...

    def advance(self, done: int, errors: int) -> None:
        """`done` more requests finished, `errors` of them failed."""
        ...

    def finish(self) -> None:
        """The model's requests are all done."""
        ...


class NullProgress:
    """Reports nothing."""

    def start(self, model: str, total: int, cached: int) -> None:
        """Ignore."""

    def advance(self, done: int, errors: int) -> None:
        """Ignore."""

    def finish(self) -> None:
        """Ignore."""


class RichProgress:
    """A rich progress bar per model: done/total, errors, elapsed and ETA."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._errors = 0

    def start(self, model: str, total: int, cached: int) -> None:
        """Open a bar for `model`, pre-filled with the cached requests."""
        self._errors = 0
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("errors: {task.fields[errors]}"),
            TextColumn("cached: {task.fields[cached]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self._progress.start()
        self._task = self._progress.add_task(
            model, total=total, completed=cached, errors=0, cached=cached
        )

    def advance(self, done: int, errors: int) -> None:
        """Move the bar."""
        if self._progress is not None and self._task is not None:
            self._errors += errors
            self._progress.update(self._task, advance=done, errors=self._errors)

    def finish(self) -> None:
        """Close the bar."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
