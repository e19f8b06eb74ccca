"""The benchmark table of ``docs/benchmarks.md``, written from the registry.

``python -m lmmprobe.data.benchmarks._table docs/benchmarks.md`` rewrites the parts of the page
between its markers (the table of every benchmark, and the list of those whose schema was not
confirmed from a dataset card or loader); the test suite checks the page matches the registry.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lmmprobe.data.benchmarks.base import BENCHMARKS, Benchmark

TABLE = ("<!-- benchmarks:begin -->", "<!-- benchmarks:end -->")
UNCONFIRMED = ("<!-- unconfirmed:begin -->", "<!-- unconfirmed:end -->")


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ") or "-"


def _row(b: Benchmark) -> str:
    size = f"{len(b.members)} sets" if b.members else b.size
    dims = "; ".join(
        p
        for p in (
            f"HEMM: {b.hemm}" if b.hemm else "",
            f"ReForm-Eval: {b.reform}" if b.reform else "",
        )
        if p
    )
    source = "its members" if b.members else (b.hub_id or "release files")
    cells: list[object] = [
        b.title,
        size,
        "" if b.members else b.split,
        b.formulation,
        f"`{b.metric}`" if b.metric else None,
        dims,
        source,
        b.needs,
    ]
    return "| " + " | ".join([f"`{b.name}`", *(_cell(c) for c in cells)]) + " |"


def benchmark_table(names: list[str] | None = None) -> str:
    """Markdown table of the benchmarks (all registered ones by default), one row each."""
    head = (
        "| name | title | rows | split | formulation | official metric | dimension "
        "| data | needs |\n"
        "| --- | --- | ---: | --- | --- | --- | --- | --- | --- |"
    )
    rows = [_row(BENCHMARKS.get(n)) for n in (names if names is not None else BENCHMARKS.names())]
    return "\n".join([head, *rows])


def unconfirmed_list(names: list[str] | None = None) -> str:
    """Markdown bullets naming each benchmark whose schema was not confirmed (or a sentence)."""
    found = [
        BENCHMARKS.get(n)
        for n in (names if names is not None else BENCHMARKS.names())
        if not BENCHMARKS.get(n).schema_confirmed
    ]
    if not found:
        return "Every benchmark's schema was confirmed from its dataset card or loader."
    return "\n".join(f"- `{b.name}`: {_cell(b.title)}" for b in found)


def _replace(page: str, markers: tuple[str, str], body: str) -> str:
    begin, end = markers
    head, found, rest = page.partition(begin)
    if not found or end not in rest:
        raise ValueError(f"the page lacks the markers {begin} ... {end}")
    return f"{head}{begin}\n{body}\n{end}{rest.split(end, 1)[1]}"


def render_page(page: str, names: list[str] | None = None) -> str:
    """`page` with its generated parts written from the registry."""
    page = _replace(page, TABLE, benchmark_table(names))
    return _replace(page, UNCONFIRMED, unconfirmed_list(names))


def main(argv: list[str]) -> int:
    """Rewrite the page named by the one argument; returns the exit status."""
    if len(argv) != 1:
        print(
            "usage: python -m lmmprobe.data.benchmarks._table docs/benchmarks.md", file=sys.stderr
        )
        return 2
    path = Path(argv[0])
    path.write_text(render_page(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
