"""Dysca's released test set by name (``--data dysca``) and Dysca's validity check (issue 28).

The question list is real output of Dysca's own ``pqa_generate.py`` + ``pqa_postprocess.py``
(tests/data/benchmarks/fixtures/dysca/README.md says how it was made); the tests lay it out as
Dysca's scripts lay out the released set (``Dysca.json`` beside ``Dysca/``,
``Dysca_corruption/``, ``Dysca_print_attack/``) with tiny images.
"""

from __future__ import annotations

import json
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from tests.console import lmmprobe

from lmmprobe.data import load_source
from lmmprobe.formulate.prompt import formulate

FIXTURE = Path(__file__).parent / "fixtures" / "dysca" / "Dysca.json"
EXPECTED = FIXTURE.with_name("compute_expected.json")


def _entries() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def _copy(root: Path, entries: list[dict[str, Any]] | None = None) -> Path:
    """A local copy in the layout of Dysca's scripts, with 8x8 images."""
    entries = _entries() if entries is None else entries
    root.mkdir(parents=True, exist_ok=True)
    (root / "Dysca.json").write_text(json.dumps(entries), encoding="utf-8")
    for folder in ("Dysca", "Dysca_corruption", "Dysca_print_attack"):
        (root / folder).mkdir(exist_ok=True)
    for e in entries:
        name = Path(e["images"][0]).name
        Image.new("RGB", (8, 8), "red").save(root / "Dysca" / name)
        Image.new("RGB", (8, 8), "gray").save(root / "Dysca_corruption" / name)
        if e["task"] != "OCR":
            Image.new("RGB", (8, 8), "blue").save(root / "Dysca_print_attack" / f"{e['id']}.png")
    return root


def test_every_question_is_asked_with_its_released_instruction_byte_for_byte(
    tmp_path: Path,
) -> None:
    root = _copy(tmp_path / "dysca")
    loaded = load_source(f"dysca,path={root},split=clean")
    by_id = {e["id"]: e for e in _entries()}
    assert loaded.samples
    for sample in loaded.samples:
        entry = by_id[sample.metadata["dysca_id"]]
        request = formulate(sample)
        assert request.prompt == entry["instruction"], sample.id
        if entry["question_type"] != "image caption":
            assert sample.choices == entry["options"]
            assert sample.choices[sample.answer] == entry["answer"]  # type: ignore[index]


def test_breakdown_keys_cover_every_subtask_question_type_and_style(tmp_path: Path) -> None:
    root = _copy(tmp_path / "dysca")
    loaded = load_source(f"dysca,path={root},split=clean")
    meta = [s.metadata for s in loaded.samples]
    good = [e for e in _entries() if e["question"]]
    assert {m["subtask"] for m in meta} == {e["question_majority"] for e in good}
    assert Counter(m["question_type"] for m in meta) == Counter(
        {"multi choice": "multiple_choice", "true or false": "true_false"}.get(
            e["question_type"], "free_form"
        )
        for e in good
    )
    # Every prompt Dysca's generator wrote names its style by Styles.json's tail.
    assert all(m.get("style") for m in meta)
    style_questions = [
        (s, e)
        for s in loaded.samples
        for e in good
        if e["id"] == s.metadata["dysca_id"] and e["question_majority"] == "style"
        if e["question_type"] == "multi choice"
    ]
    assert style_questions
    for sample, entry in style_questions:
        assert sample.metadata["style"] == entry["answer"]


def test_the_empty_questions_of_dysca_generator_are_reported_with_file_entry_and_field(
    tmp_path: Path,
) -> None:
    root = _copy(tmp_path / "dysca")
    loaded = load_source(f"dysca,path={root},split=clean")
    empty = [e["id"] for e in _entries() if not e["question"]]
    assert [p.field for p in loaded.problems] == ["question"] * len(empty)
    assert [p.source for p in loaded.problems] == [
        f"{root / 'Dysca.json'}[clean]:#{i}" for i in empty
    ]


