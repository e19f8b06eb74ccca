"""LongVideoBench with its subtitles between the frames: ``longvideobench-subtitles``.

The placement is checked against ``video_parity/expected_longvideobench_subtitles.json``, what
longvideobench/LongVideoBench @ fc3c553 ``insert_subtitles_into_frames`` returned for 150
generated cases (``video_parity/make_expected_longvideobench_subtitles.py``); the request's
order of frames and texts at the formulator, at both backends and at a server through the
console script.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.console import lmmprobe
from tests.videos import needs_av, write_video

from lmmprobe.data.base import load_source
from lmmprobe.data.benchmarks.standard.longvideobench import _seconds, subtitle_texts
from lmmprobe.data.rows import RowError
from lmmprobe.formulate.frame_texts import place
from lmmprobe.formulate.prompt import formulate
from lmmprobe.models import load_model
from lmmprobe.schema.frame_texts import FrameText, frame_texts
from lmmprobe.testing.openai_server import FakeOpenAIServer

EXPECTED = json.loads(
    (Path(__file__).parent / "video_parity" / "expected_longvideobench_subtitles.json").read_text(
        encoding="utf-8"
    )
)
QUESTION = "Question: What happens? #v1\nA. red\nB. blue\nC. green\nD. grey\n"
INSTRUCTION = "Answer with the option's letter from the given choices directly."


def _interleaved(texts: list[dict[str, Any]], times: list[float]) -> list[str]:
    """The reference's list from our placement: frames as ``<frame K>``, texts in place."""
    placed = place([FrameText(t["text"], t["start"], t["end"]) for t in texts], times)
    out: list[str] = []
    shown = 0
    for before, text in placed:
        out += [f"<frame {k}>" for k in range(shown, before)]
        shown = before
        out.append(text)
    return out + [f"<frame {k}>" for k in range(shown, len(times))]


def test_the_placement_equals_insert_subtitles_into_frames_on_every_case() -> None:
    kept = 0
    for case in EXPECTED["cases"]:
        texts = subtitle_texts(case["subtitles"], case["offset"], case["duration"])
        ours = _interleaved(texts, case["times"])
        assert ours == case["interleaved"], case
        kept += sum(1 for x in ours if not x.startswith("<frame"))
    assert 0 < kept < sum(len(c["subtitles"]) for c in EXPECTED["cases"])  # some left out


def test_subtitle_times_are_read_as_timestamp_to_seconds() -> None:
    for stamp, seconds in EXPECTED["seconds"].items():
        assert _seconds(stamp, "line 1") == seconds


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        ({"a": 1}, "expected a list"),
        (["x"], "line 1: expected an object"),
        ([{"timestamp": [1.0], "text": "t"}], "line 1: timestamp is not [start, end]"),
        ([{"timestamp": [True, 2.0], "text": "t"}], "line 1: timestamp is not [start, end]"),
        ([{"timestamp": [1.0, 2.0]}], "line 1: its text is missing"),
        ([{"start": "1:2", "end": "0:0:1", "line": "t"}], "line 1: '1:2' is not"),
        ([{"start": "0:0:1" + "0" * 100, "end": "0:0:2", "line": "t"}], "expected a time"),
        ([{"start": "0:0:nan", "end": "0:0:2", "line": "t"}], "line 1: its times are not finite"),
        ([{"timestamp": [1.0, float("inf")], "text": "t"}], "its times are not finite"),
        ([{"timestamp": [10**400, 2.0], "text": "t"}], "line 1: timestamp is not [start, end]"),
        ([{"start": "0:0:1e400", "end": "0:0:2", "line": "t"}], "its times are not finite"),
    ],
)
def test_a_bad_subtitle_line_is_named(lines: Any, why: str) -> None:
    with pytest.raises(RowError) as err:
        subtitle_texts(lines, 0.0, 10.0)
    assert err.value.field == "subtitle_path" and why in err.value.reason


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=9), inner),
    max_leaves=12,
)
LINE = st.fixed_dictionaries(
    {}, optional={"timestamp": JSON, "text": JSON, "start": JSON, "end": JSON, "line": JSON}
)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE | JSON, max_size=6) | JSON, st.floats(-1e6, 1e6), st.floats(0, 1e6))
def test_any_subtitle_file_reads_as_timed_texts_or_one_named_line(
    lines: Any, offset: float, duration: float
) -> None:
    try:
        texts = subtitle_texts(lines, offset, duration)
    except RowError as err:
        assert err.field == "subtitle_path" and err.reason
        return
    frame_texts({"frame_texts": texts})  # what the formulator reads back: valid


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.floats(-50, 500), st.floats(0, 60), st.text(max_size=5)), max_size=40),
    st.lists(st.floats(0, 400), max_size=40),
)
def test_every_text_is_placed_once_at_most_in_order_within_the_frames(
    cues: list[tuple[float, float, str]], raw_times: list[float]
) -> None:
    times = sorted(raw_times)
    texts = [FrameText(t, s, s + d) for s, d, t in cues]
    placed = place(texts, times)
    positions = [p for p, _ in placed]
    assert positions == sorted(positions) and all(0 <= p <= len(times) for p in positions)
    assert len(placed) <= len(texts)


