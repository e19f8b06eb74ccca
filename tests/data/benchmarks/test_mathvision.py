"""MATH-Vision by name: its prompt, its reading and equality, its subject and level breakdowns.

The fixture is laid out as MathLLMs/MathVision is on the Hub (``data/{split}-*.parquet``) in its
published schema. Scoring needs latex2sympy2 (``lmmprobe[mathvision]``): without it, loading
stops at once with the install line, before any model is asked.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Image, Value
from datasets import Sequence as Seq
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import scripted_model, tiny_png, write_hub_snapshot

from lmmprobe.api import evaluate
from lmmprobe.data.base import DataError, load_source
from lmmprobe.data.benchmarks import BENCHMARKS

SCRIPT = scripted_model("mathvision-scripted")
MODEL = SCRIPT.name
HAS_LATEX2SYMPY = importlib.util.find_spec("latex2sympy2") is not None

pytestmark = pytest.mark.usefixtures("own_datasets_cache")

INSTRUCTION = (
    'Please solve the problem and put your answer in one "\\boxed{}". If it is a multiple '
    'choice question, only one letter is allowed in the "\\boxed{}".\n'
)


def _folder(tmp_path: Path) -> Path:
    rows: dict[str, list[Any]] = {
        "id": ["1", "2", "3", "4"],
        "question": [
            "Which number replaces the question mark?\n<image1> #a",
            "Which bike is most expensive?\n<image1> #b",
            "What is the area of the shaded part? {r} #c",
            "Which shape comes next?\n<image1> #d",
        ],
        "options": [[], ["A", "B", "C", "D", "E"], [], ["1", "2", "3", "4", "5"]],
        "image": ["images/1.jpg", "images/2.jpg", "images/3.jpg", "images/4.jpg"],
        "decoded_image": [{"bytes": tiny_png(c), "path": None} for c in ("red", "green",
                                                                         "blue", "white")],
        "answer": ["60", "A", "$\\frac{1}{2}$", "C"],
        "solution": [None, None, None, None],
        "level": [2, 2, 5, 1],
        "subject": ["arithmetic", "arithmetic", "metric geometry - area", "logic"],
    }  # fmt: skip
    feats = Features({
        "id": Value("string"), "question": Value("string"), "options": Seq(Value("string")),
        "image": Value("string"), "decoded_image": Image(), "answer": Value("string"),
        "solution": Value("string"), "level": Value("int64"), "subject": Value("string"),
    })  # fmt: skip
    return write_hub_snapshot(
        tmp_path / "mathvision", {"test": Dataset.from_dict(rows, features=feats)}
    )


def test_it_is_registered_with_its_splits_metric_and_pinned_copy() -> None:
    b = BENCHMARKS.get("mathvision")
    assert (b.metric, b.split, b.splits, b.size) == (
        "mathvision_accuracy",
        "test",
        ("test", "testmini"),
        3040,
    )
    assert b.hub_id == "MathLLMs/MathVision" and b.revision and len(b.revision) == 40
    assert "models/GPT4V.py" in b.prompt.source and "a1f5cc3" in b.prompt.source


@pytest.mark.skipif(HAS_LATEX2SYMPY, reason="checks the message shown without latex2sympy2")
def test_without_latex2sympy2_loading_stops_with_the_install_line(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"pip install 'lmmprobe\[mathvision\]'"):
        load_source(f"mathvision,path={_folder(tmp_path)}")


@pytest.mark.skipif(not HAS_LATEX2SYMPY, reason="latex2sympy2 is not installed")
def test_prompt_reading_equality_and_breakdowns(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    SCRIPT.replies.clear()
    SCRIPT.replies.update({
        "a": "60 - 10 = 50? No: the answer is 60.",  # read "60": right
        "b": "(A)\nThe first bike costs most.",  # a letter on the first line: right
        "c": "The area is \\boxed{0.5}",  # 0.5 equals \frac{1}{2} at 2 decimals: right
        "d": "\\boxed{4}",  # the option's text is 3 (C): wrong
    })  # fmt: skip
    SCRIPT.prompts.clear()
    ev = evaluate(
        models=[MODEL], data=f"mathvision,path={folder}", db=str(tmp_path / "db"),
        out=str(tmp_path / "out"), bootstrap=0, by=["subject", "level"],
    )  # fmt: skip
    m = ev.results.models[MODEL]
    assert m.metrics["mathvision_accuracy"].value == pytest.approx(3 / 4)
    assert m.breakdown["subject"]["arithmetic"]["mathvision_accuracy"].value == 1.0
    assert m.breakdown["subject"]["logic"]["mathvision_accuracy"].value == 0.0
    assert m.breakdown["level"]["5"]["mathvision_accuracy"].value == 1.0
    # Options are listed only where they are not the letters A-E themselves.
    assert SCRIPT.prompts["b"] == INSTRUCTION + "Which bike is most expensive?\n<image1> #b\n"
    assert SCRIPT.prompts["d"] == (
        INSTRUCTION + "Which shape comes next?\n<image1> #d\n(A) 1\n(B) 2\n(C) 3\n(D) 4\n(E) 5\n"
    )
    assert SCRIPT.prompts["c"] == INSTRUCTION + "What is the area of the shaded part? {r} #c\n"


def test_the_direct_prompt_is_a_name_of_its_own_on_the_same_copy() -> None:
    cot, direct = BENCHMARKS.get("mathvision"), BENCHMARKS.get("mathvision-direct")
    assert (direct.metric, direct.split, direct.splits, direct.revision) == (
        cot.metric, cot.split, cot.splits, cot.revision,
    )  # fmt: skip
    assert direct.fetch == cot.fetch  # one download: $LMMPROBE_DATA_DIR/mathvision
    assert "geninput" in direct.prompt.source and "a1f5cc3" in direct.prompt.source


@pytest.mark.skipif(not HAS_LATEX2SYMPY, reason="latex2sympy2 is not installed")
def test_the_direct_prompt_asks_for_a_word_or_phrase(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    SCRIPT.replies.clear()
    SCRIPT.replies.update({"a": "60", "b": "A", "c": "0.5", "d": "B"})
    SCRIPT.prompts.clear()
    ev = evaluate(
        models=[MODEL], data=f"mathvision-direct,path={folder}", db=str(tmp_path / "db"),
        out=str(tmp_path / "out"), bootstrap=0,
    )  # fmt: skip
    assert ev.results.models[MODEL].metrics["mathvision_accuracy"].value == pytest.approx(3 / 4)
    direct = "Answer the question using a single word or phrase."
    # geninput: question, options (unless they are A-E), "\n", the instruction.
    assert SCRIPT.prompts["b"] == f"Which bike is most expensive?\n<image1> #b\n\n{direct}"
    assert SCRIPT.prompts["d"] == (
        f"Which shape comes next?\n<image1> #d\n(A) 1\n(B) 2\n(C) 3\n(D) 4\n(E) 5\n\n{direct}"
    )


@pytest.mark.parametrize(
    ("name", "copy"),
    [("mathvision-direct", "mathvision"), ("mmmu-pro-vision-cot", "mmmu-pro-vision")],
)
def test_a_missing_shared_copy_is_named_by_the_folder_read(
    tmp_path: Path, name: str, copy: str
) -> None:
    # Before: "no local copy at $LMMPROBE_DATA_DIR/mathvision-direct (DIR/mathvision)": the
    # variable form named a folder nothing reads.
    (tmp_path / "data").mkdir()
    done = lmmprobe(
        "run", "-m", "first", "--data", name, "-q", "--db", tmp_path / "db",
        LMMPROBE_DATA_DIR=str(tmp_path / "data"), HF_HUB_OFFLINE="1",
        HF_HOME=str(tmp_path / "hf"), HF_HUB_CACHE=str(tmp_path / "hf" / "hub"),
    )  # fmt: skip
    assert done.returncode != 0
    said = " ".join(done.stderr.split())
    assert f"no local copy at $LMMPROBE_DATA_DIR/{copy} ({tmp_path / 'data' / copy})" in said
