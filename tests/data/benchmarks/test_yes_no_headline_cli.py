"""MME's and POPE's headline accuracy reads each sentence answer by the benchmark's own rule.

Both were open-ended items whose ``accuracy`` compared the whole answer with "yes" or "no"
("Yes, there is a dog." never matched). Each is now a choice between yes and no that is never
shown, read by its official rule (matchers ``mme``, ``pope``, which the official figures share):
the headline agrees with the benchmark's own reading, an answer MME's rule cannot read is
unparsed, and a judge's reading (the fake OpenAI server's) decides it in the headline, named as
judged, while MME's own scores still count it wrong as its tool does. Through the console script.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset, Features, Image, Value
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import tiny_png, write_hub_snapshot

from lmmprobe.testing.openai_server import FakeOpenAIServer

# MME: two images of two questions each, answered in sentences.
MME_ROWS = {
    "question_id": ["existence/1.png"] * 2 + ["existence/2.png"] * 2,
    "question": [f"Is there a {t} in this image? Please answer yes or no." for t in
                 ("dog", "cat", "car", "bus")],
    "answer": ["Yes", "No", "Yes", "No"],
    "category": ["existence"] * 4,
}  # fmt: skip
MME_REPLIES = {
    "dog": "Yes, there is a dog.",  # MME reads yes: right
    "cat": "No, there is no cat.",  # no: right
    "car": "There is a red car.",  # neither in its first four characters: unparsed
    "bus": "Not a single bus.",  # "not " holds no: right
}
POPE_ROWS = {
    "id": ["0", "1", "2"],
    "question_id": ["1", "2", "3"],
    "question": [f"Is there a {t} in the image?" for t in ("dog", "cat", "car")],
    "answer": ["yes", "no", "no"],
    "image_source": ["COCO_val2014_1"] * 3,
    "category": ["random"] * 3,
}
POPE_REPLIES = {
    "dog": "Yes, there is a dog in the image.",  # POPE reads yes: right
    "cat": "There is no cat.",  # no: right
    "car": "I see a car.",  # yes: wrong
}


def _copy(tmp_path: Path, name: str, rows: dict[str, list[str]]) -> Path:
    n = len(next(iter(rows.values())))
    images = [{"bytes": tiny_png((40 * i, 80, 160)), "path": f"{i}.png"} for i in range(n)]
    columns: dict[str, Any] = {**rows, "image": images}
    feats = Features({k: (Image() if k == "image" else Value("string")) for k in columns})
    return write_hub_snapshot(tmp_path / name, {"test": Dataset.from_dict(columns, features=feats)})


def _run(
    tmp_path: Path,
    name: str,
    rows: dict[str, list[str]],
    replies: dict[str, str],
    *more: str,
    judge: tuple[tuple[str, str], ...] = (),
) -> tuple[str, dict[str, Any]]:
    folder = _copy(tmp_path, name, rows)
    # The model's reply by the object its question names; a judge prompt (quoting the answer
    # after '">' and a newline) is matched first.
    table = [*judge, *((f"a {t} in", a) for t, a in replies.items())]
    out = tmp_path / "out"
    with FakeOpenAIServer(reply_table=table) as server:
        url = server.base_url
        proc = lmmprobe(
            "run", "-m", f"openai:fake-vlm@{url}", "--data", f"{name},path={folder}",
            "--db", tmp_path / "db", "--out", out, "--bootstrap", "0",
            *(a.replace("URL", url) for a in more),
            OPENAI_API_KEY="test-key", HF_DATASETS_CACHE=str(tmp_path / "datasets-cache"),
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "results.json").read_text())
    (model,) = doc["models"].values()
    return " ".join((proc.stdout + proc.stderr).split()), model


def _value(model: dict[str, Any], name: str) -> float:
    value: float = model["metrics"][name]["value"]
    return value


def test_mme_sentence_answers_are_read_as_mmes_tool_reads_them(tmp_path: Path) -> None:
    _, model = _run(tmp_path, "mme", MME_ROWS, MME_REPLIES)
    # Before: 0.0 (no whole sentence equals "yes" or "no"). Now 3 of 4, as MME reads them.
    assert _value(model, "accuracy") == pytest.approx(3 / 4)
    assert _value(model, "unparsed_rate") == pytest.approx(1 / 4)
    # MME's score is unchanged: existence 3/4 right, one image of two fully right.
    assert _value(model, "mme_perception") == pytest.approx(125.0)
    assert "judged_headline" not in model


def test_an_answer_mmes_rule_cannot_read_takes_the_judges_reading_in_the_headline(
    tmp_path: Path,
) -> None:
    # The judge reads the unparsed answer as option A (yes): right.
    stdout, model = _run(
        tmp_path, "mme", MME_ROWS, MME_REPLIES, "--judge", "openai:judge@URL",
        judge=(('">\nThere is a red car.', "A"),),
    )  # fmt: skip
    assert _value(model, "accuracy") == pytest.approx(4 / 4)
    assert _value(model, "accuracy_rules_only") == pytest.approx(3 / 4)
    assert model["judged_headline"]["answers"] == 1 and model["judged_headline"]["correct"] == 1
    # MME's own score counts the answer its tool reads "other" wrong, judge or not.
    assert _value(model, "mme_perception") == pytest.approx(125.0)
    assert "accuracy, balanced_accuracy judged: 1 answer(s) the rules could not read" in stdout


def test_mmes_score_is_not_given_for_answers_read_by_another_matcher(tmp_path: Path) -> None:
    # lmmprobe's matcher reads "Certainly yes." as yes; MME's rule reads its first four
    # characters, "cert": other, wrong. Under MME's name the score would be 200.0, not MME's
    # 125.0, so it is not given (an info line says why: `read_officially`).
    replies = {**MME_REPLIES, "dog": "Certainly yes.", "car": "Yes, a car."}
    _, model = _run(tmp_path, "mme", MME_ROWS, replies, "--matcher", "lmmprobe")
    assert "accuracy" in model["metrics"]
    assert "mme_perception" not in model["metrics"]
    # The benchmark's own reading (the default) gives MME's figure for the same answers.
    _, model = _run(tmp_path / "own", "mme", MME_ROWS, replies)
    assert _value(model, "mme_perception") == pytest.approx(125.0)


def test_popes_figures_are_not_given_for_answers_read_by_another_matcher(tmp_path: Path) -> None:
    _, model = _run(tmp_path, "pope", POPE_ROWS, POPE_REPLIES, "--matcher", "lmmprobe")
    assert "accuracy" in model["metrics"]
    assert not {k for k in model["metrics"] if k.startswith("pope_")}


def test_pope_sentence_answers_are_read_as_popes_evaluate_reads_them(tmp_path: Path) -> None:
    _, model = _run(tmp_path, "pope", POPE_ROWS, POPE_REPLIES)
    # Before: 0.0. Now the headline is POPE's own accuracy over the same answers.
    assert _value(model, "accuracy") == pytest.approx(2 / 3)
    assert _value(model, "pope_accuracy") == pytest.approx(2 / 3)
    assert _value(model, "unparsed_rate") == 0.0


def _offline(tmp_path: Path) -> dict[str, str]:
    """No copy of any benchmark: the items come from the table itself."""
    (tmp_path / "nodata").mkdir(exist_ok=True)
    return {
        "LMMPROBE_DATA_DIR": str(tmp_path / "nodata"),
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_CACHE": str(tmp_path / "hf-home" / "hub"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(tmp_path / "datasets-cache"),
    }


def _score(tmp_path: Path, name: str, header: str, rows: list[str]) -> dict[str, Any]:
    table = tmp_path / f"Model_{name.upper()}.tsv"
    table.write_text("".join(f"{line}\n" for line in [header, *rows]), encoding="utf-8")
    done = lmmprobe("score", table, "--benchmark", name, "--format", "json", **_offline(tmp_path))
    assert done.returncode == 0, done.stderr
    metrics: dict[str, Any] = json.loads(done.stdout)["metrics"]
    return metrics


def test_a_vlmevalkit_mme_table_of_sentences_scores_as_mmes_tool_reads_it(
    tmp_path: Path,
) -> None:
    # An imported answer is read by the benchmark's matcher, as a run's is.
    metrics = _score(
        tmp_path, "mme", "index\timage_path\tquestion\tanswer\tcategory\tprediction",
        ["0\t1.jpg\tIs it red? Please answer yes or no.\tYes\tcolor\tYes, it is red.",
         "1\t1.jpg\tIs it blue? Please answer yes or no.\tNo\tcolor\tNo, it is not.",
         "2\t2.jpg\tIs it green? Please answer yes or no.\tYes\tcolor\tIt looks green.",
         "3\t2.jpg\tIs it pink? Please answer yes or no.\tNo\tcolor\tno"],
    )  # fmt: skip
    assert metrics["accuracy"]["value"] == pytest.approx(3 / 4)
    assert metrics["unparsed_rate"]["value"] == pytest.approx(1 / 4)
    assert metrics["mme_perception"]["value"] == pytest.approx(75.0 + 50.0)


def test_a_vlmevalkit_pope_table_of_sentences_scores_as_popes_evaluate_reads_it(
    tmp_path: Path,
) -> None:
    metrics = _score(
        tmp_path, "pope", "index\tquestion\tanswer\tcategory\timage_path\tprediction",
        ["0\tIs there a dog in the image?\tYes\trandom\tCOCO_val2014_1.jpg\tYes, there is a dog.",
         "1\tIs there a cat in the image?\tNo\trandom\tCOCO_val2014_1.jpg\tThere is no cat.",
         "2\tIs there a car in the image?\tNo\trandom\tCOCO_val2014_1.jpg\tI see a car."],
    )  # fmt: skip
    assert metrics["accuracy"]["value"] == pytest.approx(2 / 3)
    assert metrics["pope_accuracy"]["value"] == pytest.approx(2 / 3)