def _copy(root: Path, subtitles: Any, name: str = "a_en.json") -> Path:
    (root / "videos").mkdir(parents=True)
    (root / "subtitles").mkdir()
    write_video(root / "videos" / "a.mp4", frames=40, fps=10)
    row = {"id": "q1", "video_id": "a", "video_path": "a.mp4", "duration": 4.0,
           "question": "What happens? #v1", "candidates": ["red", "blue", "green", "grey"],
           "correct_choice": 1, "duration_group": "15", "question_category": "E2O",
           "subtitle_path": name, "starting_timestamp_for_subtitles": 0.5}  # fmt: skip
    (root / "subtitles" / "a_en.json").write_text(json.dumps(subtitles), encoding="utf-8")
    (root / "lvb_val.json").write_text(json.dumps([row]), encoding="utf-8")
    return root


# Frames at 0, 1, 2, 3 s (load_video: min(16, int(4)) frames, 10 apart at 10 fps); the
# subtitles' times less 0.5 s. "a" (0.2-0.8 s, widened to 0-1 s) holds no frame strictly
# inside: left out; "b" (1.2-2.6 s) after frames 0 and 1; "c" (2.9-5.0 s, by HH:MM:SS) after
# frames 2 and 3; "d" (an integer end: the duration, 3.5 s, middle 3.25 s) after them too.
SUBTITLES = [
    {"timestamp": [0.7, 1.3], "text": "a"},
    {"timestamp": [1.7, 3.1], "text": "b"},
    {"start": "00:00:03.400", "end": "00:00:05.500", "line": "c"},
    {"timestamp": [3.0, 9], "text": "d"},
]
LAYOUT = ["image", "image", "b", "image", "image", f"c\nd\n{QUESTION}{INSTRUCTION}"]


def test_the_request_holds_the_frames_and_subtitles_in_order(tmp_path: Path) -> None:
    needs_av()
    loaded = load_source(f"longvideobench-subtitles,path={_copy(tmp_path / 'lvb', SUBTITLES)}")
    (sample,) = loaded.samples
    assert [round(f.time, 3) for f in sample.video.frames] == [0.0, 1.0, 2.0, 3.0]
    assert [t.text for t in frame_texts(sample.metadata)] == ["a", "b", "c", "d"]
    assert "frame_texts" not in sample.row_metadata  # kept with the sample, not every row
    request = formulate(sample)
    (user,) = request.messages
    layout = ["image" if p.type == "image" else p.text for p in user.content]
    assert layout == LAYOUT
    assert request.frames_interleaved
    assert [p.image for p in user.content if p.type == "image"] == [0, 1, 2, 3]
    # Without subtitles (longvideobench) the frames come first and the text is the question.
    plain = formulate(load_source(f"longvideobench,path={tmp_path / 'lvb'}").samples[0])
    assert ["image" if p.type == "image" else p.text for p in plain.messages[0].content] == [
        "image", "image", "image", "image", f"{QUESTION}{INSTRUCTION}",
    ]  # fmt: skip
    assert not plain.frames_interleaved


