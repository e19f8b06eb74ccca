"""Video-MME and MVBench by name: tiny copies in their release layouts, with generated videos.

Each copy is built here as the release lays it out (Video-MME: ``videomme/test-*.parquet``,
``data/VIDEOID.mp4``, ``subtitle/VIDEOID.srt``; MVBench: ``json/TASK.json`` for its 20 tasks
and the videos under ``video/`` in the notebook's folders), with index-coded videos
(`tests.videos`). They run end to end through the console script with the ``first`` model;
the official scores are checked against ``video_parity/expected.json``, the outputs of
Video-MME's and MVBench's own scoring code on 175 generated replies
(``video_parity/make_expected.py``).
"""

from __future__ import annotations

import ast
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe
from tests.data.benchmarks.conftest import scripted_model
from tests.videos import needs_av, write_video

from lmmprobe.api import evaluate
from lmmprobe.data.base import load_source
from lmmprobe.data.benchmarks._describe import official_matcher
from lmmprobe.data.benchmarks.standard._video import read_subtitles, subtitles_at
from lmmprobe.data.benchmarks.standard.mvbench import TASKS
from lmmprobe.data.rows import RowError
from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem
from lmmprobe.parse.longvideobench import longvideobench_letter
from lmmprobe.parse.mvbench import mvbench_check, mvbench_prediction
from lmmprobe.parse.videomme import videomme_letter
from lmmprobe.schema import FramePolicy, Sample, Score
from lmmprobe.testing.openai_server import FakeOpenAIServer

PARITY = json.loads(
    (Path(__file__).parent / "video_parity" / "expected.json").read_text(encoding="utf-8")
)
SCRIPT = scripted_model("video-bench-scripted")
MODEL = SCRIPT.name

INSTRUCTION = (
    "Select the best answer to the following multiple-choice question based on the video. "
    "Respond with only the letter (A, B, C, or D) of the correct option.\n"
)
SYSTEM = (
    "Carefully watch the video and pay attention to the cause and sequence of events, the "
    "detail and movement of objects, and the action and pose of persons. Based on your "
    "observations, select the best option that accurately addresses the question.\n"
)

SRT = """1
00:00:00,000 --> 00:00:01,000
<font color="white" size=".72c">Hello there.</font>

2
00:00:01,600 --> 00:00:02,400
<font color="white" size=".72c">Not at a sampled frame.</font>

3
00:00:02,500 --> 00:00:04,000
plain text cue
second line
"""


def _videomme_row(i: int, video: str, duration: str, answer: str, tag: str) -> dict[str, Any]:
    return {
        "video_id": f"{i:03d}", "duration": duration, "domain": "Knowledge",
        "sub_category": "Astronomy", "url": "https://example.invalid", "videoID": video,
        "question_id": f"{i:03d}-1", "task_type": "Counting Problem",
        "question": f"How many? #{tag}", "options": ["A. One.", "B. Two.", "C. Three.", "D. Four."],
        "answer": answer,
    }  # fmt: skip


def _videomme_copy(root: Path, rows: list[dict[str, Any]]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    (root / "videomme").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "subtitle").mkdir()
    for video in {r["videoID"] for r in rows}:
        write_video(root / "data" / f"{video}.mp4", frames=40, fps=10)
    pq.write_table(pa.Table.from_pylist(rows), root / "videomme" / "test-00000-of-00001.parquet")
    return root


def _mvbench_copy(root: Path, by_task: dict[str, list[dict[str, Any]]]) -> Path:
    (root / "json").mkdir(parents=True)
    for task in TASKS:
        rows = by_task.get(task.file, [])
        (root / "json" / task.file).write_text(json.dumps(rows), encoding="utf-8")
        for row in rows:
            where = root / "video" / task.folder / row["video"]
            if task.frames:
                where.mkdir(parents=True, exist_ok=True)
                from PIL import Image

                for k in range(1, 31):  # 10 s at 3 fps, files from 00001.jpg
                    Image.new("RGB", (16, 16), (8 * k, 0, 0)).save(where / f"{k:05d}.jpg")
            elif not where.exists():
                where.parent.mkdir(parents=True, exist_ok=True)
                write_video(where, frames=40, fps=10)
    return root


def _results(out: Path) -> dict[str, Any]:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- Video-MME


def test_videomme_runs_by_name_through_the_console_with_its_frames_recorded(tmp_path: Path) -> None:
    needs_av()
    rows = [
        _videomme_row(1, "vidA", "short", "A", "a"),
        _videomme_row(2, "vidA", "medium", "B", "b"),
        _videomme_row(3, "vidB", "long", "A", "c"),
    ]
    copy = _videomme_copy(tmp_path / "videomme", rows)
    (copy / "subtitle" / "vidA.srt").write_text(SRT, encoding="utf-8")
    for name in ("videomme", "videomme-subtitles"):
        out = tmp_path / f"out-{name}"
        proc = lmmprobe("run", "-d", f"{name},path={copy}", "-m", "first", "--db",
                        tmp_path / f"{name}.db", "--out", out, "--by", "duration", "-q")  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        model = next(iter(_results(out)["models"].values()))
        # `first` answers A: right on the short and long questions, wrong on the medium one.
        assert model["metrics"]["videomme_accuracy"]["value"] == pytest.approx(2 / 3)
        by = model["breakdown"]["duration"]
        assert {k: v["videomme_accuracy"]["value"] for k, v in by.items()} == {
            "short": 1.0, "medium": 0.0, "long": 1.0,
        }  # fmt: skip
        with sqlite3.connect(tmp_path / f"{name}.db") as db:
            videos = [
                json.loads(doc)["video"] for (doc,) in db.execute("SELECT sample FROM samples")
            ]
        assert len(videos) == 3
        for video in videos:  # Video-MME's default policy, recorded: 32 linspace frames
            assert video["sampled_with"] == "linspace=32"
            want = FramePolicy.parse("linspace=32").indices(40, 10.0)
            assert [round(f["time"] * 10) for f in video["frames"]] == want