def test_all_reads_every_scenario_present_and_print_attack_images_by_question_id(
    tmp_path: Path,
) -> None:
    entries = _entries()
    entries[0] = {**entries[0], "task": "OCR"}  # print_attack.py makes no image for OCR
    root = _copy(tmp_path / "dysca", entries)
    loaded = load_source(f"dysca,path={root}")
    scenarios = Counter(s.metadata["scenario"] for s in loaded.samples)
    assert set(scenarios) == {"clean", "corruption", "print_attack"}
    # The adversarial images (no released script): the clean names, in Dysca_adversarial/.
    (root / "Dysca_adversarial").mkdir()
    for e in entries:
        name = Path(e["images"][0]).name
        Image.new("RGB", (8, 8), "green").save(root / "Dysca_adversarial" / name)
    adversarial = load_source(f"dysca,path={root},split=adversarial").samples
    assert len(adversarial) == scenarios["clean"]
    assert {s.metadata["scenario"] for s in adversarial} == {"adversarial"}
    assert scenarios["print_attack"] == scenarios["clean"] - 1
    attacked = next(s for s in loaded.samples if s.id == f"dysca/print_attack/{entries[1]['id']}")
    assert attacked.images[0].path is not None
    assert Path(attacked.images[0].path).name == f"{entries[1]['id']}.png"


def test_a_missing_scenario_folder_and_a_bad_entry_are_named(tmp_path: Path) -> None:
    root = _copy(tmp_path / "dysca")
    out = lmmprobe("data", "show", "dysca", HF_HUB_OFFLINE="1")
    assert out.returncode == 0, out.stderr
    with pytest.raises(Exception, match="Dysca_adversarial"):
        load_source(f"dysca,path={root},split=adversarial")
    entries = _entries()
    del entries[4]["question_type"]
    entries[5]["options"] = "A"
    root2 = _copy(tmp_path / "bad", entries)
    loaded = load_source(f"dysca,path={root2},split=clean")
    named = {(p.source.rsplit(":", 1)[1], p.field) for p in loaded.problems}
    assert ("#5", "question_type") in named
    assert ("#6", "options") in named or entries[5]["question_type"] == "image caption"


def test_a_run_gives_dysca_average_and_the_paper_breakdowns(tmp_path: Path) -> None:
    root = _copy(tmp_path / "dysca")
    # No --matcher: Dysca's own reading is the benchmark's default.
    out = lmmprobe(
        "run",
        "--data",
        f"dysca,path={root},split=clean",
        "-m",
        "first",
        "--by",
        "subtask,question_type",
        "--out",
        str(tmp_path / "out"),
        "--db",
        str(tmp_path / "s.db"),
        "-q",
        HF_HUB_OFFLINE="1",
    )
    assert out.returncode == 0, out.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    metrics = results["models"]["first"]["metrics"]
    # `first` answers (A) everywhere: Dysca's reading takes the first option.
    rows = [e for e in _entries() if e["question"]]
    mc = [e for e in rows if e["question_type"] == "multi choice"]
    tf = [e for e in rows if e["question_type"] == "true or false"]
    mc_acc = round(sum(e["options"][0] == e["answer"] for e in mc) / len(mc) * 100, 2)
    tf_acc = round(sum(e["options"][0] == e["answer"] for e in tf) / len(tf) * 100, 2)
    # Dysca's caption column of its released set: computed even for a model with no text (its
    # average needs it, as Dysca's script computes it); the generic `dysca_caption_score` is
    # not given for rows without text (issue 34).
    caption = metrics["dysca_caption"]["value"]
    assert "dysca_caption_score" not in metrics
    assert metrics["dysca_average"]["value"] == round((mc_acc + tf_acc + caption) / 3, 2)
    assert "dysca_average" in (tmp_path / "out" / "results.md").read_text(encoding="utf-8")
    # Dysca's sensitivities: to question type (SQ) and to covariate shift over styles (SC).
    sensitivity = results["models"]["first"]["sensitivity"]
    assert sensitivity["question_type"]["S_mc"] == pytest.approx(
        sum(e["options"][0] == e["answer"] for e in mc) / len(mc) * 100
    )
    assert sensitivity["covariate_shift_SC"] > 0
    assert "first by question_type" in out.stdout or "question_type" in out.stdout
    assert results["spec"]["formulate"]["matcher"] == "dysca"


