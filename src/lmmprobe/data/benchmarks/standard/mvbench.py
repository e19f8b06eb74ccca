"""MVBench: the ``mvbench`` definition (20 temporal tasks, 200 questions each).

Origin: Li et al. 2024, MVBench: A Comprehensive Multi-modal Video Understanding Benchmark
(CVPR 2024, arXiv:2311.17005); data OpenGVLab/MVBench (``json/TASK.json`` and the videos under
``video/``). Everything else is MVBench's own evaluation (OpenGVLab/Ask-Anything @
`ASK_ANYTHING_COMMIT`, ``video_chat2/mvbench.ipynb``): its ``data_list`` (each task's file,
video folder and whether the question's ``start``/``end`` bound the clip), its 16 frames by
``get_index`` (``mvbench=16``), its prompt, and ``check_ans`` (``mvbench_accuracy``).

Episodic Reasoning's "videos" are folders of frames at 3 fps (``read_frame``): its frames are
picked by the same ``get_index`` over the folder's files (from ``00001.jpg``) and shown as
images; ``--frames`` does not resample them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import Benchmark, PromptTemplate, RowContext, RowError, benchmark
from lmmprobe.data.benchmarks._lmms import required_text
from lmmprobe.data.benchmarks.hemm_common import read_json
from lmmprobe.data.benchmarks.standard._choice import escape_braces
from lmmprobe.data.benchmarks.standard._video import clip
from lmmprobe.data.rows import check_image, outside_folder
from lmmprobe.parse.mvbench import ASK_ANYTHING_COMMIT
from lmmprobe.schema import Sample
from lmmprobe.schema.video import FramePolicy, mvbench_indices

__all__ = ["MVBENCH", "POLICY", "TASKS"]

POLICY = FramePolicy.parse("mvbench=16")
"""MVBench's frames: ``get_index`` with ``num_segments=16`` (the notebook's ``num_frame``)."""

FRAME_FOLDER_FPS = 3
"""The rate of a task whose video is a folder of frames (``read_frame``'s ``fps=3``)."""


@dataclass(frozen=True)
class Task:
    """One row of MVBench's ``data_list``."""

    title: str
    file: str  # under json/
    folder: str  # the videos' folder under video/
    frames: bool  # a folder of frames per question (read_frame), not a video file
    bound: bool  # the question's start and end bound the clip


TASKS: tuple[Task, ...] = (
    Task("Action Sequence", "action_sequence.json", "star/Charades_v1_480", False, True),
    Task("Action Prediction", "action_prediction.json", "star/Charades_v1_480", False, True),
    Task("Action Antonym", "action_antonym.json", "ssv2_video", False, False),
    Task("Fine-grained Action", "fine_grained_action.json", "Moments_in_Time_Raw/videos", False, False),
    Task("Unexpected Action", "unexpected_action.json", "FunQA_test/test", False, False),
    Task("Object Existence", "object_existence.json", "clevrer/video_validation", False, False),
    Task("Object Interaction", "object_interaction.json", "star/Charades_v1_480", False, True),
    Task("Object Shuffle", "object_shuffle.json", "perception/videos", False, False),
    Task("Moving Direction", "moving_direction.json", "clevrer/video_validation", False, False),
    Task("Action Localization", "action_localization.json", "sta/sta_video", False, True),
    Task("Scene Transition", "scene_transition.json", "scene_qa/video", False, False),
    Task("Action Count", "action_count.json", "perception/videos", False, False),
    Task("Moving Count", "moving_count.json", "clevrer/video_validation", False, False),
    Task("Moving Attribute", "moving_attribute.json", "clevrer/video_validation", False, False),
    Task("State Change", "state_change.json", "perception/videos", False, False),
    Task("Fine-grained Pose", "fine_grained_pose.json", "nturgbd", False, False),
    Task("Character Order", "character_order.json", "perception/videos", False, False),
    Task("Egocentric Navigation", "egocentric_navigation.json", "vlnqa", False, False),
    Task("Episodic Reasoning", "episodic_reasoning.json", "tvqa/frames_fps3_hq", True, True),
    Task("Counterfactual Inference", "counterfactual_inference.json", "clevrer/video_validation", False, False),
)  # fmt: skip
"""MVBench's ``data_list``, in its order (the notebook's paths under ``your_data_path``)."""

_BY_FILE = {t.file: t for t in TASKS}

SYSTEM = (
    "Carefully watch the video and pay attention to the cause and sequence of events, the "
    "detail and movement of objects, and the action and pose of persons. Based on your "
    "observations, select the best option that accurately addresses the question.\n"
)
"""``infer_mvbench``'s ``system``, which ``system_llm=True`` puts before the question."""

MAX_FRAME_FILES = 100_000
"""The most files a folder of frames may hold (an hour at 3 fps is 10,800)."""


def _rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for task in TASKS:
        rows = read_json(root, f"json/{task.file}")
        if not isinstance(rows, list):
            raise DataError(f"{root}/json/{task.file}: expected a list of questions")
        for n, row in enumerate(rows, 1):
            if isinstance(row, dict):  # another value is refused by the loader, naming it
                row = {**row, "_task": task.file, "_n": n}
            yield f"{root}/json/{task.file}:{n}", row


def _bound(row: Mapping[str, Any], task: Task) -> tuple[float | None, float | None]:
    if not task.bound:
        return None, None
    values = []
    for field in ("start", "end"):
        value = row.get(field)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RowError(
                field, f"expected seconds (the task's clips are bounded), got {value!r:.40}"
            )
        values.append(float(value))
    return values[0], values[1]


def _frames_of_folder(
    ctx: RowContext, relative: str, bound: tuple[float | None, float | None]
) -> list[Any]:
    """``read_frame``: the frames ``get_index(bound, 3, len(files), first_idx=1)`` names."""
    assert ctx.root is not None
    escapes = outside_folder(relative, f"the copy's folder {ctx.root}")
    if escapes:
        raise RowError("video", escapes)
    folder = ctx.root / relative
    if not folder.is_dir():
        raise RowError("video", f"folder of frames not found: {relative} (looked in {ctx.root})")
    with os.scandir(folder) as entries:
        count = 0
        for _ in entries:
            count += 1
            if count > MAX_FRAME_FILES:
                raise RowError("video", f"{relative}: more than {MAX_FRAME_FILES:,} files")
    try:
        picked = mvbench_indices(POLICY.frames or 16, count, FRAME_FOLDER_FPS, *bound, first_idx=1)
    except ValueError as exc:
        raise RowError("video", f"{relative}: {exc}") from None
    return [check_image(folder, f"{i:05d}.jpg", "video") for i in picked]


def _mvbench(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    task = _BY_FILE[str(row.get("_task"))]
    question = required_text(row, "question")
    candidates = row.get("candidates")
    if not isinstance(candidates, list) or not candidates or len(candidates) > 26:
        raise RowError("candidates", f"expected a list of option texts, got {candidates!r:.200}")
    if not all(isinstance(c, str) for c in candidates):
        raise RowError("candidates", "every option must be text")
    answer = required_text(row, "answer")
    # qa_template: the last candidate equal to the answer is the gold (a loop that overwrites).
    gold = max((i for i, c in enumerate(candidates) if c == answer), default=-1)
    if gold < 0:
        raise RowError("answer", f"{answer!r:.80} is none of the candidates")
    relative = f"video/{task.folder}/{required_text(row, 'video')}"
    bound = _bound(row, task)
    if ctx.root is None:
        raise RowError("video", "MVBench is read from a local copy's folder")
    images, video = [], None
    if task.frames:
        images = _frames_of_folder(ctx, relative, bound)
    else:
        video = clip(ctx, relative, POLICY, "video", start=bound[0], end=bound[1])
    return Sample(
        id=f"{task.file.removesuffix('.json')}/{row.get('_n')}",
        images=images,
        question=question,
        choices=list(candidates),
        answer=gold,
        formulation="single_choice",
        video=video,
        metadata={
            "task_type": task.title,  # --by task_type: each task's accuracy (acc_dict)
            "answer_option": f"({chr(ord('A') + gold)}) {answer}",  # qa_template's answer
        },
    )


MVBENCH = benchmark(
    Benchmark(
        name="mvbench",
        groups=("video",),
        title="MVBench",
        citation="Li et al. 2024, MVBench: A Comprehensive Multi-modal Video Understanding "
        "Benchmark, CVPR 2024, arXiv:2311.17005",
        license="mit (OpenGVLab/MVBench card; each source's videos keep their own terms)",
        formulation="single_choice",
        metric="mvbench_accuracy",
        prompt=PromptTemplate(
            template=escape_braces(SYSTEM)
            + "Question: {question}\nOptions:\n{options}\nOnly give the best option.",
            source=f"OpenGVLab/Ask-Anything @ {ASK_ANYTHING_COMMIT[:7]} "
            "video_chat2/mvbench.ipynb (infer_mvbench with system_llm=True: the system text, "
            "qa_template's 'Question: ...\\nOptions:\\n(A) ...', question_prompt '\\nOnly give "
            "the best option.'; answer_prompt 'Best option:(')",
            option_format="({mark}) {text}",
        ),
        to_sample=_mvbench,
        hub_id="OpenGVLab/MVBench",
        include=("json/*", "video/*"),
        after_download='for z in video/*.zip; do unzip -qo "$z" -d video; done',
        split="test",
        splits=("test",),
        size=4000,
        layout="files",
        read_files=_rows,
        matcher="mvbench",
        notes=(
            "mvbench_accuracy is MVBench's check_ans (mvbench.ipynb): '(' and the reply's first "
            "line, its first word against the gold '(x)'; Avg is right answers over all 4,000 "
            "questions. --by task_type gives each task's accuracy.",
            "MVBench makes each reply start after 'Best option:(' (its answer_prompt): run "
            "with --response-prefix 'Best option:(' to do the same; the metric puts '(' back "
            "in front of the reply as its return_prompt does.",
            "Frames: mvbench=16 (get_index with num_segments 16: the middle frame of each of "
            "16 equal segments of the clip, by frame index; the questions of Action Sequence, "
            "Action Prediction, Object Interaction, Action Localization and Episodic Reasoning "
            "are bounded by their start and end). --frames samples others.",
            "Revision not pinned: no commit id of OpenGVLab/MVBench could be read offline "
            "here. The videos' folders are the notebook's data_list paths under video/; the "
            "Fine-grained Pose videos (NTU RGB+D, video/nturgbd/) are not in the repository's "
            "archives for their license and must be obtained from NTU RGB+D itself (a question "
            "whose video is missing is named and the others load).",
        ),
        schema_confirmed=f"OpenGVLab/Ask-Anything @ {ASK_ANYTHING_COMMIT[:7]} "
        "video_chat2/mvbench.ipynb (data_list; rows video, question, candidates, answer, "
        "start, end)",
    )
)