def test_videomme_prompts_are_the_readmes_with_the_subtitles_of_the_sampled_frames(
    tmp_path: Path,
) -> None:
    needs_av()
    copy = _videomme_copy(tmp_path / "vm", [_videomme_row(1, "vidA", "short", "C", "p"),
                                            _videomme_row(2, "vidB", "long", "C", "q"),
                                            _videomme_row(3, "vidC", "long", "C", "s")])  # fmt: skip
    (copy / "subtitle" / "vidA.srt").write_text(SRT, encoding="utf-8")
    # vidC's one cue falls between the sampled frames: the heading stays, over no line.
    late = "1\n00:00:00,600 --> 00:00:01,400\nbetween frames\n"
    (copy / "subtitle" / "vidC.srt").write_text(late, encoding="utf-8")
    SCRIPT.replies.update({"p": "C", "q": "C", "s": "C"})
    question = "How many? #{}\nA. One.\nB. Two.\nC. Three.\nD. Four.\nThe best answer is:"
    plain = {t: INSTRUCTION + question.format(t) for t in "pqs"}
    # frames=4 samples 0.5, 1.5, 2.5 and 3.5 s: cues 1 and 3 are shown then, cue 2 is not.
    shown = "This video's subtitles are listed below:\nHello there.\nplain text cue second line\n"
    none = "This video's subtitles are listed below:\nNo subtitles available\n"
    empty = "This video's subtitles are listed below:\n\n"
    for name, want in (("videomme", plain), ("videomme-subtitles",
                       {"p": shown + plain["p"], "q": none + plain["q"],
                        "s": empty + plain["s"]})):  # fmt: skip
        SCRIPT.prompts.clear()
        ev = evaluate(models=[MODEL], data=f"{name},path={copy}", db=str(tmp_path / f"{name}.db"),
                      out=str(tmp_path / name), bootstrap=0, frames="4")  # fmt: skip
        assert SCRIPT.prompts == want
        assert ev.results.models[MODEL].metrics["videomme_accuracy"].value == 1.0


def test_videomme_accuracy_equals_its_official_script_on_generated_answers(tmp_path: Path) -> None:
    needs_av()
    expected = PARITY["videomme"]
    rows = []
    for i, row in enumerate(expected["rows"]):
        # Each reading first, as extract_characters_regex read it.
        assert videomme_letter(row["reply"]) == row["letter"], row["reply"]
        rows.append(_videomme_row(i, "vidA", row["duration"], row["gold"], f"r{i}"))
        SCRIPT.replies[f"r{i}"] = row["reply"]
    copy = _videomme_copy(tmp_path / "vm", rows)
    ev = evaluate(models=[MODEL], data=f"videomme,path={copy}", db=str(tmp_path / "db"),
                  out=str(tmp_path / "out"), bootstrap=0, by=["duration"], frames="2",
                  formulate={"matcher": official_matcher("videomme")})  # fmt: skip
    m = ev.results.models[MODEL]
    printed = {"all": m.metrics["videomme_accuracy"].value}
    printed.update({d: m.breakdown["duration"][d]["videomme_accuracy"].value
                    for d in ("short", "medium", "long")})  # fmt: skip
    assert {k: f"Overall: {100 * v: .1f}%" for k, v in printed.items()} == expected["overall"]
    # Unrounded: right over the answers read, as the script counts them.
    read = [r for r in expected["rows"] if r["letter"]]
    assert printed["all"] == pytest.approx(sum(r["letter"] == r["gold"] for r in read) / len(read))


def test_a_videomme_row_with_a_missing_or_escaping_video_is_one_line_and_the_rest_load(
    tmp_path: Path,
) -> None:
    needs_av()
    rows = [_videomme_row(1, "vidA", "short", "A", "a"), _videomme_row(2, "gone", "short", "A", "b"),
            _videomme_row(3, "../../etc", "long", "A", "c")]  # fmt: skip
    copy = tmp_path / "vm"
    _videomme_copy(copy, rows[:1])
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows), copy / "videomme" / "test-00000-of-00001.parquet")
    loaded = load_source(f"videomme,path={copy}")
    assert [s.id for s in loaded.samples] == ["videomme/001-1"]
    problems = [str(p) for p in loaded.problems]
    assert len(problems) == 2
    assert "videoID: video file not found: data/gone.mp4" in problems[0]
    assert "videoID: '../../etc' is not a video id" in problems[1]


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=400) | st.sampled_from([SRT, SRT * 50, "1\n" * 5000]))
def test_the_subtitle_reader_reads_any_text_without_failing(
    text: str, tmp_path_factory: Any
) -> None:
    path = tmp_path_factory.mktemp("srt") / "x.srt"
    path.write_text(text, encoding="utf-8", errors="surrogatepass" if False else "replace")
    cues = read_subtitles(path, "subtitle")
    assert all(c.text.strip() for c in cues)
    subtitles_at(cues, [0.5, 1.5])


def test_an_oversized_or_binary_subtitle_file_is_named(tmp_path: Path) -> None:
    big = tmp_path / "big.srt"
    big.write_bytes(b"1\n00:00:00,000 --> 00:00:01,000\nx\n\n" * 300_000)
    with pytest.raises(RowError, match=r"subtitles .*big\.srt"):
        read_subtitles(big, "subtitle")
    binary = tmp_path / "bin.srt"
    binary.write_bytes(b"\xff\xfe\x00\x81" * 10)
    with pytest.raises(RowError, match=r"subtitles .*bin\.srt"):
        read_subtitles(binary, "subtitle")


# --------------------------------------------------------------------------- MVBench


def _mv(video: str, question: str, answer: str, **extra: Any) -> dict[str, Any]:
    return {"video": video, "question": question, "candidates": ["red", "blue", "green"],
            "answer": answer, **extra}  # fmt: skip