def test_another_matcher_gives_no_figure_under_dyscas_name(tmp_path: Path) -> None:
    root = _copy(tmp_path / "dysca")
    out = lmmprobe(
        "run",
        "--data",
        f"dysca,path={root},split=clean",
        "-m",
        "first",
        "--matcher",
        "lmmprobe",
        "--out",
        str(tmp_path / "out"),
        "--db",
        str(tmp_path / "s.db"),
        "-q",
        HF_HUB_OFFLINE="1",
    )
    assert out.returncode == 0, out.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    metrics = results["models"]["first"]["metrics"]
    assert results["spec"]["formulate"]["matcher"] == "lmmprobe"
    # The choice figures would be lmmprobe's reading under Dysca's name: not given.
    for name in ("dysca_average", "dysca_multi_choice_accuracy", "dysca_true_or_false_accuracy"):
        assert metrics.get(name) is None or metrics[name]["value"] is None, name


def _run(tmp_path: Path, data: str, models: list[str], out: str) -> str:
    args = ["run", "--data", data, "--db", str(tmp_path / "v.db"), "--out", str(tmp_path / out)]
    for m in models:
        args += ["-m", m]
    done = lmmprobe(*args, "-q", HF_HUB_OFFLINE="1")
    assert done.returncode == 0, done.stderr
    run_id: str = json.loads((tmp_path / out / "results.json").read_text())["run_id"]
    return run_id


MODELS = ["random", "random,seed=7", "first"]


