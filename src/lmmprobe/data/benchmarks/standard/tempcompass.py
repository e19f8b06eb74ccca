"""TempCompass, multi-choice: the ``tempcompass`` definition.

Origin: Liu et al. 2024, TempCompass: Do Video LLMs Really Understand Videos? (Findings of ACL
2024, arXiv:2403.00476); the release llyx97/TempCompass @ `TEMPCOMPASS_COMMIT`:
``questions/multi-choice.json`` (1,580 questions on 410 videos, among them the "conflicting"
reversed, concatenated or re-ordered copies, in five temporal aspects), ``meta_info.json`` (each video's
fine-grained aspects) and the processed videos as ``videos/ID.mp4``. The prompt is its
inference scripts' (``run_qwen2_vl.py``, ``run_video_llava/inference_dataset.py``: the question,
which holds its options, and ``answer_prompt['multi-choice']``); the frames are those of its
Video-LLaVA example (``linspace=8``: ``numpy.linspace(0, len - 1, 8, dtype=int)`` in
Video-LLaVA's decord reader). The score is ``eval_multi-choice.py``'s: its rules rate each
reply (``tempcompass`` matcher), a reply they cannot read goes to its judge (``--judge SPEC``,
protocol ``tempcompass-choice``) or, without one, is rated 0 (its ``--disable_llm`` mode); the
accuracy is the mean rating (``accuracy``; ``--by dimension`` its five aspects).

``tempcompass-yes-no`` is its yes/no task (``questions/yes_no.json``, 2,453 questions): the
question and ``answer_prompt['yes_no']``, the options ``yes`` and ``no`` (not shown), rated by
``eval_yes_no.py``'s rules (``tempcompass-yes-no`` matcher); a reply they cannot read goes to
its judge (``--judge SPEC``, protocol ``tempcompass-yes-no``) or, without one, is rated 0.

``tempcompass-caption-matching`` is its caption-matching task (``questions/caption_matching.json``,
1,503 questions): the question, which holds its caption lines, and
``answer_prompt['caption_matching']``; the options are the caption lines (not shown again), rated
by ``eval_caption_matching.py``'s ``eval_rule`` (``tempcompass-caption-matching`` matcher); a
reply it cannot read goes to its judge (protocol ``tempcompass-caption-matching``) or is rated 0.

``tempcompass-captioning`` is its captioning task (``questions/captioning.json``, 2,004
questions): the question alone (``answer_prompt['captioning']`` is empty: the question ends
``Generated Caption:``). ``eval_captioning.py`` has no rules: its judge (protocol
``tempcompass-captioning``) answers the video's first multi-choice question of the same aspect
(``questions/multi-choice.json``) from the caption, rated against that question's answer; the
sample's options and gold are that question's. Without a judge every caption is rated 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import Benchmark, PromptTemplate, RowContext, RowError, benchmark
from lmmprobe.data.benchmarks._lmms import required_text
from lmmprobe.data.benchmarks.hemm_common import read_json
from lmmprobe.data.benchmarks.standard._choice import escape_braces
from lmmprobe.data.benchmarks.standard._video import clip
from lmmprobe.parse.tempcompass import CAPTIONING_MC_QUESTION, TEMPCOMPASS_COMMIT
from lmmprobe.schema import Sample
from lmmprobe.schema.video import FramePolicy

__all__ = [
    "ANSWER_PROMPT",
    "CAPTION_PROMPT",
    "POLICY",
    "TEMPCOMPASS",
    "TEMPCOMPASS_CAPTIONING",
    "TEMPCOMPASS_CAPTION_MATCHING",
    "TEMPCOMPASS_YES_NO",
    "YES_NO_PROMPT",
]

POLICY = FramePolicy.parse("linspace=8")
"""Video-LLaVA's 8 frames, TempCompass's inference example."""

ANSWER_PROMPT = "\nPlease directly give the best option:"
"""``answer_prompt['multi-choice']``, put after the question."""

YES_NO_PROMPT = "\nPlease answer yes or no:"
"""``answer_prompt['yes_no']``, put after the question."""

CAPTION_PROMPT = "\nPlease directly give the best option:"
"""``answer_prompt['caption_matching']`` (the same words as multi-choice's), after the question."""

# A caption line: eval_rule reads its name before ": ", and its index once the name's word goes.
_CAPTION = re.compile(r"(?:Option|Sentence|Caption) [^\s:]+: \S.*")
_OPTION = re.compile(r"([A-D])\. (.*)")
_DIMENSIONS = ("action", "direction", "speed", "order", "attribute_change")


def _rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    return _task_rows(root, "multi-choice")


def _yes_no_rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    return _task_rows(root, "yes_no")


def _caption_rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    return _task_rows(root, "caption_matching")


def _task_rows(root: Path, task: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    questions = read_json(root, f"questions/{task}.json")
    meta = read_json(root, "meta_info.json")
    if not isinstance(questions, dict) or not isinstance(meta, dict):
        raise DataError(f"{root}: questions/{task}.json and meta_info.json hold objects")
    n = 0
    for video, dims in questions.items():
        for dim, items in dims.items() if isinstance(dims, dict) else [("?", dims)]:
            for k, item in enumerate(items if isinstance(items, list) else [items]):
                n += 1
                info = meta.get(str(video).replace(".jpg", "").replace(".mp4", ""))
                yield f"{root}/questions/{task}.json:{video}/{dim}/{k}", {
                    "_video": video, "_dim": dim, "_k": k, "_item": item, "_meta": info,
                }  # fmt: skip


def _fine(meta: Any, dim: str) -> Any:
    # print_result: the fine-grained aspect is eval_dim[dim]["type"], "order" for order.
    if dim == "order":
        return "order"
    try:
        return meta["eval_dim"][dim]["type"]
    except (KeyError, TypeError):
        return None


def _checked(row: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """The row's video id, dimension and item, each checked."""
    video, dim, item = str(row["_video"]), str(row["_dim"]), row["_item"]
    if dim not in _DIMENSIONS:
        raise RowError("dimension", f"{dim!r:.40} is none of {', '.join(_DIMENSIONS)}")
    if not isinstance(item, dict):
        raise RowError("question", "expected an object {question, answer}")
    if "/" in video or "\\" in video or video.startswith("."):
        raise RowError("video", f"{video!r:.80} is not a video id")
    for field in ("question", "answer"):
        if field not in item:
            # The question's own fields, not the row this reader wraps it in (_video, _dim...).
            names = [str(k)[:40] for k in list(item)[:10]] + (["..."] if len(item) > 10 else [])
            has = ", ".join(names) or "no fields"
            raise RowError(field, f"missing (the question has: {has})")
    return video, dim, item


def _metadata(row: Mapping[str, Any], video: str, dim: str) -> dict[str, Any]:
    # print_result's breakdowns: --by dimension (its five aspects), --by fine_dimension.
    return {"dimension": dim, "fine_dimension": _fine(row.get("_meta"), dim), "video_id": video}


def _tempcompass_yes_no(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    video, dim, item = _checked(row)
    answer = required_text(item, "answer")
    if answer not in ("yes", "no"):  # eval_yes_no.py compares its reading with it as is
        raise RowError("answer", f"{answer!r:.80} is neither 'yes' nor 'no'")
    return Sample(
        id=f"{video}/{dim}/{row['_k']}",
        question=required_text(item, "question"),
        choices=["yes", "no"],
        answer=0 if answer == "yes" else 1,
        formulation="single_choice",
        video=clip(ctx, f"videos/{video}.mp4", POLICY, "video"),
        metadata=_metadata(row, video, dim),
    )


def _tempcompass_caption_matching(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    video, dim, item = _checked(row)
    question = required_text(item, "question")
    captions = question.split("\n")[1:]  # eval_rule's option lines: all after the first
    if len(captions) < 2:
        raise RowError("question", "fewer than two caption lines after the question")
    for i, line in enumerate(captions):
        if not _CAPTION.fullmatch(line):
            raise RowError(
                "question", f"caption line {i + 1} is not 'Option|Sentence|Caption X: ...'"
            )
    answer = required_text(item, "answer")
    if answer not in captions:  # its check_ans: the answer is one of the caption lines
        raise RowError("answer", f"{answer!r:.80} is none of the caption lines")
    return Sample(
        id=f"{video}/{dim}/{row['_k']}",
        question=question,
        choices=captions,
        answer=captions.index(answer),
        formulation="single_choice",
        video=clip(ctx, f"videos/{video}.mp4", POLICY, "video"),
        metadata=_metadata(row, video, dim),
    )


def _option_lines(
    question: str, answer: str, field: str, answer_field: str | None
) -> tuple[str, list[str], int]:
    """A released multi-choice item: (its question before the options, options, gold index).

    The question holds its options as lines ``A. text``, ``B. text``, ... after the question
    itself; the answer is one of those lines whole.

    Raises:
        RowError: No option lines after a question, a line out of order (naming `field`), or
            an answer that is none of the lines (naming `answer_field`; `field` when None).

    """
    lines = question.split("\n")
    first = next((i for i, line in enumerate(lines) if _OPTION.fullmatch(line)), None)
    if not first:  # None, or option lines from the first line on: no question before them
        raise RowError(field, "no 'A. ...' option lines after the question")
    options = []
    for i, line in enumerate(lines[first:]):
        m = _OPTION.fullmatch(line)
        if m is None or m.group(1) != "ABCD"[i]:
            raise RowError(field, f"option line {i + 1} is not '{'ABCD'[i]}. ...'")
        options.append(m.group(2))
    gold = "ABCD".find(answer[:1])
    if gold < 0 or gold >= len(options) or answer != f"{answer[:1]}. {options[gold]}":
        if answer_field is None:
            raise RowError(field, f"its answer {answer!r:.80} is none of its option lines")
        raise RowError(answer_field, f"{answer!r:.80} is none of the option lines")
    return "\n".join(lines[:first]), options, gold


def _tempcompass(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    video, dim, item = _checked(row)
    question = required_text(item, "question")
    answer = required_text(item, "answer")
    stem, options, gold = _option_lines(question, answer, "question", "answer")
    return Sample(
        id=f"{video}/{dim}/{row['_k']}",
        question=stem,
        choices=options,
        answer=gold,
        formulation="single_choice",
        video=clip(ctx, f"videos/{video}.mp4", POLICY, "video"),
        metadata=_metadata(row, video, dim),
    )


TEMPCOMPASS = benchmark(
    Benchmark(
        name="tempcompass",
        groups=("video",),
        title="TempCompass (multi-choice)",
        citation="Liu et al. 2024, TempCompass: Do Video LLMs Really Understand Videos?, "
        "Findings of ACL 2024, arXiv:2403.00476",
        license="cc-by-4.0 (llyx97/TempCompass LICENSE)",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question}\n{options}" + escape_braces(ANSWER_PROMPT),
            source=f"llyx97/TempCompass @ {TEMPCOMPASS_COMMIT[:7]} run_qwen2_vl.py and "
            "run_video_llava/inference_dataset.py (question['question'], which holds its "
            "options 'A. ...', + answer_prompt['multi-choice'])",
            option_format="{mark}. {text}",
        ),
        to_sample=_tempcompass,
        fetch=(
            'git clone https://github.com/llyx97/TempCompass "$LMMPROBE_DATA_DIR/tempcompass" '
            f'&& git -C "$LMMPROBE_DATA_DIR/tempcompass" checkout {TEMPCOMPASS_COMMIT} '
            '&& cd "$LMMPROBE_DATA_DIR/tempcompass" '
            "&& gdown 1b0ZIeRqhrUpQYxoCN_Ym_e0UW05cckYJ -O videos.zip && unzip -qo videos.zip"
        ),
        split="test",
        splits=("test",),
        size=1580,
        layout="files",
        read_files=_rows,
        matcher="tempcompass",
        judge="tempcompass-choice",
        notes=(
            "accuracy is eval_multi-choice.py with --disable_llm (its documented mode without "
            "ChatGPT): a reply its rules read is rated right or wrong, any other reply 0; the "
            "mean rating is its 'avg'. --by dimension gives its five aspects (action, "
            "direction, speed, order, attribute_change), --by fine_dimension the finer ones.",
            "Its default mode sends a reply the rules cannot read to gpt-3.5-turbo-1106 with "
            "its multi_choice_evaluation_prompt: --judge SPEC does the same (judge protocol "
            "tempcompass-choice), and the judge's rating then decides that answer in "
            "accuracy; without a judge such a reply is rated 0 (--disable_llm).",
            "The multi-choice task; yes_no is tempcompass-yes-no, caption_matching "
            "tempcompass-caption-matching, captioning tempcompass-captioning.",
            "Frames: linspace=8 (Video-LLaVA's decord reader, TempCompass's inference "
            "example); its Qwen2-VL script samples fps=1 instead. --frames samples others.",
            "Data: the repository at the pinned commit and the processed videos from its "
            "README's Google Drive file (also on lmms-lab/TempCompass), unzipped to "
            "videos/ID.mp4.",
        ),
        schema_confirmed=f"llyx97/TempCompass @ {TEMPCOMPASS_COMMIT[:7]} "
        "questions/multi-choice.json (video: {dimension: [{question, answer}]}), "
        "meta_info.json, utils/eval_utils.py print_result",
    )
)


TEMPCOMPASS_YES_NO = benchmark(
    Benchmark(
        name="tempcompass-yes-no",
        groups=("video",),
        title="TempCompass (yes/no)",
        citation=TEMPCOMPASS.citation,
        license=TEMPCOMPASS.license,
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question}" + escape_braces(YES_NO_PROMPT),
            source=f"llyx97/TempCompass @ {TEMPCOMPASS_COMMIT[:7]} run_qwen2_vl.py and "
            "run_video_llava/inference_dataset.py (question['question'] + "
            "answer_prompt['yes_no'])",
        ),
        to_sample=_tempcompass_yes_no,
        fetch=TEMPCOMPASS.fetch,
        split="test",
        splits=("test",),
        size=2453,
        layout="files",
        read_files=_yes_no_rows,
        matcher="tempcompass-yes-no",
        judge="tempcompass-yes-no",
        notes=(
            "accuracy is eval_yes_no.py with --disable_llm (its documented mode without "
            "ChatGPT): a reply whose lower-cased text starts 'yes' or 'no' is rated right or "
            "wrong, any other reply 0; the mean rating is its 'avg'. --by dimension gives its "
            "five aspects, --by fine_dimension the finer ones.",
            "Its default mode sends an unread reply to gpt-3.5-turbo-1106 with its "
            "yes_no_evaluation_prompt: --judge SPEC does the same (judge protocol "
            "tempcompass-yes-no), the judge's rating then deciding that answer in accuracy; "
            "without a judge such a reply is rated 0 (--disable_llm).",
            "The options yes and no are not shown: the prompt is the question and 'Please "
            "answer yes or no:'. Frames and data as tempcompass.",
        ),
        schema_confirmed=f"llyx97/TempCompass @ {TEMPCOMPASS_COMMIT[:7]} "
        "questions/yes_no.json (video: {dimension: [{question, answer: yes|no}]}), "
        "meta_info.json, eval_yes_no.py",
    )
)


TEMPCOMPASS_CAPTION_MATCHING = benchmark(
    Benchmark(
        name="tempcompass-caption-matching",
        groups=("video",),
        title="TempCompass (caption matching)",
        citation=TEMPCOMPASS.citation,
        license=TEMPCOMPASS.license,
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question}" + escape_braces(CAPTION_PROMPT),
            source=f"llyx97/TempCompass @ {TEMPCOMPASS_COMMIT[:7]} run_qwen2_vl.py and "
            "run_video_llava/inference_dataset.py (question['question'], which holds its "
            "caption lines, + answer_prompt['caption_matching']); the same text as "
            "lmms-eval @ 75571cf tasks/tempcompass/_default_template_yaml post_prompt"
            "['caption_matching'] after doc['question']",
        ),
        to_sample=_tempcompass_caption_matching,
        fetch=TEMPCOMPASS.fetch,
        split="test",
        splits=("test",),
        size=1503,
        layout="files",
        read_files=_caption_rows,
        matcher="tempcompass-caption-matching",
        judge="tempcompass-caption-matching",
        notes=(
            "accuracy is eval_caption_matching.py with --disable_llm (its documented mode "
            "without ChatGPT): a reply its eval_rule reads (a caption line, a caption's text, "
            "its name 'Option 1' or index '1', dots removed) is rated right or wrong, any "
            "other reply 0; the mean rating is its 'avg'. --by dimension gives its five "
            "aspects, --by fine_dimension the finer ones.",
            "Its default mode sends an unread reply to gpt-3.5-turbo-1106 with its "
            "caption_matching_evaluation_prompt: --judge SPEC does the same (judge protocol "
            "tempcompass-caption-matching), the judge's rating then deciding that answer in "
            "accuracy; without a judge such a reply is rated 0 (--disable_llm).",
            "The options are the question's caption lines (Option 1/2, Sentence A/B, Caption "
            "A/B), already in the question, so not shown again. Frames and data as "
            "tempcompass.",
        ),
        schema_confirmed=f"llyx97/TempCompass @ {TEMPCOMPASS_COMMIT[:7]} "
        "questions/caption_matching.json (video: {dimension: [{question with caption lines, "
        "answer: a caption line}]}), meta_info.json, eval_caption_matching.py",
    )
)