def test_mvbench_runs_by_name_through_the_console_with_its_frames_recorded(tmp_path: Path) -> None:
    needs_av()
    copy = _mvbench_copy(tmp_path / "mvbench", {
        "action_sequence.json": [_mv("s1.mp4", "What first? #s", "red", start=1.0, end=3.0)],
        "object_existence.json": [_mv("e1.mp4", "Which? #e", "blue")],
        "episodic_reasoning.json": [_mv("ep1", "Why? #r", "red", start=2.0, end=8.0)],
    })  # fmt: skip
    out = tmp_path / "out"
    proc = lmmprobe("run", "-d", f"mvbench,path={copy}", "-m", "first", "--db", tmp_path / "db",
                    "--out", out, "--by", "task_type", "-q")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    model = next(iter(_results(out)["models"].values()))
    # `first` answers A: right where red is the answer.
    assert model["metrics"]["mvbench_accuracy"]["value"] == pytest.approx(2 / 3)
    assert model["breakdown"]["task_type"]["Object Existence"]["mvbench_accuracy"]["value"] == 0.0
    with sqlite3.connect(tmp_path / "db") as db:
        samples = {
            sid: json.loads(doc) for sid, doc in db.execute("SELECT sample_id, sample FROM samples")
        }
    bounded = samples["mvbench/action_sequence/1"]["video"]
    assert bounded["sampled_with"] == "mvbench=16"
    # get_index over the bound 1-3 s at 10 fps: frames 10 to 30 in 16 segments.
    want = FramePolicy.parse("mvbench=16").indices(40, 10.0, 1.0, 3.0)
    assert [round(f["time"] * 10) for f in bounded["frames"]] == want
    assert want[0] == 10 and want[-1] == 29
    whole = samples["mvbench/object_existence/1"]["video"]
    assert [round(f["time"] * 10) for f in whole["frames"]] == FramePolicy.parse(
        "mvbench=16"
    ).indices(40, 10.0)
    # Episodic Reasoning's frames are files at 3 fps, from 00001.jpg: 16 of them as images.
    episodic = samples["mvbench/episodic_reasoning/1"]
    assert episodic.get("video") is None and len(episodic["images"]) == 16


def test_mvbench_prompt_and_its_check_equal_the_notebooks(tmp_path: Path) -> None:
    needs_av()
    rows = []
    for i, row in enumerate(PARITY["mvbench"]):
        # check_ans on '(' and the first line, as the notebook ran it.
        assert mvbench_check(mvbench_prediction(row["reply"]), row["gold"]) is row["right"]
        letter, text = row["gold"][1], row["gold"][4:]
        candidates = ["x0", "x1", "x2", "x3"]
        candidates["ABCD".index(letter)] = text
        rows.append({"video": "v.mp4", "question": f"Q #m{i}", "candidates": candidates,
                     "answer": text})  # fmt: skip
        SCRIPT.replies[f"m{i}"] = row["reply"]
    copy = _mvbench_copy(tmp_path / "mv", {"object_existence.json": rows})
    SCRIPT.prompts.clear()
    ev = evaluate(models=[MODEL], data=f"mvbench,path={copy}", db=str(tmp_path / "db"),
                  out=str(tmp_path / "out"), bootstrap=0, frames="2",
                  formulate={"matcher": official_matcher("mvbench")})  # fmt: skip
    right = [r["right"] for r in PARITY["mvbench"]]
    assert ev.results.models[MODEL].metrics["mvbench_accuracy"].value == pytest.approx(
        sum(right) / len(right)
    )
    first = PARITY["mvbench"][0]["gold"]
    options = ["x0", "x1", "x2", "x3"]
    options["ABCD".index(first[1])] = first[4:]
    assert SCRIPT.prompts["m0"] == (
        SYSTEM
        + "Question: Q #m0\nOptions:\n"
        + "\n".join(f"({m}) {o}" for m, o in zip("ABCD", options, strict=True))
        + "\nOnly give the best option."
    )


# --------------------------------------------------------------------------- EgoSchema


def _egoschema_copy(root: Path, uids: list[str], answers: dict[str, int]) -> Path:
    (root / "videos").mkdir(parents=True)
    questions = []
    for uid in uids:
        write_video(root / "videos" / f"{uid}.mp4", frames=40, fps=10)
        questions.append({"q_uid": uid, "google_drive_id": "x", "question": f"What is c doing? #{uid}",
                          **{f"option {i}": f"c does thing {i}" for i in range(5)}})  # fmt: skip
    (root / "questions.json").write_text(json.dumps(questions), encoding="utf-8")
    (root / "subset_answers.json").write_text(json.dumps(answers), encoding="utf-8")
    return root


def test_egoschema_reads_the_public_subset_and_runs_through_the_console(tmp_path: Path) -> None:
    needs_av()
    # Three questions, two with public answers: only those two are read.
    copy = _egoschema_copy(tmp_path / "egoschema", ["u1", "u2", "u3"], {"u1": 0, "u3": 2})
    out = tmp_path / "out"
    proc = lmmprobe("run", "-d", f"egoschema,path={copy}", "-m", "first", "--db", tmp_path / "db",
                    "--out", out, "-q")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    model = next(iter(_results(out)["models"].values()))
    assert model["metrics"]["accuracy"]["value"] == 0.5  # `first` answers A: right on u1
    assert model["metrics"]["accuracy"]["n"] == 2
    with sqlite3.connect(tmp_path / "db") as db:
        rows = dict(db.execute("SELECT sample_id, sample FROM samples"))
    assert sorted(rows) == ["egoschema/u1", "egoschema/u3"]
    assert json.loads(rows["egoschema/u1"])["video"]["sampled_with"] == "linspace=32"
    SCRIPT.replies.update({"u1": "B", "u3": "C"})
    SCRIPT.prompts.clear()
    evaluate(models=[MODEL], data=f"egoschema,path={copy}", db=str(tmp_path / "db2"),
             out=str(tmp_path / "o2"), bootstrap=0, frames="2")  # fmt: skip
    assert SCRIPT.prompts["u1"] == (
        "What is c doing? #u1\n"
        + "\n".join(f"{m}. c does thing {i}" for i, m in enumerate("ABCDE"))
        + "\nAnswer with the option's letter from the given choices directly."
    )


@pytest.mark.parametrize("numeric_answers", [False, True])
def test_egoschema_with_numeric_question_ids_says_why_nothing_loads(
    numeric_answers: bool, tmp_path: Path
) -> None:
    # Re-test 14: numeric q_uids gave "no valid samples ... (0 invalid)" and no reason. A
    # number whose text is an answer's key is refused as such; ids matching no answer at all
    # are named as that.
    needs_av()
    answers = {"1": 0, "2": 1} if numeric_answers else {"u1": 0}
    copy = _egoschema_copy(tmp_path / "egoschema", ["1", "2"], answers)
    file = copy / "questions.json"
    held = json.loads(file.read_text(encoding="utf-8"))
    file.write_text(json.dumps([{**q, "q_uid": int(q["q_uid"])} for q in held]), encoding="utf-8")
    proc = lmmprobe("run", "-d", f"egoschema,path={copy}", "-m", "first", "--dry-run",
                    columns=1000)  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "(0 invalid)" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    if numeric_answers:
        assert f"{file}:1: q_uid: expected non-empty text, got 1" in proc.stderr, proc.stderr
    else:
        assert f"{file}: none of its 2 questions' q_uid is a key of subset_answers.json" in (
            proc.stderr
        ), proc.stderr