def test_validity_correlates_the_models_of_two_runs_and_states_the_intersection(
    tmp_path: Path,
) -> None:
    root = _copy(tmp_path / "dysca")
    a = _run(tmp_path, f"dysca,path={root},split=clean", MODELS, "a")
    b = _run(tmp_path, "demo", [*MODELS, "random,seed=9"], "b")
    out = lmmprobe("runs", "validity", a, b, "--db", str(tmp_path / "v.db"), "-f", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["models"] == sorted(MODELS)
    assert doc["only_b"] == ["random,seed=9"]
    from scipy import stats

    xs = [doc["scores_a"][m] for m in doc["models"]]
    ys = [doc["scores_b"][m] for m in doc["models"]]
    rho = stats.spearmanr(xs, ys)
    tau = stats.kendalltau(xs, ys)
    assert doc["result"]["spearman_rho"] == pytest.approx(rho.statistic)
    assert doc["result"]["spearman_p"] == pytest.approx(rho.pvalue)
    assert doc["result"]["kendall_tau"] == pytest.approx(tau.statistic)
    assert doc["result"]["kendall_p"] == pytest.approx(tau.pvalue)
    table = lmmprobe("runs", "validity", a, b, "--db", str(tmp_path / "v.db"), "--by", "subtask")
    assert table.returncode == 0, table.stderr
    assert "Spearman rho" in table.stdout and "Kendall tau" in table.stdout
    assert "models compared: 3 (first, random, random,seed=7)" in table.stdout
    assert "left out, scored only on run B: random,seed=9" in table.stdout
    assert "subtask values only on run A (left out)" in table.stdout
    # Ranked by the generated set's official score against the other run's accuracy.
    official = lmmprobe(
        "runs", "validity", a, b, "--db", str(tmp_path / "v.db"), "--metric", "dysca_average",
        "--metric-b", "accuracy", "-f", "json",
    )  # fmt: skip
    assert official.returncode == 0, official.stderr
    doc = json.loads(official.stdout)
    assert (doc["metric_a"], doc["metric_b"]) == ("dysca_average", "accuracy")
    results = json.loads((tmp_path / "a" / "results.json").read_text(encoding="utf-8"))
    for m in MODELS:
        assert doc["scores_a"][m] == results["models"][m]["metrics"]["dysca_average"]["value"]
    unknown = lmmprobe("runs", "validity", a, b, "--db", str(tmp_path / "v.db"), "--metric", "nope")
    assert unknown.returncode != 0 and "unknown metric 'nope'" in unknown.stderr


def test_validity_refuses_fewer_than_three_shared_models(tmp_path: Path) -> None:
    a = _run(tmp_path, "demo", ["random", "first"], "a")
    b = _run(tmp_path, "demo,n=30", ["random", "first", "random,seed=3"], "b")
    out = lmmprobe("runs", "validity", a, b, "--db", str(tmp_path / "v.db"))
    assert out.returncode != 0
    said = out.stdout + out.stderr
    assert "at least 3 models scored on both runs" in said
    assert "2 shared (first, random)" in said


def test_dysca_figures_equal_dysca_compute_on_the_same_answers(tmp_path: Path) -> None:
    """A run's Dysca figures against Dysca's ``calculate_result`` run on the same raw answers
    (recorded in fixtures/dysca/compute_expected.json) and `score_dysca_files`.

    The multiple-choice instructions get the ``Choices:`` line the README's example of the
    released file has: without it Dysca's code reads each letter as the option before it (the
    departure docs/definitions.md states).
    """
    from lmmprobe.predictions.dysca import score_dysca_files
    from lmmprobe.testing import COLORS, FakeOpenAIServer

    entries = [e for e in _entries() if e["question"]]
    for e in entries:
        if e["question_type"] == "multi choice":
            head = f"Question: {e['question']} \n"
            assert e["instruction"].startswith(head)
            e["instruction"] = head + "Choices:\n" + e["instruction"][len(head) :]
    root = _copy(tmp_path / "dysca", entries)
    # Images of several colours, so the fake answers differ (it names the dominant colour).
    palette = list(COLORS.values())
    for k, e in enumerate(entries):
        name = Path(e["images"][0]).name
        Image.new("RGB", (8, 8), palette[k % len(palette)]).save(root / "Dysca" / name)
    with FakeOpenAIServer() as server:
        out = lmmprobe(
            "run",
            "--data",
            f"dysca,path={root},split=clean",
            "-m",
            f"openai:fake-vlm@{server.base_url}",
            "--matcher",
            "dysca",
            "--by",
            "subtask",
            "--db",
            str(tmp_path / "s.db"),
            "--out",
            str(tmp_path / "out"),
            "-q",
            OPENAI_API_KEY="test-key",
        )
    assert out.returncode == 0, out.stderr
    exported = lmmprobe(
        "export", "latest", "--db", str(tmp_path / "s.db"), "-o", str(tmp_path / "x.jsonl")
    )
    assert exported.returncode == 0, exported.stderr
    texts = {
        row["sample_id"]: row["text"]
        for row in map(json.loads, (tmp_path / "x.jsonl").read_text().splitlines())
    }
    answers = [{"answer": texts[f"dysca/clean/{e['id']}"]} for e in entries]
    assert len(set(a["answer"] for a in answers)) > 1
    (tmp_path / "gt.json").write_text(json.dumps(entries), encoding="utf-8")
    (tmp_path / "output.json").write_text(json.dumps(answers), encoding="utf-8")
    # Dysca's own calculate_result on these two files (tests/parity/generate/dysca_released.py),
    # and lmmprobe's reproduction of it, agree.
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    assert [a["answer"] for a in answers] == expected["answers"]
    scored = score_dysca_files(tmp_path / "output.json", tmp_path / "gt.json")
    assert scored["overall"] == expected["overall"]
    for qm, figures in expected["by_question_majority"].items():
        assert scored["by_question_majority"][qm] == figures, qm
    reference = scored["overall"]
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    model = results["models"][f"openai:fake-vlm@{server.base_url}"]
    metrics = model["metrics"]
    assert metrics["dysca_caption_score"]["value"] == reference["caption_score"]
    for ours, theirs in DYSCA_KEYS.items():
        assert metrics[ours]["value"] == reference[theirs], ours
    # Per subtask: Dysca's per-majority dicts (a type without questions: Dysca's 0.0, no column).
    compared = 0
    for qm, figures in scored["by_question_majority"].items():
        group = model["breakdown"]["subtask"].get(qm)
        if group is None:
            continue
        for ours, theirs in DYSCA_KEYS.items():
            if ours == "dysca_average":
                continue
            value = group[ours]["value"] if ours in group else 0.0
            assert value == figures[f"{qm}_{theirs}"], (qm, ours)
            compared += 1
    # Every majority of the fixture but 'expression' (Dysca lists 'emotion') and 'text' (its
    # questions are empty, not asked).
    assert compared == 3 * 18


DYSCA_KEYS = {
    "dysca_multi_choice_accuracy": "multi_choice_accuracy",
    "dysca_true_or_false_accuracy": "true_or_false_accuracy",
    "dysca_caption": "caption_score",
    "dysca_average": "average",
}


def test_the_released_list_is_read_an_entry_at_a_time(tmp_path: Path) -> None:
    """Dysca's released list holds 617,000 questions: loading it never holds the list whole.

    A 60,000-entry list (about 50 MB) read through the benchmark's reader while each entry is
    dropped: the Python heap's peak stays a small fraction of the file (the whole list decoded
    would be several times its size).
    """
    from lmmprobe.data.benchmarks.standard.dysca import read_dysca_release

    base = _entries()
    root = _copy(tmp_path / "dysca", base)
    for _ in read_dysca_release(root, "clean"):
        pass  # what the first read imports is not what the list costs
    entries = [{**base[i % len(base)], "id": i} for i in range(60_000)]
    (root / "Dysca.json").write_text(json.dumps(entries), encoding="utf-8")
    size = (root / "Dysca.json").stat().st_size
    del entries
    tracemalloc.start()
    try:
        count = sum(1 for _ in read_dysca_release(root, "clean"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 60_000
    assert peak < size / 5, (peak, size)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"id": 1}', "expected a JSON list of entries, got a JSON object"),
        ("", "expected a JSON list of entries, got nothing"),
        ("[1, 2]", "Dysca.json:#1: expected an entry (a JSON object), got 1"),
        ('[{"id": 1}, {"id": 2', "Dysca.json:#2: not valid JSON"),
    ],
)
def test_a_question_list_of_the_wrong_shape_is_one_line_naming_the_file(
    tmp_path: Path, text: str, said: str
) -> None:
    root = _copy(tmp_path / "dysca", _entries()[:2])
    (root / "Dysca.json").write_text(text, encoding="utf-8")
    out = lmmprobe(
        "run",
        "--data",
        f"dysca,path={root},split=clean",
        "-m",
        "first",
        "--dry-run",
        HF_HUB_OFFLINE="1",
    )
    assert out.returncode != 0
    assert said in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


