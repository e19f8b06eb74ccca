"""Write OCRBench v2's parity fixtures: generated items with answers, and its own scores of them.

    python tests/data/benchmarks/ocrbench_v2_parity/make_expected.py MIRROR_GIT_DIR PYTHON

MIRROR_GIT_DIR is a clone of Yuliang-Liu/MultimodalOCR (read with ``git archive`` at the pinned
commit); PYTHON an interpreter with the scripts' requirements.txt installed (nltk with WordNet
on NLTK_DATA, jieba, apted, distance, lxml, zss, Levenshtein, editdistance, Polygon3, ipdb,
tqdm). Writes ``items.json`` (the items, each with its ``predict``) and ``expected.json`` (the
score and ``ignore`` eval.py gives each, and what get_score.py prints).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

COMMIT = "794c36d6423cf1d5764081128bcaeb46b240def6"
HERE = Path(__file__).parent

WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "receipt", "total"]
WORDS += ["date", "invoice", "table", "chart"]
CN = "我们今天去公园玩天气很好学生老师学校数学语文"


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def cn_text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(CN) for _ in range(n))


def variants(rng: random.Random, gold: str) -> list[str]:
    """Answers around a gold text: itself, cased, padded, cut, changed, empty-ish, unrelated."""
    words = gold.split()
    return [
        gold,
        gold.upper(),
        f"The answer is: {gold}.",
        " ".join(words[: max(1, len(words) // 2)]),
        gold.replace("o", "0", 1),
        sentence(rng, 3),
        "",
    ]


def items(rng: random.Random) -> list[dict]:
    out: list[dict] = []

    def add(kind: str, question: str, answers, predict, **extra) -> None:
        out.append({"dataset_name": "gen", "type": kind, "id": len(out),
                    "image_path": f"EN_part/gen/{len(out)}.jpg", "question": question,
                    "answers": answers, **extra, "predict": predict})  # fmt: skip

    vqa_types = ["APP agent en", "ASCII art classification en", "math QA en", "reasoning VQA en",
                 "science QA en", "text recognition en", "document classification en",
                 "cognition VQA en", "diagram QA en"]  # fmt: skip
    for kind in vqa_types:
        short, long = sentence(rng, 2), sentence(rng, 7)
        for p in variants(rng, short)[:5]:
            add(kind, "What is written?", [short, "Other"], p)
        for p in variants(rng, long)[:5]:
            add(kind, "Read the text.", [long], p)
        add(
            kind,
            "Which option?",
            ["B"],
            rng.choice(["B", "(B)", "b", "B.", "The answer is B", "A"]),
            eval="multiple choice",
        )
        add(
            kind,
            "Case?",
            ["NaCl"],
            rng.choice(["NaCl", "nacl", "it is NaCl!"]),
            eval="case sensitive",
        )
        add(kind, "Number?", [42], rng.choice(["42", "4 2", "forty-two"]))
    for kind in ("cognition VQA cn", "reasoning VQA cn"):
        for _ in range(5):
            gold = cn_text(rng, 4)
            add(
                kind,
                "图中写了什么？",
                [gold],
                rng.choice([gold, f"答案是{gold}", cn_text(rng, 4), gold[:2]]),
            )
        long = ",".join(cn_text(rng, 3) for _ in range(5))
        add(kind, "列出", [long], long.replace(",", "，", 2))
        add(kind, "选择", ["C"], rng.choice(["C", "选C", "(C)"]), eval="multiple choice")
    for _ in range(4):
        gold = cn_text(rng, 12)
        add(
            "handwritten answer extraction cn",
            "请写出简答题的答案",
            [gold],
            rng.choice([gold, gold[:8], cn_text(rng, 10), ""]),
        )
    for gold, pred in (
        ("ABD", "A、B、D"),
        ("AC", "答案是A和C"),
        ("B", "B"),
        ("AB", "BA"),
        ("D", "选C"),
    ):
        add("handwritten answer extraction cn", "选择题", [gold], pred)
    for _ in range(4):
        add(
            "formula recognition cn",
            "识别公式",
            [r"\text{面积}=a \times b"],
            rng.choice([r"面积 = a\times b", r"\text{面积}=a\times b", "nan", r"s=ab"]),
        )
    for gold, pred, method in (("12", "There are 12 words", "exact match"),
                               ("12", "I count 10.", "regression"), ("12", "I count 20", "regression"),
                               ("12", "I count 0", "regression"), ("7", "Seven", "exact match"),
                               ("30", "About 27 or 40", "regression"), ("5", "5", "regression")):  # fmt: skip
        add("text counting en", "How many?", [gold], pred, eval=method)
    for gold, pred in ((r"\frac{a}{b}", r"$\frac{a} {b}$"), (r"x^2", "x^3"), (r"a+b", r"A+B")):
        add("formula recognition en", "Write LaTeX.", [gold], pred)
    table = "<table><tr><td>name</td><td>total</td></tr><tr><td>tea</td><td>3.50</td></tr></table>"
    for pred in (
        table,
        table.replace("3.50", "3.5"),
        "<html><body>" + table[:-8],
        'Here it is:\n<table><tr><td colspan="2">name</td></tr></table>',
        "no table",
        "",
    ):
        add("table parsing en", "Convert the table to html.", [table], pred)
    md = "| week | result |\n| --- | --- |\n| 1 | w 35 - 17 |\n| 2 | l 13 - 14 |"
    for pred in (
        md,
        "```markdown\n" + md + "\n```",
        md.replace("w 35", "w 36"),
        "| 1 | w 35 - 17 |\n| 2 | l 13 - 14 |",
        "|  | x |\n|---|---|\n| a |  |",
    ):
        add("table parsing en", "Write the table in markdown.", [md], pred)
    for pred in (table, table.replace("tea", "茶"), "无"):
        add("table parsing cn", "把表格转成html", [table.replace("tea", "茶")], pred)
    chart = {"title": "Sales", "2019": "12", "2020": "15"}
    for pred in (
        "{'title': 'Sales', '2019': '12', '2020': '15'}",
        "```python\ndata = {'title': 'Sales', '2019': 12, '2020': 16}  # values\n```",
        '{"title": "Sale", "2019": "12"}',
        "no chart",
        "",
    ):
        add("chart parsing en", "Convert the chart to a python dict.", [chart], pred)
    doc = "# Title\nfirst line\n## Part\nsecond line\nthird line"
    for pred in (doc, "# Title\nfirst line", "first line\nsecond line", "## Part\n\nthird *line*"):
        add("document parsing en", "Parse to markdown.", [doc], pred)
        add(
            "document parsing cn",
            "解析为markdown",
            [doc.replace("line", "行")],
            pred.replace("line", "行"),
        )
    kie = {"company": ["OLD TOWN", "OLD TOWN KOPITAM"], "total": ["30"], "date": ["2024/9/27"]}
    for pred in (
        '{"company": "OLD TOWN", "total": "30", "date": "2024/9/27"}',
        '```json\n{"company": "Old Town Kopitam", "total": "30.00"}\n```',
        "company: OLD TOWN\ntotal = 30",
        "{'company': 'x', 'tip': '1'}",
        "nothing",
    ):
        add("key information extraction en", "Extract as JSON.", [kie], pred)
        add(
            "key information mapping en",
            "Map as JSON.",
            [json.dumps({"name": "Ann", "age": "31"})],
            pred,
        )
    kie_cn = str({"公司": "甲乙", "日期": ["2024", "2024年"]})
    for pred in ('{"公司": "甲乙", "日期": "2024年"}', "公司：甲乙", "{'公司': '甲 乙'}"):
        add("key information extraction cn", "提取关键信息", [kie_cn], pred)
    for pred in ('{"answer": "tea", "bbox": [100, 100, 200, 150]}', '{"answer": "coffee", "bbox": "[90, 100, 210, 160]"}',
                 "answer: tea", "{'answer': 'tea', 'bbox': [0, 0, 10]}"):  # fmt: skip
        add(
            "VQA with position en",
            "Answer with position.",
            ["tea"],
            pred,
            bbox=[100, 100, 200, 150],
        )
    for pred in ("[100, 100, 200, 150]", "The box is (110, 90, 210, 160).", "(1, 2, 3) and [5,5,1001,9]",
                 "[100,100,200,150] then [10, 10, 20, 20]", "none"):  # fmt: skip
        add("text grounding en", "Where is 'tea'?", [100, 100, 200, 150], pred)
    boxes = [[10, 10, 100, 10, 100, 50, 10, 50], [200, 200, 300, 200, 300, 240, 200, 240],
             [400, 400, 500, 400, 500, 450, 400, 450]]  # fmt: skip
    for pred in (
        "[[10, 10, 100, 50, 'Hello'], [200, 200, 300, 240, 'World!']]",
        "[(12, 11, 98, 52, 'HELLO'), (201, 199, 305, 238, 'world')]",
        "(10, 10, 100, 50, Hello), (410, 405, 495, 445, anything)",
        "[[0,0,5,5,'x']]",
        "no boxes",
    ):
        add(
            "text spotting en",
            "Spot all text.",
            [""],
            pred,
            bbox=boxes,
            content=["Hello", "World", "###"],
        )
    for _ in range(4):
        gold = cn_text(rng, 15)
        add("text translation cn", "翻译", [gold], rng.choice([gold, gold[:9], cn_text(rng, 15)]))
    add("text translation cn", "翻译", [""], "什么")
    add("text translation cn", "Translate", ["the cat sat on the mat"], "the cat is on the mat")
    for kind in ("fine-grained text recognition en", "full-page OCR en"):
        for _ in range(4):
            gold = sentence(rng, 12)
            add(
                kind,
                "Read all text.",
                [gold],
                rng.choice([gold, gold[: len(gold) // 2], sentence(rng, 10), ""]),
            )
    for _ in range(4):
        gold = cn_text(rng, 20)
        add(
            "full-page OCR cn",
            "读出所有文字",
            [gold],
            rng.choice([gold, gold[:10], cn_text(rng, 18), ""]),
        )
    return out


def run_reference(mirror: str, python: str, data: list[dict]) -> tuple[list[dict], str]:
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "src.tar"
        subprocess.run(
            [
                "git",
                "--git-dir",
                mirror,
                "archive",
                "-o",
                str(archive),
                COMMIT,
                "OCRBench_v2/eval_scripts",
            ],
            check=True,
        )
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        work = Path(tmp) / "OCRBench_v2"
        (work / "in.json").write_text(json.dumps(data, ensure_ascii=False))
        subprocess.run([python, "eval_scripts/eval.py", "--input_path", "in.json", "--output_path", "res.json"],
                       cwd=work, check=True, capture_output=True)  # fmt: skip
        scored = json.loads((work / "res.json").read_text())
        printed = subprocess.run([python, "eval_scripts/get_score.py", "--json_file", "res.json"],
                                 cwd=work, check=True, capture_output=True, text=True).stdout  # fmt: skip
    return scored, printed


def main() -> None:
    mirror, python = sys.argv[1], sys.argv[2]
    data = items(random.Random(37))
    scored, printed = run_reference(mirror, python, data)
    (HERE / "items.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    expected = {
        "source": f"Yuliang-Liu/MultimodalOCR @ {COMMIT} OCRBench_v2/eval_scripts eval.py + get_score.py",
        "scores": [{"id": s["id"], "score": s["score"], "ignore": s.get("ignore")} for s in scored],
        "get_score": printed,
    }
    (HERE / "expected.json").write_text(json.dumps(expected, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