# --------------------------------------------------------------------------- LongVideoBench


def _lvb_row(i: int, video: str, duration: float, gold: int, group: str) -> dict[str, Any]:
    return {"id": f"q{i}", "video_id": video, "video_path": f"{video}.mp4", "duration": duration,
            "question": f"What happens? #v{i}", "candidates": ["red", "blue", "green", "grey"],
            "correct_choice": gold, "duration_group": group, "question_category": "E2O",
            "topic_category": "NP-News-Programs", "level": "L1-Perception",
            "subtitle_path": f"{video}_en.json", "starting_timestamp_for_subtitles": 0}  # fmt: skip


def _lvb_copy(root: Path, rows: list[dict[str, Any]]) -> Path:
    (root / "videos").mkdir(parents=True)
    for video in {r["video_id"] for r in rows}:
        write_video(root / "videos" / f"{video}.mp4", frames=40, fps=10)
    (root / "lvb_val.json").write_text(json.dumps(rows), encoding="utf-8")
    return root


def test_longvideobench_runs_by_name_through_the_console_with_its_frames(tmp_path: Path) -> None:
    needs_av()
    copy = _lvb_copy(tmp_path / "longvideobench", [_lvb_row(1, "a", 4.0, 0, "15"),
                                                   _lvb_row(2, "a", 4.0, 2, "600")])  # fmt: skip
    out = tmp_path / "out"
    proc = lmmprobe("run", "-d", f"longvideobench,path={copy}", "-m", "first", "--db",
                    tmp_path / "db", "--out", out, "--by", "duration_group", "-q")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    model = next(iter(_results(out)["models"].values()))
    assert model["metrics"]["accuracy"]["value"] == 0.5
    assert model["breakdown"]["duration_group"]["15"]["accuracy"]["value"] == 1.0
    with sqlite3.connect(tmp_path / "db") as db:
        video = json.loads(next(iter(db.execute("SELECT sample FROM samples")))[0])["video"]
    # load_video(video, duration=4, 16): min(16, 4) frames stepped int(40 / 4) = 10 apart.
    assert video["sampled_with"] == "longvideobench=16"
    assert [round(f["time"] * 10) for f in video["frames"]] == [0, 10, 20, 30]


def test_a_longvideobench_duration_past_any_frame_count_is_that_rows_one_line(
    tmp_path: Path,
) -> None:
    needs_av()
    # 1e308 s is a finite number, but times the frame rate it is not: it was a traceback
    # (OverflowError from the sampler's int) that stopped the whole load.
    copy = _lvb_copy(tmp_path / "longvideobench", [_lvb_row(1, "a", 1e308, 0, "15"),
                                                   _lvb_row(2, "a", 4.0, 2, "15")])  # fmt: skip
    proc = lmmprobe("run", "-d", f"longvideobench,path={copy}", "-m", "first", "--dry-run",
                    columns=1000)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "1 request(s) to send of 1" in proc.stdout
    said = proc.stdout + proc.stderr
    assert "lvb_val.json:1: " in said and "is longer than the video's frames" in said, said


def test_a_missing_file_of_a_video_copy_is_named_without_hemm(tmp_path: Path) -> None:
    needs_av()
    copy = _egoschema_copy(tmp_path / "egoschema", ["u1"], {"u1": 0})
    (copy / "subset_answers.json").unlink()
    proc = lmmprobe("run", "-d", f"egoschema,path={copy}", "-m", "first", "--dry-run")
    assert proc.returncode == 2
    # The copy is EgoSchema's: the message once called its file "HEMM's".
    assert "the local copy lacks its file subset_answers.json" in proc.stderr, proc.stderr
    assert "HEMM" not in proc.stderr


def test_longvideobench_reading_score_and_prompt_equal_the_references(tmp_path: Path) -> None:
    needs_av()
    expected = PARITY["longvideobench"]
    rows = []
    for i, (case, result) in enumerate(zip(expected["rows"], expected["results"], strict=True)):
        # The letter lmms-eval reads; where it guesses at random, lmmprobe reads nothing.
        assert longvideobench_letter(case["reply"]) == case["read"].replace("RANDOM", "")
        row = _lvb_row(i, "a", 4.0, "ABCD".index(result["answer"]), str(result["duration_group"]))
        rows.append({**row, "question_category": result["question_category"]})
        SCRIPT.replies[f"v{i}"] = case["reply"]
    copy = _lvb_copy(tmp_path / "lvb", rows)
    SCRIPT.prompts.clear()
    ev = evaluate(models=[MODEL], data=f"longvideobench,path={copy}", db=str(tmp_path / "db"),
                  out=str(tmp_path / "out"), bootstrap=0, frames="2",
                  formulate={"matcher": official_matcher("longvideobench")})  # fmt: skip
    # longvideobench_aggregate_results' Overall (rounded to 5 places as it rounds), a guess
    # counted wrong as lmmprobe counts it.
    assert round(ev.results.models[MODEL].metrics["accuracy"].value, 5) == expected["overall"]
    assert SCRIPT.prompts["v0"] == (
        "Question: What happens? #v0\nA. red\nB. blue\nC. green\nD. grey\n"
        "Answer with the option's letter from the given choices directly."
    )


# --------------------------------------------------------------------------- TempCompass


def _tempcompass_copy(
    root: Path, rows: list[dict[str, Any]], meta: dict[str, Any], task: str = "multi-choice"
) -> Path:
    (root / "questions").mkdir(parents=True)
    (root / "videos").mkdir()
    questions: dict[str, dict[str, list[dict[str, str]]]] = {}
    for row in rows:
        questions.setdefault(row["video"], {}).setdefault(row["dimension"], []).append(
            {"question": row["question"], "answer": row["answer"]}
        )
    for video in questions:
        write_video(root / "videos" / f"{video}.mp4", frames=40, fps=10)
    (root / "questions" / f"{task}.json").write_text(json.dumps(questions), encoding="utf-8")
    (root / "meta_info.json").write_text(json.dumps(meta), encoding="utf-8")
    return root


