"""Regenerate ``data/vlmevalkit_rule_versions.json.gz``: every version of VLMEvalKit's ``can_infer``.

VLMEvalKit reads an option letter from an answer (and from its judge's reply) with
``vlmeval/utils/matching_util.py`` ``can_infer``. Its rules changed three times since the
``choices`` dict took the place of ``num_choice`` (2024-01-08):

- 2024-02-04 (98e3733): two more refusals read as ``Z`` ("I'm sorry, but without the image
  provided", "Cannot determine the answer");
- 2025-08-04 (c337155, #1175): a lone letter counts only among the last five words, and an
  option text only in an answer at most twice as long as the options' texts together;
- 2026-06-17 (a67ace5, #1552): ``answer is X`` / ``correct answer is **X**`` is read where no
  lone letter is.

This script runs ``can_infer`` as written at every commit that changed the file from 2024-01-08
to the mirror's head (``COMMITS``), each loaded from ``git show COMMIT:PATH`` into a package of
its own whose ``vlmeval.smp`` is a stand-in giving ``get_logger`` (the only name the module
takes from it, called only with ``VERBOSE`` set, which this run leaves unset). It checks that
the commits of one version (``VERSIONS``) read every answer alike, and writes, per answer and
options, what each version read (its letter, or null for ``False``).

The answers: hand-made edge cases where the versions part (a letter early in a long answer,
``answer is X`` beside another lone letter, the new refusals, an option text in a long answer,
``İ`` whose lower case is longer) and seeded random ones composed of the same parts
(``SEED``).

Made with::

    /work/main/.venv/bin/python tests/parity/generate/vlmevalkit_rule_versions.py \\
        --repo /work/.mirror/open-compass+VLMEvalKit/repo
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import itertools
import json
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

SEED = 20261130
N_RANDOM = 3000
PATH = "vlmeval/utils/matching_util.py"
HERE = Path(__file__).resolve().parents[1] / "data" / "vlmevalkit_rule_versions.json.gz"

VERSIONS: dict[str, list[str]] = {
    "2024-01-08": ["bc4b28be"],
    "2024-02-04": [
        "98e3733f",
        "c6bdffd3",
        "aca64dbb",
    ],
    "2025-08-04": ["c3371551", "590f052a"],
    "2026-06-17": ["a67ace50", "2cf2a36c", "e8e78f05"],
}
"""Each rule version by the date of the commit that made it, with every commit of the file
(and the mirror's head, e8e78f0) that reads answers as it does."""

_SMP = """
import logging


def get_logger(name, *args, **kwargs):
    return logging.getLogger(name)
"""

OPTION_SETS = [
    {"A": "cat", "B": "dog"},
    {"A": "Yes", "B": "No"},
    {"A": "red", "B": "green", "C": "blue"},
    {"A": "1", "B": "2", "C": "3", "D": "4"},
    {"A": "a cat on a mat", "B": "a dog", "C": "a bird in a tree", "D": "nothing"},
    {"A": "The left one", "B": "The right one", "C": "Both", "D": "Neither"},
    {"A": "12.5", "B": "125", "C": "1.25", "D": "0.125", "E": "none of these"},
    {"A": "A", "B": "B", "C": "C", "D": "D"},
    {"A": "İstanbul", "B": "Ankara", "C": "Izmir"},
    {"A": "apple", "B": "pineapple", "C": "grape", "D": "grapefruit", "E": "kiwi", "F": "fig"},
]

EDGE = [
    "A",
    "B.",
    "(C)",
    "**D**",
    "[B]",
    "Z",
    "",
    "A is correct because the picture clearly shows a cat sitting on the mat",
    "B, since the animal in the image barks and wags its tail happily",
    "I think the answer is C because of the colour of the sky in the picture",
    "The answer is B",
    "The correct answer is **C**.",
    "A: the answer is b",
    "Option A is wrong. The correct answer is B. Here's why: the dog is on the left.",
    "answer is D",
    "The answer is E",
    "the answer is a",
    "Answer is (B)",
    "The answer is **B**, not A",
    "I'm sorry, but without the image provided I cannot say",
    "Cannot determine the answer from the image.",
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "Failed to obtain answer via API.",
    "Failed to obtain answer via API. The answer is B",
    "It is a cat",
    "It is a cat, I am quite sure about this because of the whiskers, the ears and the tail",
    "a dog and a cat",
    "grapefruit",
    "grape",
    "pineapple",
    "İSTANBUL",
    "İİİİİİİİİİİİİİİİİİİİİİİİİİİİİİİİİİİİİİ istanbul",
    "The answer is A and B",
    "A B",
    "A or B? I would say B",
    "Neither A nor B nor C nor D nor E nor F",
    "Hmm. Looking at it again, I pick C. Final.",
    "C. red green blue",
    "The answer is C. C is blue.",
    "step by step: first A then B then C finally D",
    "12.5",
    "The value is 125 which is option B in the list above here",
    "none of these",
    "Z. None of the options",
    "The correct answer is: A",
    "correct answer is\nB",
    "answer  is   C",
    "Answer is ** D **",
]

FILLER = [
    "I", "think", "the", "image", "shows", "so", "because", "clearly", "it", "is", "a", "an",
    "picture", "of", "looking", "at", "this", "we", "see", "that", "answer", "correct", "option",
    "final", "therefore", "maybe", "not", "sure", "which", "one", "here", "Answer:", "answer is",
    "The answer is", "correct answer is", "the correct answer is", "Answer is", "\n", "  ",
]  # fmt: skip
DECORATED = ["{}", "{}.", "({})", "**{}**", "[{}]", "{}:", "{},", "{})", "{{{}}}", "#{}", "{};"]


def _random_answer(rng: random.Random, options: dict[str, str]) -> str:
    parts: list[str] = []
    letters = [*options, "Z", "E", "F", "a", "b"]
    for _ in range(rng.randint(0, 14)):
        kind = rng.random()
        if kind < 0.5:
            parts.append(rng.choice(FILLER))
        elif kind < 0.75:
            parts.append(rng.choice(DECORATED).format(rng.choice(letters)))
        elif kind < 0.95:
            text = rng.choice(list(options.values()))
            parts.append(text.upper() if rng.random() < 0.2 else text)
        else:
            parts.append(rng.choice(EDGE))
    return rng.choice([" ", " ", "", "\n"]).join(parts)


def _load(repo: Path, commit: str, root: Path) -> Callable[[str, dict[str, str]], Any]:
    """``can_infer`` of `commit`, from its own package in `root` (a fresh import)."""
    source = subprocess.run(
        ["git", f"--git-dir={repo}", "show", f"{commit}:{PATH}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    package = root / commit / "vlmeval"
    (package / "smp").mkdir(parents=True)
    (package / "utils").mkdir()
    (package / "__init__.py").write_text("")
    (package / "utils" / "__init__.py").write_text("")
    (package / "smp" / "__init__.py").write_text(_SMP)
    (package / "smp" / "log.py").write_text(_SMP)
    (package / "utils" / "matching_util.py").write_text(source)
    for name in [m for m in sys.modules if m == "vlmeval" or m.startswith("vlmeval.")]:
        del sys.modules[name]
    sys.path.insert(0, str(root / commit))
    try:
        module = importlib.import_module("vlmeval.utils.matching_util")
    finally:
        sys.path.pop(0)
    return module.can_infer  # type: ignore[no-any-return]


def _full(repo: Path, commit: str) -> str:
    out = subprocess.run(
        ["git", f"--git-dir={repo}", "rev-parse", commit],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", type=Path, required=True, help="VLMEvalKit's git directory")
    args = parser.parse_args()
    rng = random.Random(SEED)
    cases: list[tuple[str, dict[str, str]]] = [(a, o) for o in OPTION_SETS for a in EDGE]
    for _ in range(N_RANDOM):
        options = rng.choice(OPTION_SETS)
        cases.append((_random_answer(rng, options), options))
    readings: dict[str, list[str | None]] = {}
    commits: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for version, group in VERSIONS.items():
            commits[version] = [_full(args.repo, c) for c in group]
            seen: list[list[str | None]] = []
            for commit in commits[version]:
                can_infer = _load(args.repo, commit, Path(tmp))
                # dict(options): the old can_infer_text lower-cases the dict it is given.
                seen.append([can_infer(a, dict(o)) or None for a, o in cases])
            if any(s != seen[0] for s in seen):
                raise SystemExit(f"{version}: its commits read some answer differently")
            readings[version] = seen[0]
    names = list(VERSIONS)
    differ = {
        f"{a} vs {b}": sum(x != y for x, y in zip(readings[a], readings[b], strict=True))
        for a, b in itertools.pairwise(names)
    }
    document = {
        "reference": {
            "repository": "open-compass/VLMEvalKit",
            "path": PATH,
            "function": "can_infer",
            "versions": commits,
        },
        "seed": SEED,
        "differ": differ,
        "cases": [
            {"answer": a, "choices": o, "read": {v: readings[v][i] for v in names}}
            for i, (a, o) in enumerate(cases)
        ],
    }
    # gzip with mtime 0: the same run writes the same bytes.
    with gzip.GzipFile(HERE, "wb", mtime=0) as f:
        f.write((json.dumps(document, ensure_ascii=False, indent=1) + "\n").encode())
    print(f"{len(cases)} answers; versions that part: {differ}")


if __name__ == "__main__":
    main()