def _entry_with(extra: str) -> bytes:
    """The first test entry with `extra` (JSON text) as one more field."""
    return ("[" + json.dumps(_entries()[0])[:-1] + f', "x": {extra}}}]').encode()


@pytest.mark.parametrize(
    ("data", "said"),
    [
        # Bytes that do not decode were "expected a JSON list of entries, got nothing".
        (b'[{"id": "\xff"}]', "Dysca.json:1: byte 0xff at offset 9: not UTF-8 text"),
        # Text after the list was read past without a word.
        (_entry_with("1") + b" garbage", "Dysca.json: not valid JSON: 'g' after the closing ']'"),
        # An element of 80 MiB passed the 64 MiB bound (decoded whole once the buffer doubled).
        (_entry_with('"' + "a" * (80 << 20) + '"'), "Dysca.json:#1: an element larger than 64"),
        # Python's advice to call sys.set_int_max_str_digits is no advice to a user, nor
        # Python's words: the field and the digits, as the data loader says it.
        (_entry_with("9" * 5000), "Dysca.json:#1: x: an integer of 5000 digits is too long "),
    ],
    ids=["undecodable", "trailing", "huge-element", "long-integer"],
)
def test_a_malformed_question_list_is_one_line_naming_where(
    tmp_path: Path, data: bytes, said: str
) -> None:
    root = _copy(tmp_path / "dysca", _entries()[:2])
    (root / "Dysca.json").write_bytes(data)
    out = lmmprobe(
        "run", "--data", f"dysca,path={root},split=clean", "-m", "first", "--dry-run",
        columns=1000, HF_HUB_OFFLINE="1",
    )  # fmt: skip
    assert out.returncode == 2, out.stdout + out.stderr
    (line,) = [x for x in out.stderr.splitlines() if x.strip()]
    assert said in line, line
    assert "set_int_max_str_digits" not in line and "Traceback" not in out.stderr
