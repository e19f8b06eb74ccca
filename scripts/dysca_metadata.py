"""Write Dysca's metadata lists as lmmprobe package data (``synth/data/dysca/metadata.json``).

Reads Dysca's own files from a git mirror of Benchmark-Dysca/Dysca at a pinned commit
(``pqa_generate/metadata/``) and stores each list exactly as Dysca's generator reads it:
``[line.strip() for line in file.readlines()]`` for the ``.txt`` lists (so CRLF line ends and
trailing spaces are gone, as in Dysca), ``json.load`` for ``Styles.json`` and
``ocr_text.json``. Origin (repository, commit, paths) and license go into the file.

Usage::

    python scripts/dysca_metadata.py --git-dir /path/to/Dysca.git [--commit SHA]

The default commit is the one the shipped file was made from.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
from pathlib import Path

REPO = "Benchmark-Dysca/Dysca"
COMMIT = "442ef7565029ca62756bea79138b63c038cfb7e4"
OUT = Path(__file__).parents[1] / "src/lmmprobe/synth/data/dysca/metadata.json"

# Dysca's `dict_path` keys (pqa_generate.py) → the file each one reads. Dysca names
# "./metadata/Profession.txt", but the repository holds "profession.txt" (it only loads on a
# case-insensitive file system); this is that file.
LISTS: dict[str, str] = {
    "action": "pqa_generate/metadata/Actions.txt",
    "animal": "pqa_generate/metadata/Animal.txt",
    "anime": "pqa_generate/metadata/Anime.txt",
    "background": "pqa_generate/metadata/Background.txt",
    "celebrity": "pqa_generate/metadata/Celebrity.txt",
    "clothes": "pqa_generate/metadata/Clothes.txt",
    "food": "pqa_generate/metadata/Food.txt",
    "landmark": "pqa_generate/metadata/Landmarks.txt",
    "movie": "pqa_generate/metadata/Movie.txt",
    "object": "pqa_generate/metadata/Object.txt",
    "plant": "pqa_generate/metadata/Plant.txt",
    "profession": "pqa_generate/metadata/profession.txt",
    "tv show": "pqa_generate/metadata/TV shows.txt",
    "age": "pqa_generate/metadata/People/Age.txt",
    "color": "pqa_generate/metadata/Color.txt",
    "expression": "pqa_generate/metadata/People/Expression.txt",
    "race": "pqa_generate/metadata/People/Race.txt",
    "gender": "pqa_generate/metadata/People/Gender.txt",
    "text": "pqa_generate/metadata/text.txt",
}
STYLES = "pqa_generate/metadata/Styles.json"
TEXT_TEMPLATES = "pqa_generate/metadata/ocr_text.json"


def _show(git_dir: str, commit: str, path: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", git_dir, "show", f"{commit}:{path}"],
        check=True,
        capture_output=True,
    ).stdout


def _lines(raw: bytes) -> list[str]:
    # Dysca's txt2list: open(..., encoding="utf-8").readlines() (universal newlines), strip().
    with io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8") as file:
        return [line.strip() for line in file.readlines()]


def main() -> None:
    """Read Dysca's files and write the package data file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", required=True, help="bare git mirror of Benchmark-Dysca/Dysca")
    parser.add_argument("--commit", default=COMMIT)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    lists = {name: _lines(_show(args.git_dir, args.commit, path)) for name, path in LISTS.items()}
    data = {
        "origin": {
            "repository": f"https://github.com/{REPO}",
            "commit": args.commit,
            "paths": {**LISTS, "styles": STYLES, "text_templates": TEXT_TEMPLATES},
            "license": (
                "the repository's LICENSE.md (CreativeML Open RAIL++-M License, "
                "Copyright (c) 2023 Stability AI), as shipped at that commit"
            ),
            "made_by": "scripts/dysca_metadata.py",
        },
        "lists": lists,
        "styles": json.loads(_show(args.git_dir, args.commit, STYLES)),
        "text_templates": json.loads(_show(args.git_dir, args.commit, TEXT_TEMPLATES)),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(lists)} lists, {len(data['styles'])} styles")


if __name__ == "__main__":
    main()