def test_a_video_url_server_gets_interleaved_frames_as_images(tmp_path: Path) -> None:
    # A video_url is sampled by the server itself and holds no text between frames: frames
    # placed among subtitles go as images in their places (a plain video still as video_url).
    needs_av()
    loaded = load_source(f"longvideobench-subtitles,path={_copy(tmp_path / 'lvb', SUBTITLES)}")
    request = formulate(loaded.samples[0])
    model = load_model("openai:vlm@http://127.0.0.1:9/v1?video=url")
    (message,) = model._messages(request)  # type: ignore[attr-defined]
    kinds = [p["type"] if p["type"] != "text" else p["text"] for p in message["content"]]
    assert kinds == [k if k != "image" else "image_url" for k in LAYOUT]


def test_longvideobench_subtitles_through_the_console_reach_the_server_in_order(
    tmp_path: Path,
) -> None:
    needs_av()
    copy = _copy(tmp_path / "lvb", SUBTITLES)
    with FakeOpenAIServer(reply_table=[("#v1", "B")]) as server:
        out = tmp_path / "out"
        proc = lmmprobe("run", "-d", f"longvideobench-subtitles,path={copy}", "-m",
                        f"openai:vlm@{server.base_url}", "--db", tmp_path / "db", "--out", out,
                        "-q", OPENAI_API_KEY="test-key")  # fmt: skip
        layouts = server.received_layouts
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert layouts == [LAYOUT]
    model = next(iter(json.loads((out / "results.json").read_text())["models"].values()))
    assert model["metrics"]["accuracy"]["value"] == 1.0


def test_a_bad_subtitle_file_refuses_its_question_in_one_line(tmp_path: Path) -> None:
    needs_av()
    copy = _copy(tmp_path / "lvb", [{"start": "soon", "end": "0:0:1", "line": "x"}])
    proc = lmmprobe("run", "-d", f"longvideobench-subtitles,path={copy}", "-m", "first",
                    "--dry-run", columns=1000)  # fmt: skip
    said = proc.stdout + proc.stderr
    assert "Traceback" not in said, said
    line = next((x for x in said.splitlines() if "lvb_val.json:1" in x), None)
    assert line is not None and "subtitle_path: line 1: 'soon' is not 'HH:MM:SS.fff'" in line
    missing = _copy(tmp_path / "lvb2", [], name="gone.json")
    proc = lmmprobe("run", "-d", f"longvideobench-subtitles,path={missing}", "-m", "first",
                    "--dry-run", columns=1000)  # fmt: skip
    said = proc.stdout + proc.stderr
    line = next((x for x in said.splitlines() if "lvb_val.json:1" in x), None)
    assert line is not None and "subtitle_path" in line and "gone.json" in line, said


def _hf_request(tmp_path: Path) -> Any:
    loaded = load_source(f"longvideobench-subtitles,path={_copy(tmp_path / 'lvb', SUBTITLES)}")
    return formulate(loaded.samples[0])


