"""Make ``dysca_pqa_20_2024.json.gz`` by running Dysca's own generator (not lmmprobe's code).

Dysca: https://github.com/Benchmark-Dysca/Dysca at 442ef7565029ca62756bea79138b63c038cfb7e4.
Commands that made the fixture (any Python with numpy and tqdm)::

    mkdir -p /tmp/dysca && git --git-dir=DYSCA.git archive 442ef75 pqa_generate | tar -x -C /tmp/dysca
    cd /tmp/dysca/pqa_generate
    cp metadata/profession.txt metadata/Profession.txt   # Dysca names it so; case-sensitive disks
    python /path/to/tests/synth/data/make_dysca_pqa.py 20 2024 /path/to/dysca_pqa_20_2024.json.gz

This does what ``pqa_generate.py --tasks overall --prompt_num 20`` does (``set_seed(2024)``, the
14 groups of its ``mapping_dict`` in order, each through its ``main``), except that the text group
runs under ``tasks=["OCR"]``: the released ``__main__`` passes ``["recognition"]``, under which
Dysca's ``QA`` class asks nothing about scene text. Each group's PQA file is stored in order.
"""

import glob
import gzip
import json
import os
import sys
import tempfile

sys.path.insert(0, ".")
import pqa_generate as dysca  # Dysca's module, from the working directory

prompt_num, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
dysca.set_seed(seed)
mapping_dict = {
    "face": (["age", "gender", "expression", "race"], "background"),
    "animal": (["color"], "background"),
    "plant": ([], "background"),
    "clothes": (["color"], []),
    "object": (["color"], "background"),
    "food": ([], "background"),
    "landmark": ([], []),
    "action": ([], "background"),
    "celebrity": ([], "background"),
    "profession": ([], []),
    "movie": ([], []),
    "tv show": ([], []),
    "anime": ([], []),
    "text": ([], []),
}
groups = []
for task, (attributes, background) in mapping_dict.items():
    folder = tempfile.mkdtemp() + os.sep
    dysca.main(
        tasks=["OCR"] if task == "text" else ["recognition"],
        styles=[],
        ques_majority=dysca.QuestionMajority(
            foreground=task, attributes=attributes, background=background, style="style"
        ),
        question_types=["multi choice", "true or false", "image caption"],
        prompt_num=prompt_num,
        save_dir=folder,
    )
    (path,) = glob.glob(folder + "*.json")
    with open(path, encoding="utf-8") as fh:
        groups.append({"group": task, "items": json.load(fh)})
with gzip.open(out, "wt", encoding="utf-8") as fh:
    json.dump({"prompt_num": prompt_num, "seed": seed, "groups": groups}, fh, ensure_ascii=False)