def _captioning_rows(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    # eval_captioning.py asks its judge the first multi-choice question of the same video and
    # aspect: each captioning row carries it (None where the file has none).
    mc = read_json(root, "questions/multi-choice.json")
    if not isinstance(mc, dict):
        raise DataError(f"{root}: questions/multi-choice.json holds an object")
    for where, row in _task_rows(root, "captioning"):
        dims = mc.get(str(row["_video"]))
        first = None
        if isinstance(dims, dict) and isinstance(dims.get(row["_dim"]), list):
            first = next(iter(dims[row["_dim"]]), None)
        yield where, {**row, "_mc": first}


def _mc_lines(mc: Any) -> tuple[str, list[str], int]:
    """(the question as released, its options' texts, the gold's index) of a multi-choice item."""
    field = "multi-choice question"
    if not isinstance(mc, dict):
        raise RowError(field, "questions/multi-choice.json has none for this video and aspect")
    question, answer = mc.get("question"), mc.get("answer")
    if not isinstance(question, str) or not isinstance(answer, str):
        raise RowError(field, "expected an object {question, answer} of text")
    _, options, gold = _option_lines(question, answer, field, None)
    return question, options, gold


def _tempcompass_captioning(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    video, dim, item = _checked(row)
    question, options, gold = _mc_lines(row.get("_mc"))
    meta = _metadata(row, video, dim)
    meta[CAPTIONING_MC_QUESTION] = question
    return Sample(
        id=f"{video}/{dim}/{row['_k']}",
        question=required_text(item, "question"),
        choices=options,
        answer=gold,
        formulation="single_choice",
        video=clip(ctx, f"videos/{video}.mp4", POLICY, "video"),
        metadata=meta,
    )


TEMPCOMPASS_CAPTIONING = benchmark(
    Benchmark(
        name="tempcompass-captioning",
        groups=("video",),
        title="TempCompass (captioning)",
        citation=TEMPCOMPASS.citation,
        license=TEMPCOMPASS.license,
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question}",
            source=f"llyx97/TempCompass @ {TEMPCOMPASS_COMMIT[:7]} run_qwen2_vl.py and "
            "run_video_llava/inference_dataset.py (question['question'], which ends "
            "'Generated Caption:', + answer_prompt['captioning'], which is empty)",
        ),
        to_sample=_tempcompass_captioning,
        fetch=TEMPCOMPASS.fetch,
        split="test",
        splits=("test",),
        size=2004,
        layout="files",
        read_files=_captioning_rows,
        matcher="tempcompass-captioning",
        judge="tempcompass-captioning",
        notes=(
            "Scored by a judge only: run with --judge SPEC. eval_captioning.py has no rules: "
            "the judge (protocol tempcompass-captioning, its caption_evaluation_prompt to "
            "gpt-3.5-turbo-1106) answers the video's first multi-choice question of the same "
            "aspect from the caption, and the caption is rated right when the judge's answer "
            "gives that question's gold letter and names one option; accuracy is the mean "
            "rating, its 'avg'. Without a judge every caption is unparsed and rated 0.",
            "The sample's options and gold are that multi-choice question's (the model is "
            "shown the captioning question only: its 'Information A: ...' lines and "
            "'Generated Caption:'). The captioning question's own answer (an 'Information' "
            "letter, in 148 of the 2,004 another letter than the judged question's gold) is "
            "not read, as there.",
            "A failed or empty judge reply is rated -1 by the reference (subtracted in its "
            "sums); here it is unjudged and rated 0. --by dimension gives its five aspects, "
            "--by fine_dimension the finer ones. Frames and data as tempcompass.",
        ),
        schema_confirmed=f"llyx97/TempCompass @ {TEMPCOMPASS_COMMIT[:7]} "
        "questions/captioning.json (video: {dimension: [{question ending 'Generated "
        "Caption:', answer}]}), questions/multi-choice.json, meta_info.json, "
        "eval_captioning.py",
    )
)
