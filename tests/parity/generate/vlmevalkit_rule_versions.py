"""Regenerate ``data/vlmevalkit_rule_versions.json.gz``: every version of VLMEvalKit's ``can_infer``.

VLMEvalKit reads an option letter from an answer (and from its judge's reply) with
``vlmeval/utils/matching_util.py`` ``can_infer`` (the same file since the first commit; it was
``mmcompass/utils/matching_util.py`` from 2023-11-30 to 2023-12-01). Its rules changed five
times:

- 2023-11-25 (9ac258c, the first commit): ``can_infer_option(answer, num_choice=5)`` looks for
  a lone letter among ``A`` to ``E`` whatever the item's options; a refusal reads ``E``;
- 2023-12-25 (a310245): a refusal reads ``Z``;
- 2024-01-08 (bc4b28b, #41): the lone letter is looked for among the item's own letters (the
  ``choices`` dict), and a lone ``Z`` reads ``Z``;
- 2024-02-04 (98e3733): two more refusals read as ``Z`` ("I'm sorry, but without the image
  provided", "Cannot determine the answer");
- 2025-08-04 (c337155, #1175): a lone letter counts only among the last five words, and an
  option text only in an answer at most twice as long as the options' texts together;
- 2026-06-17 (a67ace5, #1552): ``answer is X`` / ``correct answer is **X**`` is read where no
  lone letter is.

Every version also reads otherwise when the run had the ``VERBOSE`` environment variable set
(``+verbose``): a lone letter is not read where ``A`` stands alone among more than three words.

This script runs ``can_infer`` as written at every commit that changed the file up to the
mirror's head (``COMMITS``), each loaded from ``git show COMMIT:PATH`` into a package of its own
whose ``vlmeval.smp`` is a stand-in giving ``get_logger``, ``double_log`` and ``fout`` (the
names the module takes from it, used only under ``VERBOSE``, to log), once with ``VERBOSE``
unset and once set to ``1``. It checks that the commits of one version (``VERSIONS``) read every
answer alike, and writes, per answer and options, what each version read (its letter, or null
for ``False``).

Two commits are not run: 8d517f9 (2024-01-05, on the branch merged as bc4b28b) calls
``can_infer_option(answer)`` without the ``choices`` it now needs (a TypeError on every answer);
and the 2023-11-25 version's first commits stop with an AssertionError where an item has an
option past ``D`` (9ac258c to 7057afc: ``assert k in 'ABCD'``) or past ``I`` (4ae9c7b) and the
answer reaches the option-text rule: its readings are 3499c17's (2023-12-24, any capital
letter), which the others match on every answer they read (checked here: ``raised`` counts what
they did not).

The answers: hand-made edge cases where the versions part (a letter early in a long answer,
``answer is X`` beside another lone letter, the new refusals, an option text in a long answer,
``İ`` whose lower case is longer, a lone ``E`` or ``Z`` among fewer options, ``A`` as an
article) and seeded random ones composed of the same parts (``SEED``).

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
import os
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
    # Run in this order, the first commit last: it alone reads "A" through vlmeval.smp's
    # absolute name, and the readings are the last commit's (see RAISING).
    "2023-11-25": ["3499c178", "4ae9c7b7", "7057afc9", "8d9dd5f3", "9fbcc13e", "0fad21f2",
                   "1857dc73", "9ac258c1"],
    "2023-12-25": ["a310245c", "39cebe2f"],
    "2024-01-08": ["bc4b28be"],
    "2024-02-04": [
        "98e3733f",
        "c6bdffd3",
        "aca64dbb",
    ],
    "2025-08-04": ["c3371551", "590f052a"],
    "2026-06-17": ["a67ace50", "2cf2a36c", "e8e78f05"],
}  # fmt: skip
"""Each rule version by the date of the commit that made it, with every commit of the file
(and the mirror's head, e8e78f0) that reads answers as it does. The 2023-11-25 version's
readings are 3499c17's; the earlier commits of it stop with an AssertionError on some
answers (`RAISING`) and read the others alike."""

RAISING = frozenset({"4ae9c7b7", "7057afc9", "8d9dd5f3", "9fbcc13e", "0fad21f2", "1857dc73",
                     "9ac258c1"})  # fmt: skip
"""Commits whose ``can_infer_text`` asserts the option letters are among ``A`` to ``D`` (or
``I``): an item with more options raises when its answer reaches that rule."""

PATHS = {
    "0fad21f2": "mmcompass/utils/matching_util.py",
    "1857dc73": "mmcompass/utils/matching_util.py",
}
"""Where the file was at commits it was not at `PATH` (1857dc7 to 0fad21f, 2023-11-30)."""

_SMP = """
import logging


def get_logger(name, *args, **kwargs):
    return logging.getLogger(name)


fout = None


def double_log(msg, fout=None):
    logging.getLogger("Evaluation").info(msg)
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
    "E",
    "E.",
    "(E) none",
    "A dog is what I see, so B",
    "I choose A for this one",
    "A is the answer",
    "A cat",
    "Z and E",
    "Sorry, I can't help with images of people yet. A",
    "I can't process this file. B",
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
        ["git", f"--git-dir={repo}", "show", f"{commit}:{PATHS.get(commit[:8], PATH)}"],
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


class _Raised:
    """What a commit's ``can_infer`` did on an answer it stopped on."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc


def _read(
    can_infer: Callable[[str, dict[str, str]], Any],
    answer: str,
    options: dict[str, str],
    verbose: bool,
) -> str | _Raised | None:
    """`can_infer`'s reading (None for ``False``), under ``VERBOSE`` or not, or what it raised."""
    if verbose:
        os.environ["VERBOSE"] = "1"
    else:
        os.environ.pop("VERBOSE", None)
    try:
        # dict(options): the old can_infer_text lower-cases the dict it is given.
        return can_infer(answer, dict(options)) or None
    except AssertionError as exc:
        return _Raised(exc)
    finally:
        os.environ.pop("VERBOSE", None)


def _date(repo: Path, commit: str) -> str:
    out = subprocess.run(
        ["git", f"--git-dir={repo}", "show", "-s", "--format=%cI", commit],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


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
    raised: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for version, group in VERSIONS.items():
            full = [_full(args.repo, c) for c in group]
            loaded = [_load(args.repo, commit, Path(tmp)) for commit in full]
            for verbose in (True, False):
                name = f"{version}+verbose" if verbose else version
                # Oldest first in the pin: the first names the commit that made the version.
                commits[name] = sorted(full, key=lambda c: _date(args.repo, c))
                seen: list[list[str | _Raised | None]] = []
                for commit, can_infer in zip(full, loaded, strict=True):
                    seen.append([_read(can_infer, a, o, verbose) for a, o in cases])
                    if commit[:8] in RAISING:
                        raised[f"{name} {commit[:7]}"] = sum(
                            isinstance(x, _Raised) for x in seen[-1]
                        )
                first = seen[0]
                if any(isinstance(x, _Raised) for x in first):
                    raise SystemExit(f"{name}: {group[0]} raised on some answer")
                for commit, s in zip(group, seen, strict=True):
                    if any(
                        x != y and not isinstance(x, _Raised) for x, y in zip(s, first, strict=True)
                    ):
                        raise SystemExit(f"{name}: {commit} reads some answer differently")
                    if commit[:8] not in RAISING and any(isinstance(x, _Raised) for x in s):
                        raise SystemExit(f"{name}: {commit} raised on some answer")
                readings[name] = [x for x in first if not isinstance(x, _Raised)]  # all of it
    names = list(readings)
    plain = [n for n in names if not n.endswith("+verbose")]
    pairs = [*itertools.pairwise(plain), *((f"{n}+verbose", n) for n in plain)]
    differ = {
        f"{a} vs {b}": sum(x != y for x, y in zip(readings[a], readings[b], strict=True))
        for a, b in pairs
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
        "raised": raised,
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
