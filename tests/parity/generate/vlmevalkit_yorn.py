"""Regenerate ``data/vlmevalkit_yorn.json``: VLMEvalKit's ``YOrN_Extraction`` run on made answers.

VLMEvalKit reads a yes/no answer with ``YOrN_Extraction`` (``vlmeval/dataset/utils/yorn.py``)
over ``process_punctuation`` (``vlmeval/smp/misc.py``). Both functions are taken from a checkout
of each commit below, as written (their source cut out of the two files with ``ast``: the
modules import VLMEvalKit's whole package), and run on the answers of `answers`: seeded
random joins of words and marks that touch every branch (a digit-comma-digit anywhere, a mark
beside a space or not, more than 32 periods, "yes" and "no" together, a period after a digit).

- ``595eb5f8`` (2024-07-27): the code the released VILA-13B tables were written with
  (``data/vlmevalkit_released/``), its period rule ``(?!<=\\d)``;
- ``e8e78f0`` (2026): ``(?<!\\d)`` since 928a95b.

Made with::

    for c in 595eb5f8fe01faf9938b6519014ccc455a5a1b80 e8e78f05f3080fe28154f2130321f17951c3be94; do
        mkdir -p /tmp/vk-$c && git --git-dir=MIRROR archive $c vlmeval/smp/misc.py \\
            vlmeval/dataset/utils/yorn.py | tar x -C /tmp/vk-$c; done
    /work/main/.venv/bin/python tests/parity/generate/vlmevalkit_yorn.py \\
        --ref 595eb5f8=/tmp/vk-595eb5f8... --ref e8e78f0=/tmp/vk-e8e78f05...
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
from pathlib import Path
from typing import Any

SEED = 20261130
OUT = Path(__file__).resolve().parents[1] / "data" / "vlmevalkit_yorn.json"
_WORDS = (
    "yes", "no", "Yes", "NO", "YES", "No", "not", "none", "nope", "yesterday", "know", "y",
    "1,000", "3.5", "2.", "yes.", "no,", "(yes)", "yes/no", "yes-no", "no!", "?", "...",
    '"yes"', "Yes,", ",yes", "yes;", "\\no", "_yes_", "<no>", "@yes", "`no`", "[no]", "{yes}",
    "no=", "+yes", "1.yes", "no.2", "é", "ÿes", "Yes\u00a0", "answer:",
)  # fmt: skip
_GLUE = ("", " ", "  ", "\n", "\t", ",", ", ", " ,", ".", ". ")
_FIXED = (
    "", "Yes", "No", "yes, it is.", "No, there is none.", "Yes and no.", "The answer is yes",
    "yes" + "." * 40 + "no", "no" + "." * 33, "1,2 yes", "1, 2 yes", "yes,no", "yes , no",
    "Yes.No", "no." * 40, "no" + "." * 31 + " yes" + "." * 3, "Is it? Yes!", "(no)", "no-",
)  # fmt: skip


def answers(n: int = 600) -> list[str]:
    """The fixed answers, then `n` seeded joins of 1 to 8 words."""
    rng = random.Random(SEED)
    out = list(_FIXED)
    for _ in range(n):
        k = rng.randint(1, 8)
        text = ""
        for i in range(k):
            text += (rng.choice(_GLUE) if i else "") + rng.choice(_WORDS)
        out.append(text)
    return out


def _functions(ref: Path) -> Any:
    """``YOrN_Extraction`` with its ``process_punctuation``, as the checkout at `ref` has them."""
    space: dict[str, Any] = {"re": re}
    for rel, name in (
        ("vlmeval/smp/misc.py", "process_punctuation"),
        ("vlmeval/dataset/utils/yorn.py", "YOrN_Extraction"),
    ):
        source = (ref / rel).read_text(encoding="utf-8")
        (node,) = [
            n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name
        ]
        exec(compile(ast.Module([node], []), rel, "exec"), space)
    return space["YOrN_Extraction"]


def main() -> None:
    """Run each commit's ``YOrN_Extraction`` on `answers` and write the readings."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ref", action="append", required=True, help="COMMIT=CHECKOUT")
    args = parser.parse_args()
    texts = answers()
    readings = {}
    for given in args.ref:
        commit, _, path = given.partition("=")
        read = _functions(Path(path))
        readings[commit] = [read(t) for t in texts]
    doc = {
        "source": "open-compass/VLMEvalKit vlmeval/dataset/utils/yorn.py YOrN_Extraction",
        "seed": SEED,
        "answers": texts,
        "readings": readings,
    }
    OUT.write_text(json.dumps(doc, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
