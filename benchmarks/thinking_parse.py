"""Cost of splitting one reasoning output into thinking and answer, by output length.

Times `lmmprobe.parse.thinking.split_answer` on outputs of about 1k, 10k and 100k tokens (four
characters a token) in the shapes a reasoning model sends, each with trap marks (``answer is
A``) all through its thinking:

- ``closed``: ``<think>...</think>`` then the answer (the common case);
- ``opened``: the block opened by the chat template, so only ``</think>`` is in the output;
- ``cut``: ``<think>...`` with no closing tag (a truncated output: the whole text is searched);
- ``quoted``: a plain answer that quotes ``<think>`` and ``</think>`` every few words (the
  worst case for a backtracking regular expression over the text).

Each shape prints its time per response and per character; the split is linear when the time
per character stays flat from 1k to 100k tokens. The last line gives the 10k-token figures
and the ratio of the per-character time at 100k to that at 1k (1.0 is exactly linear; a
quadratic split would give about 100).

Usage: python benchmarks/thinking_parse.py [--repeats 20]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from lmmprobe.parse.thinking import split_answer

TOKENS = (1_000, 10_000, 100_000)
CHARS_PER_TOKEN = 4


def _thinking(chars: int) -> str:
    unit = "Looking at the chart, the answer is A? No, (B) seems wrong too; "
    return (unit * (chars // len(unit) + 1))[:chars]


SHAPES: dict[str, Callable[[int], str]] = {
    "closed": lambda n: f"<think>{_thinking(n)}</think>\n\n(C)",
    "opened": lambda n: f"{_thinking(n)}</think>\n\n(C)",
    "cut": lambda n: f"<think>{_thinking(n)}",
    "quoted": lambda n: "(C) " + ("see <think> and </think> " * (n // 26 + 1))[:n],
}


def _seconds(text: str, repeats: int) -> float:
    """Median seconds of one split over `repeats` runs."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        split_answer(text, finish_reason="length")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Time every shape at every length and print the table and the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20, help="Runs per measurement.")
    args = parser.parse_args()
    print(f"{'shape':<8} {'tokens':>8} {'chars':>9} {'us/response':>12} {'ns/char':>9}")
    per_char: dict[tuple[str, int], float] = {}
    per_response: dict[tuple[str, int], float] = {}
    for shape, build in SHAPES.items():
        for tokens in TOKENS:
            text = build(tokens * CHARS_PER_TOKEN)
            seconds = _seconds(text, args.repeats)
            per_response[shape, tokens] = seconds
            per_char[shape, tokens] = seconds / len(text)
            print(
                f"{shape:<8} {tokens:>8} {len(text):>9} {seconds * 1e6:>12.1f} "
                f"{seconds / len(text) * 1e9:>9.3f}"
            )
    worst = max(per_char[s, TOKENS[-1]] / per_char[s, TOKENS[0]] for s in SHAPES)
    print(
        f"closed_10k_us={per_response['closed', 10_000] * 1e6:.1f} "
        f"cut_10k_us={per_response['cut', 10_000] * 1e6:.1f} "
        f"quoted_10k_us={per_response['quoted', 10_000] * 1e6:.1f} "
        f"worst_per_char_ratio_100k_vs_1k={worst:.2f}"
    )


if __name__ == "__main__":
    main()
