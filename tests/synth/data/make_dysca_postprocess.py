"""Make ``dysca_postprocess_parity.json.gz`` by running Dysca's own ``pqa_postprocess.py``.

Dysca: https://github.com/Benchmark-Dysca/Dysca at 442ef7565029ca62756bea79138b63c038cfb7e4.
Commands that made the fixture (any Python 3 with numpy)::

    mkdir -p /tmp/dysca_pp && cd /tmp/dysca_pp
    git --git-dir=DYSCA.git show 442ef75:pqa_generate/pqa_postprocess.py > pqa_postprocess.py
    python /path/to/tests/synth/data/make_dysca_postprocess.py /path/to/tests/synth/data

Two cases, each a folder of source files given to Dysca's script unchanged
(``python pqa_postprocess.py --file_folder SRC --output_file OUT``):

- ``pqa20``: the 14 group files of ``dysca_pqa_20_2024.json.gz`` (Dysca's own generator, 20
  prompts per group); the whole output is stored.
- ``capped``: `capped_files()` (synthetic items, enough style/background/color questions for
  Dysca's 13,000 caps to sample); only the output's SHA-256 and size are stored.

Dysca lists its folder with ``os.walk``, whose order is the filesystem's: the order it gave here
is stored with each case, and the test hands the files to lmmprobe in that order.
"""

import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile


def capped_files() -> list[list[dict]]:
    """Three files of items with 2 style, 2 background, 1 color and 3 animal questions each."""
    files = []
    for f, n in enumerate((7000, 6500, 6000)):
        items = []
        for i in range(n):
            q_a = [
                {
                    "question": f"q{f}-{i}-{k}",
                    "answer": "a",
                    "question_type": "multi choice" if k % 2 else "true or false",
                    "task": "recognition",
                    "options": ["a", "b"],
                    "question_majority": m,
                }
                for k, m in enumerate(
                    [
                        "animal",
                        "style",
                        "background",
                        "color",
                        "animal",
                        "style",
                        "background",
                        "animal",
                    ]
                )
            ]
            items.append({"id": i + 1, "prompt": f"p{f}-{i}", "negative_prompt": "n", "q_a": q_a})
        files.append(items)
    return files


def _run(files: list[tuple[str, list[dict]]]) -> tuple[list[str], str]:
    src = tempfile.mkdtemp()
    for name, items in files:
        with open(os.path.join(src, name), "w") as fh:
            json.dump(items, fh)
    order = [
        os.path.basename(os.path.join(r, f))
        for r, _, fs in os.walk(src)
        for f in fs
        if f.endswith(".json")
    ]
    out = os.path.join(tempfile.mkdtemp(), "Dysca.json")
    subprocess.run(
        [sys.executable, "pqa_postprocess.py", "--file_folder", src, "--output_file", out],
        check=True,
    )
    with open(out) as fh:
        return order, fh.read()


if __name__ == "__main__":
    dest = sys.argv[1]
    with gzip.open(os.path.join(dest, "dysca_pqa_20_2024.json.gz"), "rt", encoding="utf-8") as fh:
        pqa = json.load(fh)
    named = [(f"{g['group'].replace(' ', '_')}.json", g["items"]) for g in pqa["groups"]]
    order, text = _run(named)
    capped_order, capped_text = _run(
        [(f"part{f}.json", items) for f, items in enumerate(capped_files())]
    )
    record = {
        "reference": "Benchmark-Dysca/Dysca@442ef7565029ca62756bea79138b63c038cfb7e4 pqa_generate/pqa_postprocess.py",
        "pqa20": {"order": order, "output": json.loads(text)},
        "capped": {
            "order": capped_order,
            "sha256": hashlib.sha256(capped_text.encode()).hexdigest(),
            "records": len(json.loads(capped_text)),
        },
    }
    with gzip.open(
        os.path.join(dest, "dysca_postprocess_parity.json.gz"), "wt", encoding="utf-8"
    ) as fh:
        json.dump(record, fh, ensure_ascii=False)