def test_tempcompass_runs_by_name_through_the_console_with_its_frames(tmp_path: Path) -> None:
    needs_av()
    rows = [
        {"video": "1", "dimension": "action", "question": "What? #t1\nA. run\nB. walk",
         "answer": "A. run"},
        {"video": "1_reverse", "dimension": "order", "question": "Order? #t2\nA. x\nB. y\nC. z",
         "answer": "C. z"},
    ]  # fmt: skip
    meta = {"1": {"eval_dim": {"action": {"type": "fine-grained action"}}},
            "1_reverse": {"eval_dim": {}}}  # fmt: skip
    copy = _tempcompass_copy(tmp_path / "tempcompass", rows, meta)
    out = tmp_path / "out"
    proc = lmmprobe("run", "-d", f"tempcompass,path={copy}", "-m", "first", "--db",
                    tmp_path / "db", "--out", out, "--by", "dimension", "-q")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    model = next(iter(_results(out)["models"].values()))
    # `first` answers "(A)", which none of TempCompass's rules reads: rated 0 (its
    # --disable_llm mode), and counted unparsed.
    assert model["metrics"]["accuracy"]["value"] == 0.0
    assert model["metrics"]["unparsed_rate"]["value"] == 1.0
    assert set(model["breakdown"]["dimension"]) == {"action", "order"}
    with sqlite3.connect(tmp_path / "db") as db:
        samples = dict(db.execute("SELECT sample_id, sample FROM samples"))
    assert json.loads(samples["tempcompass/1/action/0"])["metadata"]["fine_dimension"] == (
        "fine-grained action"
    )
    video = json.loads(samples["tempcompass/1/action/0"])["video"]
    assert video["sampled_with"] == "linspace=8"  # Video-LLaVA's 8 frames
    assert [round(f["time"] * 10) for f in video["frames"]] == [0, 5, 11, 16, 22, 27, 33, 39]


def test_tempcompass_ratings_and_accuracies_equal_its_eval_script(tmp_path: Path) -> None:
    needs_av()
    expected = PARITY["tempcompass"]
    rows = []
    for i, row in enumerate(expected["rows"]):
        stem, rest = row["question"].split("\n", 1)
        rows.append({**row, "question": f"{stem} #c{i}\n{rest}"})
        SCRIPT.replies[f"c{i}"] = row["reply"]
    copy = _tempcompass_copy(tmp_path / "tc", rows, expected["meta_info"])
    SCRIPT.prompts.clear()
    ev = evaluate(models=[MODEL], data=f"tempcompass,path={copy}", db=str(tmp_path / "db"),
                  out=str(tmp_path / "out"), bootstrap=0, frames="2", by=["dimension"],
                  formulate={"matcher": official_matcher("tempcompass")})  # fmt: skip
    m = ev.results.models[MODEL]
    # print_result's first dictionary: each aspect's mean rating and the average, in percent.
    printed = ast.literal_eval(expected["printed"][1])  # the dict literal it printed
    ours = {d: round(m.breakdown["dimension"][d]["accuracy"].value * 100, 1) for d in printed
            if d != "avg"}  # fmt: skip
    ours["avg"] = round(m.metrics["accuracy"].value * 100, 1)
    assert ours == printed
    assert m.metrics["accuracy"].value == pytest.approx(
        sum(r["rating"] for r in expected["rows"]) / len(expected["rows"])
    )
    first = rows[0]
    assert SCRIPT.prompts["c0"] == first["question"] + "\nPlease directly give the best option:"


def test_tempcompass_judge_prompts_and_ratings_equal_its_eval_script() -> None:
    expected = PARITY["tempcompass"]
    protocol = JUDGE_PROTOCOLS.get("tempcompass-choice")
    sent = {}
    for prompt in expected["judge_prompts"]:
        clip_no = re.search(r"What happens in clip (\d+)\?", prompt)
        assert clip_no is not None
        sent[int(clip_no.group(1))] = prompt
    for i, row in enumerate(expected["rows"]):
        stem, rest = row["question"].split("\n", 1)
        options = [line[3:] for line in rest.split("\n")]
        gold = "ABCD".index(row["answer"][0])
        sample = Sample(id=f"t{i}", question=stem, choices=options, answer=gold)
        score = Score(model="m", sample_id=f"t{i}", repeat=0, key="k", stage="unparsed",
                      gold=gold, gold_text=options[gold])  # fmt: skip
        item = JudgeItem(sample, row["reply"].strip(), score)
        reading = protocol.rule(item)
        if i in sent:  # the script's rules missed it: the judge gets exactly its prompt
            assert reading is None, row["reply"]
            assert protocol.prompt(item).user == sent[i]
            assert protocol.prompt(item).system == "You are an AI assistant for question answering."
        else:  # its rules rated it, as ours do
            assert reading is not None and reading.value == row["rating"], row["reply"]
    for case in expected["judge_ratings"]:
        read = protocol.read(case["reply"], item)
        assert (read.value if read else None) == case["rating"], case["reply"]


def test_tempcompass_with_its_judge_through_the_console(tmp_path: Path) -> None:
    needs_av()
    rows = [
        {"video": "1", "dimension": "action", "question": "What? #t1\nA. run\nB. walk",
         "answer": "A. run"},
        {"video": "2", "dimension": "speed", "question": "How fast? #t2\nA. slow\nB. fast",
         "answer": "B. fast"},
    ]  # fmt: skip
    meta = {"1": {"eval_dim": {"action": {"type": "fine-grained action"}}},
            "2": {"eval_dim": {"speed": {"type": "absolute speed"}}}}  # fmt: skip
    copy = _tempcompass_copy(tmp_path / "tc", rows, meta)
    # The model: "(A)" (no rule reads it; the judge rates it Correct) and "B" (the rules: right).
    table = [("Model Prediction: (A)", "Correct"), ("#t1", "(A)"), ("#t2", "B")]
    with FakeOpenAIServer(reply_table=table) as server:
        url = server.base_url
        out = tmp_path / "out"
        proc = lmmprobe("run", "-d", f"tempcompass,path={copy}", "-m", f"openai:vlm@{url}",
                        "--judge", f"openai:judge@{url}", "--db", tmp_path / "db", "--out", out,
                        "-q", OPENAI_API_KEY="test-key")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    metrics = next(iter(_results(out)["models"].values()))["metrics"]
    assert metrics["accuracy"]["value"] == 1.0  # the judge's rating decides the unread one
    assert metrics["accuracy_rules_only"]["value"] == 0.5