def test_an_hf_chat_template_gets_the_frames_and_subtitles_in_order(
    tmp_path: Path, tiny_cache: Path
) -> None:
    needs_av()
    pytest.importorskip("transformers")
    from lmmprobe.models.tiny import tiny_model_path

    request = _hf_request(tmp_path)
    model = load_model(f"hf:{tiny_model_path('llava', cache_dir=tiny_cache)},dtype=float32")
    (turn,) = model.conversation(request)  # type: ignore[attr-defined]
    kinds = [p["type"] if p["type"] == "image" else p["text"] for p in turn["content"]]
    assert kinds == LAYOUT
    text = model.render(request)  # type: ignore[attr-defined]
    token = "<image>"
    third_frame = [i for i in range(len(text)) if text.startswith(token, i)][2]
    assert text.count(token) == 4 and text.index("b") < third_frame  # "b" after frame 2
    (response,) = model.generate([request])  # type: ignore[attr-defined]
    assert response.error is None and response.text is not None


def test_a_video_model_gets_interleaved_frames_as_images_in_place(
    tmp_path: Path, tiny_cache: Path
) -> None:
    # A processor's video input holds no text between frames: Qwen2-VL gets them as images.
    needs_av()
    pytest.importorskip("transformers")
    pytest.importorskip(
        "torchvision",
        reason="transformers' video processors (Qwen2-VL, LLaVA-OneVision) need torchvision",
    )
    from lmmprobe.models.tiny import tiny_model_path

    request = _hf_request(tmp_path)
    path = tiny_model_path("qwen2_vl", cache_dir=tiny_cache)
    model = load_model(f"hf:{path},dtype=float32")
    (turn,) = model.conversation(request)  # type: ignore[attr-defined]
    kinds = [p["type"] if p["type"] in ("image", "video") else p["text"] for p in turn["content"]]
    assert kinds == LAYOUT
    (response,) = model.generate([request])  # type: ignore[attr-defined]
    assert response.error is None and response.text is not None


@pytest.mark.parametrize(
    "value",
    ["x", [1], [{"text": 1, "start": 0, "end": 1}], [{"text": "t", "start": 10**400, "end": 1}],
     [{"text": "t", "start": float("nan"), "end": 1}], [{"text": "t", "start": True, "end": 1}]],
)  # fmt: skip
def test_frame_texts_of_another_shape_are_refused_in_words(value: Any) -> None:
    # A sample from a user's own file may carry frame_texts: a bad one is a ValueError naming
    # the key, never an OverflowError or a wrong placement.
    with pytest.raises(ValueError, match="frame_texts"):
        frame_texts({"frame_texts": value})


def test_a_users_sample_with_bad_frame_texts_is_its_rows_one_line(tmp_path: Path) -> None:
    # Any video sample may carry frame_texts (the formulator places them): a bad value is found
    # at load, named by file and line, and the other samples run.
    needs_av()
    write_video(tmp_path / "v.mp4", frames=20, fps=10)
    good = {"text": "hello #g", "start": 0.1, "end": 0.9}
    rows = [
        {"id": "a", "question": "Q? #a", "choices": ["x", "y"], "answer": 0, "video": "v.mp4",
         "metadata": {"frame_texts": [{"text": "t", "start": "soon", "end": 1}]}},
        {"id": "b", "question": "Q? #b", "choices": ["x", "y"], "answer": 0, "video": "v.mp4",
         "metadata": {"frame_texts": [good]}},
    ]  # fmt: skip
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with FakeOpenAIServer() as server:
        proc = lmmprobe("run", "-d", data, "-m", f"openai:vlm@{server.base_url}", "--db",
                        tmp_path / "db", "--out", tmp_path / "out", "--frames", "4",
                        OPENAI_API_KEY="test-key", columns=1000)  # fmt: skip
        layouts = server.received_layouts
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, said
    line = next((x for x in said.splitlines() if f"{data}:1" in x), None)
    assert line is not None and "frame_texts[0]: start and end must be finite numbers" in line
    # Frames at 0.25, 0.75, 1.25, 1.75 s: "hello" (0.1-0.9 s) after the first, held by both.
    (layout,) = layouts
    assert layout[:5] == ["image", "hello #g", "image", "image", "image"], layout
    assert layout[5].startswith("Q? #b\n"), layout