def test_the_video_benchmarks_are_listed_in_the_video_group() -> None:
    names = {"videomme", "videomme-subtitles", "mvbench", "egoschema", "longvideobench",
             "longvideobench-subtitles",
             "tempcompass", "tempcompass-yes-no", "tempcompass-caption-matching",
             "tempcompass-captioning"}  # fmt: skip
    listed = {r["name"]: r for r in json.loads(lmmprobe("data", "list", "--json").stdout)}
    assert {n for n, r in listed.items() if "video" in r["groups"]} == names
    for name in names:  # a facet beside their family
        assert listed[name]["groups"] == ["standard", "video"]
    proc = lmmprobe("data", "list", columns=80)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Video ("))
    end = next(
        (i for i, line in enumerate(lines[start + 1 :], start + 1) if line.startswith("HEMM (")),
        len(lines),
    )
    under = {line.split()[0] for line in lines[start + 1 : end] if line.strip()}
    assert names <= under


YES_NO_PARITY = json.loads(
    (Path(__file__).parent / "video_parity" / "expected_yes_no.json").read_text(encoding="utf-8")
)


def test_tempcompass_yes_no_ratings_and_accuracies_equal_its_eval_script(tmp_path: Path) -> None:
    needs_av()
    expected = YES_NO_PARITY
    rows = []
    for i, row in enumerate(expected["rows"]):
        rows.append({**row, "question": f"{row['question']} #y{i}"})
        SCRIPT.replies[f"y{i}"] = row["reply"]
    copy = _tempcompass_copy(tmp_path / "tc", rows, expected["meta_info"], "yes_no")
    SCRIPT.prompts.clear()
    ev = evaluate(models=[MODEL], data=f"tempcompass-yes-no,path={copy}", bootstrap=0,
                  db=str(tmp_path / "db"), out=str(tmp_path / "out"), frames="2",
                  by=["dimension", "fine_dimension"],
                  formulate={"matcher": official_matcher("tempcompass-yes-no")})  # fmt: skip
    m = ev.results.models[MODEL]
    # print_result's dictionaries: each aspect's (and fine aspect's) mean rating, in percent.
    printed = ast.literal_eval(expected["printed"][1])
    ours = {d: round(m.breakdown["dimension"][d]["accuracy"].value * 100, 1) for d in printed
            if d != "avg"}  # fmt: skip
    ours["avg"] = round(m.metrics["accuracy"].value * 100, 1)
    assert ours == printed
    fine = ast.literal_eval(expected["printed"][2])
    assert {f: round(v["accuracy"].value * 100, 1)
            for f, v in m.breakdown["fine_dimension"].items()} == fine  # fmt: skip
    # Its match success rate is our format-hit rate: the replies its rules read.
    match = float(expected["printed"][3].split("=")[1])
    assert round((1 - m.metrics["unparsed_rate"].value) * 100, 1) == match
    first = rows[0]
    assert SCRIPT.prompts["y0"] == first["question"] + "\nPlease answer yes or no:"


def test_tempcompass_yes_no_reading_equals_its_rules_on_every_reply() -> None:
    from lmmprobe.parse.tempcompass import tempcompass_yes_no

    for row in YES_NO_PARITY["rows"]:
        word = tempcompass_yes_no(row["reply"])
        assert bool(word) == row["match_success"], row["reply"]
        assert (word == row["answer"]) == bool(row["rating"]), row["reply"]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_tempcompass_yes_no_reads_any_text_as_yes_no_or_nothing(text: str) -> None:
    from lmmprobe.parse.tempcompass import tempcompass_yes_no

    assert tempcompass_yes_no(text) in ("yes", "no", "")
    assert tempcompass_yes_no(text * 2000) in ("yes", "no", "")  # long replies: linear work


def test_tempcompass_yes_no_judge_prompts_equal_its_eval_script() -> None:
    protocol = JUDGE_PROTOCOLS.get("tempcompass-yes-no")
    sent = {}
    for prompt in YES_NO_PARITY["judge_prompts"]:
        clip_no = re.search(r"Is the object in clip (\d+) moving\?", prompt)
        assert clip_no is not None
        sent[int(clip_no.group(1))] = prompt
    assert sent  # some replies go to the judge
    for i, row in enumerate(YES_NO_PARITY["rows"]):
        gold = ["yes", "no"].index(row["answer"])
        sample = Sample(id=f"y{i}", question=row["question"], choices=["yes", "no"], answer=gold)
        score = Score(model="m", sample_id=f"y{i}", repeat=0, key="k", stage="unparsed",
                      gold=gold, gold_text=row["answer"])  # fmt: skip
        item = JudgeItem(sample, row["reply"], score)
        reading = protocol.rule(item)
        if i in sent:  # the script's rules missed it: the judge gets exactly its prompt
            assert reading is None, row["reply"]
            assert protocol.prompt(item).user == sent[i]
            assert protocol.prompt(item).system == "You are an AI assistant for question answering."
        else:  # its rules rated it, as ours do
            assert reading is not None and reading.value == row["rating"], row["reply"]


def test_tempcompass_yes_no_with_its_judge_through_the_console(tmp_path: Path) -> None:
    needs_av()
    rows = [
        {"video": "1", "dimension": "action", "question": "Is he running? #t1", "answer": "yes"},
        {"video": "2", "dimension": "speed", "question": "Is it slow? #t2", "answer": "no"},
    ]
    meta = {"1": {"eval_dim": {"action": {"type": "fine-grained action"}}},
            "2": {"eval_dim": {"speed": {"type": "absolute speed"}}}}  # fmt: skip
    copy = _tempcompass_copy(tmp_path / "tc", rows, meta, "yes_no")
    # The model: "I think so" (no rule reads it; the judge rates it Correct) and "No." (right).
    table = [("Model Prediction: I think so", "Correct"), ("#t1", "I think so"), ("#t2", "No.")]
    with FakeOpenAIServer(reply_table=table) as server:
        url = server.base_url
        out = tmp_path / "out"
        proc = lmmprobe("run", "-d", f"tempcompass-yes-no,path={copy}", "-m",
                        f"openai:vlm@{url}", "--judge", f"openai:judge@{url}", "--db",
                        tmp_path / "db", "--out", out, "-q",
                        OPENAI_API_KEY="test-key")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    metrics = next(iter(_results(out)["models"].values()))["metrics"]
    assert metrics["accuracy"]["value"] == 1.0  # the judge's rating decides the unread one
    assert metrics["accuracy_rules_only"]["value"] == 0.5


CAPTION_PARITY = json.loads(
    (Path(__file__).parent / "video_parity" / "expected_caption_matching.json").read_text(
        encoding="utf-8"
    )
)


def test_tempcompass_caption_matching_ratings_and_accuracies_equal_its_eval_script(
    tmp_path: Path,
) -> None:
    needs_av()
    expected = CAPTION_PARITY
    rows = []
    for i, row in enumerate(expected["rows"]):
        stem, rest = row["question"].split("\n", 1)
        rows.append({**row, "question": f"{stem} #k{i}\n{rest}"})  # the scripted model's tag
        SCRIPT.replies[f"k{i}"] = row["reply"]
    copy = _tempcompass_copy(tmp_path / "tc", rows, expected["meta_info"], "caption_matching")
    SCRIPT.prompts.clear()
    ev = evaluate(models=[MODEL], data=f"tempcompass-caption-matching,path={copy}", bootstrap=0,
                  db=str(tmp_path / "db"), out=str(tmp_path / "out"), frames="2",
                  by=["dimension", "fine_dimension"],
                  formulate={"matcher": official_matcher("tempcompass-caption-matching")})  # fmt: skip
    m = ev.results.models[MODEL]
    # print_result's dictionaries: each aspect's (and fine aspect's) mean rating, in percent.
    printed = ast.literal_eval(expected["printed"][1])
    ours = {d: round(m.breakdown["dimension"][d]["accuracy"].value * 100, 1) for d in printed
            if d != "avg"}  # fmt: skip
    ours["avg"] = round(m.metrics["accuracy"].value * 100, 1)
    assert ours == printed
    fine = ast.literal_eval(expected["printed"][2])
    assert {f: round(v["accuracy"].value * 100, 1)
            for f, v in m.breakdown["fine_dimension"].items()} == fine  # fmt: skip
    match = float(expected["printed"][3].split("=")[1])
    assert round((1 - m.metrics["unparsed_rate"].value) * 100, 1) == match
    assert SCRIPT.prompts["k0"] == rows[0]["question"] + "\nPlease directly give the best option:"


def test_tempcompass_caption_matching_reading_equals_its_rules_on_every_reply() -> None:
    from lmmprobe.parse.tempcompass import tempcompass_caption_rating, tempcompass_caption_reading

    for row in CAPTION_PARITY["rows"]:
        captions = row["question"].split("\n")[1:]
        read = tempcompass_caption_reading(row["reply"].replace("</s>", "").strip(), captions)
        assert (read is not None) == row["match_success"], row["reply"]
        rating = tempcompass_caption_rating(read, row["answer"]) if read is not None else 0
        assert rating == row["rating"], row["reply"]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_tempcompass_caption_matching_reads_any_text_as_a_caption_or_nothing(text: str) -> None:
    from lmmprobe.parse.tempcompass import tempcompass_caption_reading

    captions = ["Option 1: The man runs.", "Option 2: The man (walks) left"]
    for reply in (text, text * 2000, f"(1) {text}"):  # long replies: linear work
        read = tempcompass_caption_reading(reply, captions)
        assert read is None or read in reply or read in "".join(captions)


def test_tempcompass_caption_matching_judge_prompts_equal_its_eval_script() -> None:
    protocol = JUDGE_PROTOCOLS.get("tempcompass-caption-matching")
    sent = {}
    for prompt in CAPTION_PARITY["judge_prompts"]:
        clip_no = re.search(r"Which caption matches clip (\d+)\?", prompt)
        assert clip_no is not None
        sent[int(clip_no.group(1))] = prompt
    assert sent  # some replies go to the judge
    for i, row in enumerate(CAPTION_PARITY["rows"]):
        captions = row["question"].split("\n")[1:]
        gold = captions.index(row["answer"])
        sample = Sample(id=f"c{i}", question=row["question"], choices=captions, answer=gold)
        score = Score(model="m", sample_id=f"c{i}", repeat=0, key="k", stage="unparsed",
                      gold=gold, gold_text=row["answer"])  # fmt: skip
        item = JudgeItem(sample, row["reply"], score)
        reading = protocol.rule(item)
        if i in sent:  # the script's rules missed it: the judge gets exactly its prompt
            assert reading is None, row["reply"]
            assert protocol.prompt(item).user == sent[i]
            assert protocol.prompt(item).system == "You are an AI assistant for question answering."
        else:  # its rules rated it, as ours do
            assert reading is not None and reading.value == row["rating"], row["reply"]


def test_tempcompass_caption_matching_with_its_judge_through_the_console(tmp_path: Path) -> None:
    needs_av()
    rows = [
        {"video": "1", "dimension": "action", "question": "Which? #t1\nOption 1: run\nOption 2: "
         "walk", "answer": "Option 1: run"},
        {"video": "2", "dimension": "speed", "question": "Which? #t2\nCaption A: slow\nCaption "
         "B: fast", "answer": "Caption B: fast"},
    ]  # fmt: skip
    meta = {"1": {"eval_dim": {"action": {"type": "fine-grained action"}}},
            "2": {"eval_dim": {"speed": {"type": "absolute speed"}}}}  # fmt: skip
    copy = _tempcompass_copy(tmp_path / "tc", rows, meta, "caption_matching")
    # The model: "It runs" (no rule reads it; the judge rates it Correct) and "B." (right).
    table = [("Model Prediction: It runs", "Correct"), ("#t1", "It runs"), ("#t2", "B.")]
    with FakeOpenAIServer(reply_table=table) as server:
        url = server.base_url
        out = tmp_path / "out"
        proc = lmmprobe("run", "-d", f"tempcompass-caption-matching,path={copy}", "-m",
                        f"openai:vlm@{url}", "--judge", f"openai:judge@{url}", "--db",
                        tmp_path / "db", "--out", out, "-q",
                        OPENAI_API_KEY="test-key")  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    metrics = next(iter(_results(out)["models"].values()))["metrics"]
    assert metrics["accuracy"]["value"] == 1.0  # the judge's rating decides the unread one
    assert metrics["accuracy_rules_only"]["value"] == 0.5


# --------------------------------------------------------------------------- shapes


def _with_a_string_row(name: str, root: Path) -> tuple[Path, str]:
    """A local copy of `name` whose first entry is the string "oops", and the file:row named."""
    if name == "mvbench":
        copy = _mvbench_copy(root, {"object_existence.json": [_mv("e1.mp4", "Which? #e", "blue")]})
        file = copy / "json" / "object_existence.json"
    elif name == "egoschema":
        copy = _egoschema_copy(root, ["u1"], {"u1": 0})
        file = copy / "questions.json"
    elif name == "longvideobench":
        copy = _lvb_copy(root, [_lvb_row(1, "a", 4.0, 0, "15")])
        file = copy / "lvb_val.json"
    else:  # tempcompass: video -> dimension -> [question objects]
        copy = _tempcompass_copy(
            root, [{"video": "1", "dimension": "action", "question": "What? #t1\nA. run\nB. walk",
                    "answer": "A. run"}], {})  # fmt: skip
        file = copy / "questions" / "multi-choice.json"
        held = json.loads(file.read_text(encoding="utf-8"))
        held["1"]["action"].insert(0, "oops")
        file.write_text(json.dumps(held), encoding="utf-8")
        return copy, f"{file}:1/action/0: "
    held = json.loads(file.read_text(encoding="utf-8"))
    file.write_text(json.dumps(["oops", *held]), encoding="utf-8")
    return copy, f"{file}:1: "


# Video-MME is read from parquet, whose rows are always objects: no entry can be a string.
@pytest.mark.parametrize("name", ["mvbench", "egoschema", "longvideobench", "tempcompass"])
def test_a_video_copy_entry_that_is_not_an_object_is_named_and_the_rest_load(
    name: str, tmp_path: Path
) -> None:
    # Re-test 14: a string in MVBench's list of questions gave the generic "AttributeError:
    # 'str' object has no attribute 'get'" (EgoSchema a TypeError): the file, the row and what
    # was expected are named, and the other questions still load.
    needs_av()
    copy, where = _with_a_string_row(name, tmp_path / name)
    proc = lmmprobe("run", "-d", f"{name},path={copy}", "-m", "first", "--dry-run", columns=1000)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said
    assert "1 request(s) to send of 1" in proc.stdout, said
    assert "Error:" not in said and "Traceback" not in said, said
    line = next((x for x in said.splitlines() if where in x), None)
    assert line is not None, said
    assert "expected an object" in line, line


def test_a_tempcompass_question_missing_its_answer_names_only_the_users_fields(
    tmp_path: Path,
) -> None:
    # Re-test 14: the message listed the reader's own columns ("the row has: _video, _dim, _k,
    # _item, _meta"), none of which is in the user's file.
    needs_av()
    copy = _tempcompass_copy(
        tmp_path / "tc", [{"video": "1", "dimension": "action", "question": "What? #t1\nA. run\nB. walk",
                           "answer": "A. run"}], {})  # fmt: skip
    file = copy / "questions" / "multi-choice.json"
    held = json.loads(file.read_text(encoding="utf-8"))
    held["1"]["order"] = [{"question": "Order? #t2\nA. x\nB. y", "hint": "h"}]
    file.write_text(json.dumps(held), encoding="utf-8")
    proc = lmmprobe("run", "-d", f"tempcompass,path={copy}", "-m", "first", "--dry-run",
                    columns=1000)  # fmt: skip
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said
    line = next((x for x in said.splitlines() if f"{file}:1/order/0: " in x), None)
    assert line is not None, said
    assert "answer: missing (the question has: question, hint)" in line, line
    assert "_video" not in said and "_item" not in said, said


def test_a_tempcompass_caption_question_it_cannot_rate_is_named_and_the_rest_load(
    tmp_path: Path,
) -> None:
    # eval_rule raises on a caption line without ": " and rates against any answer: a line that
    # is not 'Option|Sentence|Caption X: text', or an answer no caption line gives, is refused.
    needs_av()
    good = {"video": "1", "dimension": "action", "answer": "Option 1: run",
            "question": "Which? #t1\nOption 1: run\nOption 2: walk"}  # fmt: skip
    bad_line = {**good, "question": "Which? #t2\nOption 1 run\nOption 2: walk"}
    bad_answer = {**good, "question": "Which? #t3\nOption 1: run\nOption 2: walk",
                  "answer": "Option 3: fly"}  # fmt: skip
    copy = _tempcompass_copy(tmp_path / "tc", [good, bad_line, bad_answer], {}, "caption_matching")
    file = copy / "questions" / "caption_matching.json"
    proc = lmmprobe("run", "-d", f"tempcompass-caption-matching,path={copy}", "-m", "first",
                    "--dry-run", columns=1000)  # fmt: skip
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said
    assert "1 request(s) to send of 1" in proc.stdout, said
    lines = said.splitlines()
    line = next((x for x in lines if f"{file}:1/action/1: " in x), None)
    assert line is not None and "caption line 1 is not" in line, said
    line = next((x for x in lines if f"{file}:1/action/2: " in x), None)
    assert line is not None and "'Option 3: fly' is none of the caption lines" in line, said


def test_a_video_id_holding_a_line_break_is_named_on_one_line(tmp_path: Path) -> None:
    # Re-test 15 #11: EgoSchema's q_uid "a\nb" (the video's file name) split the row's
    # "video file not found" over two lines.
    copy = tmp_path / "egoschema"
    (copy / "videos").mkdir(parents=True)
    questions = [{"q_uid": uid, "question": "What is c doing?",
                  **{f"option {i}": f"c does thing {i}" for i in range(5)}}
                 for uid in ("a\nb", "c\rd")]  # fmt: skip
    (copy / "questions.json").write_text(json.dumps(questions), encoding="utf-8")
    answers = {"a\nb": 0, "c\rd": 1}
    (copy / "subset_answers.json").write_text(json.dumps(answers), encoding="utf-8")
    proc = lmmprobe("run", "-d", f"egoschema,path={copy}", "-m", "first", "--db",
                    tmp_path / "db", "-q")  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 3, lines
    assert lines[1].endswith(f"q_uid: video file not found: videos/a\\nb.mp4 (looked in {copy})")
    assert lines[2].endswith(f"q_uid: video file not found: videos/c\\rd.mp4 (looked in {copy})")
