"""The multiple-choice and yes/no benchmarks users ask for, each one `Benchmark` definition.

MMBench (dev, English, CircularEval), MMMU (validation), MME, POPE, SEED-Bench (image),
ScienceQA-IMG, AI2D, MMStar, RealWorldQA, HallusionBench and MathVista (testmini). Each says
where its data lives (the hub id lmms-eval loads, at a pinned revision where one is known), how
a row of its published schema becomes a `Sample`, its official prompt (cited), and the run
metric computing its official score (`lmmprobe.metrics.builtin.benchmark_choice`, or the
built-in ``accuracy``).

Yes/no benchmarks (MME, POPE, HallusionBench) and the benchmarks whose official reading needs
the model's raw answer (MMMU, MathVista) are open-ended samples: lmmprobe keeps the raw text
of open-ended answers, and their metrics read it with the benchmark's own rules.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    as_index,
    benchmark,
    image_ref,
)
from lmmprobe.data.benchmarks._lmms import (
    LMMS_EVAL_COMMIT,
    lmms_source,
    required_text,
)
from lmmprobe.schema import ImageRef, Sample

LETTER_PROMPT = "Answer with the option's letter from the given choices directly."


def _present(value: Any) -> bool:
    # MMBench's tables write a missing option or hint as null, NaN or the text "nan".
    if value is None or (isinstance(value, float) and value != value):
        return False
    return not (isinstance(value, str) and value.strip() in ("", "nan"))


def _struct(value: Any) -> Mapping[str, Any]:
    """A struct column's value (a mapping), or an empty one when the row has none."""
    return value if isinstance(value, Mapping) else {}


def _escape(text: str) -> str:
    """Text put into a per-row ``str.format`` template, braces doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def _plain(value: Any) -> Any:
    # Metadata must be JSON: numpy scalars and the like become Python values.
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [_plain(v) for v in value]
    return str(value)


# --------------------------------------------------------------------------- MMBench

MMBENCH_CIRCULAR_BASE = 1_000_000
"""MMBench numbers the circular copies of question ``i`` as ``i + k * 1e6``."""


def _mmbench(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    try:
        index = int(row["index"])
    except (TypeError, ValueError) as exc:
        raise RowError("index", f"expected an integer, got {row['index']!r}") from exc
    letters = [c for c in "ABCD" if _present(row.get(c))]
    if len(letters) < 2 or letters != list("ABCD"[: len(letters)]):
        raise RowError("A", f"options must be A, B[, C, D] in order; this row has {letters}")
    choices = [str(row[c]) for c in letters]
    hint = row.get("hint")
    return Sample(
        id=str(index),
        images=[image_ref(row["image"], ctx)],
        question=required_text(row, "question"),
        choices=choices,
        answer=as_index(row["answer"], choices),
        formulation="single_choice",
        context=str(hint) if _present(hint) else None,
        metadata={
            "index": index,
            "circular_index": index % MMBENCH_CIRCULAR_BASE,
            # CircularEval needs one published copy per option (mmbench_circular checks it).
            "n_options": len(choices),
            "category": _plain(row.get("category")),
            "l2_category": _plain(row.get("L2-category", row.get("l2-category"))),
            "source": _plain(row.get("source")),
        },
    )


MMBENCH = benchmark(
    Benchmark(
        name="mmbench",
        title="MMBench (dev, English)",
        citation="Liu et al. 2024, MMBench: Is Your Multi-modal Model an All-around Player? "
        "ECCV 2024, arXiv:2307.06281",
        license="unknown (see card)",
        formulation="single_choice",
        metric="mmbench_circular",
        prompt=PromptTemplate(
            template="{context}{question} There are several options:\n{options}\n\n"
            + LETTER_PROMPT,
            source=lmms_source(
                "mmbench/en_utils.py (mmbench_doc_to_text) and "
                "_default_template_mmbench_en_yaml (post_prompt)"
            ),
            context_format="{context} ",
        ),
        to_sample=_mmbench,
        include=("en/*", "README.md"),
        split="dev",
        splits=("dev", "test"),
        hub_id="lmms-lab/MMBench",
        revision="ac155b9c318a37ac5a75267b18cbca12cbcc6bab",
        config="en",
        size=4329,
        notes=(
            "The published dev split holds every question once per rotation of its options "
            "(index i, i+1e6, i+2e6...): 4329 rows, about 1164 questions. mmbench_circular "
            "counts a question only if all its rows are right (CircularEval); do not add "
            "--circular, the rotations are already in the data. A question missing one of "
            "its copies (limit=, a partial copy) is left out of mmbench_circular (n counts "
            "the complete ones); with --repeats each repeat is its own CircularEval pass.",
            "Answers are read by lmmprobe's matcher (mark, then option text); MMBench's "
            "official reading adds a ChatGPT step for answers its rules cannot read. lmmprobe "
            "uses the rule-based reading until a judge exists: unread answers are wrong.",
            "Pinned to the lmms-lab/MMBench commit whose card lists the en config (index as "
            "string); the repository's newest commit (56ba1af) adds the cc config.",
        ),
        circular=True,
        schema_confirmed="lmms-lab/MMBench card @ ac155b9 (config en: index string, question, "
        "hint, answer, A-D, category, image Image, source, L2-category, comment, split) + "
        "lmms-eval mmbench/en_utils.py + mmbench_evals.py (index % 1e6) @ " + LMMS_EVAL_COMMIT[:7],
    )
)


# --------------------------------------------------------------------------- MMMU

_IMAGE_TOKEN = re.compile(r"<image \d+>")
MMMU_OPEN_PROMPT = "Answer the question using a single word or phrase."


def _mmmu_answers(answer: str) -> list[str]:
    # A few open answers are a Python list written as text ("['24/7', '3.429']").
    if answer.startswith("["):
        try:
            value = ast.literal_eval(answer)
        except (ValueError, SyntaxError):
            return [answer]
        if isinstance(value, list) and value:
            return [str(v) for v in value]
    return [answer]


def _mmmu(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    question = required_text(row, "question")
    qtype = required_text(row, "question_type")
    try:
        options = ast.literal_eval(row["options"]) if row["options"] else []
    except (ValueError, SyntaxError) as exc:
        raise RowError(
            "options", f"expected a Python list written as text, got {row['options']!r}"
        ) from exc
    if not isinstance(options, list):
        raise RowError("options", f"expected a list, got {options!r}")
    options = [str(o) for o in options]
    letters = [chr(ord("A") + i) for i in range(len(options))]
    answer = required_text(row, "answer")
    if qtype == "multiple-choice":
        if answer not in letters:
            raise RowError("answer", f"{answer!r} is not one of the option letters {letters}")
        shown = "\n".join(f"{m}. {o}" for m, o in zip(letters, options, strict=True))
        template = "{question}\n" + _escape(shown) + "\n\n" + LETTER_PROMPT
        refs = [answer]
    else:
        template = "{question}\n\n" + MMMU_OPEN_PROMPT
        refs = _mmmu_answers(answer)
    # lmms-eval shows the images the prompt names, in sorted token order (mmmu_doc_to_visual).
    tokens = sorted(
        {
            t.strip("<>").replace(" ", "_")
            for t in _IMAGE_TOKEN.findall(template.format(question=question))
        }
    )
    images: list[ImageRef] = []
    for token in tokens:
        if token not in row or row[token] is None:
            raise RowError(token, "the question names this image but the row has none")
        images.append(image_ref(row[token], ctx, token))
    sid = required_text(row, "id")
    return Sample(
        id=sid,
        images=images,
        question=question,
        answer=refs,
        formulation="open_ended",
        metadata={
            "question_type": qtype,
            "option_letters": letters,
            "option_texts": options,
            "answers": refs,
            "subject": sid.split("_")[1] if sid.count("_") >= 2 else None,
            "subfield": _plain(row.get("subfield")),
            "img_type": _plain(row.get("img_type")),
            "topic_difficulty": _plain(row.get("topic_difficulty")),
            "prompt_template": template,
        },
    )


MMMU = benchmark(
    Benchmark(
        name="mmmu",
        title="MMMU (validation)",
        citation="Yue et al. 2024, MMMU: A Massive Multi-discipline Multimodal Understanding and "
        "Reasoning Benchmark for Expert AGI, CVPR 2024, arXiv:2311.16502",
        license="apache-2.0 (MMMU/MMMU card); lmms-lab/MMMU card: unknown",
        formulation="open_ended",
        metric="mmmu_accuracy",
        prompt=PromptTemplate(
            template="{question}\n{options}\n\n" + LETTER_PROMPT,
            source=lmms_source(
                "mmmu/utils.py (construct_prompt) and mmmu_val.yaml "
                "(multiple_choice_prompt, open_ended_prompt)"
            ),
        ),
        to_sample=_mmmu,
        include=("data/validation-*", "README.md"),
        split="validation",
        splits=("dev", "validation", "test"),
        hub_id="lmms-lab/MMMU",
        revision="364f2e2eb107b36e07ff4c5a15f5947a759cef47",
        size=900,
        notes=(
            "Each row gets its own prompt: multiple-choice questions list their options "
            "(A. ...) and ask for the letter, open questions ask for a short answer; the "
            "question keeps its <image N> placeholders and the named images follow in order.",
            "mmmu_accuracy reads answers with MMMU's rules (parse_multi_choice_response, "
            "parse_open_response). Where MMMU's code picks a random letter (nothing readable), "
            "lmmprobe counts the answer as wrong.",
            "Rows are open-ended so the raw answer is kept for MMMU's reading; the generic "
            "accuracy column (exact match) is not MMMU's score.",
        ),
        schema_confirmed="lmms-lab/MMMU card @ 364f2e2 (id, question, options as text, "
        "explanation, image_1..image_7 Image, img_type, answer, topic_difficulty, "
        "question_type, subfield) + lmms-eval mmmu/utils.py @ " + LMMS_EVAL_COMMIT[:7],
    )
)


# --------------------------------------------------------------------------- MME


def _yes_no(value: Any, field: str) -> str:
    text = str(value).strip().lower().rstrip(".")
    if text not in ("yes", "no"):
        raise RowError(field, f"expected Yes or No, got {value!r}")
    return text


def _mme(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    qid = required_text(row, "question_id")
    category = required_text(row, "category")
    return Sample(
        id=f"{qid}/{ctx.index}",  # both questions of an image share its question_id
        images=[image_ref(row["image"], ctx)],
        question=required_text(row, "question"),
        answer=[_yes_no(row["answer"], "answer")],
        formulation="open_ended",
        metadata={"question_id": qid, "category": category},
    )


MME = benchmark(
    Benchmark(
        name="mme",
        title="MME",
        citation="Fu et al. 2023, MME: A Comprehensive Evaluation Benchmark for Multimodal Large "
        "Language Models, arXiv:2306.13394",
        license="unknown (see card; MME is released for research use)",
        formulation="open_ended",
        metric="mme_perception",
        prompt=PromptTemplate(
            template="{question}",
            source="MME's questions as released, each ending 'Please answer yes or no.' "
            "(BradyFU/Awesome-Multimodal-Large-Language-Models branch Evaluation, "
            "tools/eval_tool.zip Your_Results/*.txt @ dd29509)",
        ),
        to_sample=_mme,
        include=("data/test-*", "README.md"),
        splits=("test",),
        hub_id="lmms-lab/MME",
        revision="d6c9023f017b564f7b3ccccf5348166bce8fdbcd",
        size=2374,
        notes=(
            "mme_perception and mme_cognition are MME's scores: per subtask (category) "
            "accuracy x 100 + accuracy+ x 100 (both questions of an image right), summed over "
            "the 10 perception and 4 cognition subtasks (maxima 2000 and 800). Answers are read "
            "as MME's eval tool reads them (yes/no in the first four characters). --by category "
            "gives each subtask's score. With --repeats, accuracy+ pairs an image's two "
            "questions within each repeat, so the score is the average over repeats.",
            "lmms-eval replaces 'Please answer yes or no.' by 'Answer the question using a "
            "single word or phrase.'; lmmprobe asks MME's questions as released.",
        ),
        schema_confirmed="lmms-lab/MME card @ d6c9023 (question_id, image Image, question, "
        "answer Yes/No, category; 2374 rows) + lmms-eval mme/utils.py @ " + LMMS_EVAL_COMMIT[:7],
    )
)


# --------------------------------------------------------------------------- POPE

POPE_POST = "Answer the question using a single word or phrase."


def _pope(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    qid = str(row["question_id"])
    return Sample(
        id=f"{row.get('category') or 'pope'}-{qid}",
        images=[image_ref(row["image"], ctx)],
        question=required_text(row, "question").strip(),
        answer=[_yes_no(row["answer"], "answer")],
        formulation="open_ended",
        metadata={
            "question_id": qid,
            "category": _plain(row.get("category")),
            "image_source": _plain(row.get("image_source")),
        },
    )


POPE = benchmark(
    Benchmark(
        name="pope",
        title="POPE (MSCOCO: random, popular, adversarial)",
        citation="Li et al. 2023, Evaluating Object Hallucination in Large Vision-Language "
        "Models, EMNLP 2023, arXiv:2305.10355",
        license="mit (RUCAIBox/POPE repository); lmms-lab/POPE card: unknown",
        formulation="open_ended",
        metric="pope_f1",
        prompt=PromptTemplate(
            template="{question}\n" + POPE_POST,
            source=lmms_source("pope/pope.yaml (post_prompt) and pope/utils.py (pope_doc_to_text)"),
        ),
        to_sample=_pope,
        include=("data/*", "README.md"),
        splits=("test",),
        hub_id="lmms-lab/POPE",
        revision="4db1276663dfa5eb8ad16a52d24c31a09e470896",
        size=9000,
        notes=(
            "pope_f1, pope_accuracy, pope_precision, pope_recall and pope_yes_ratio are POPE's "
            "(evaluate.py): the first sentence of an answer is 'no' when one of its words is "
            "No, not or no, else 'yes'. --by category gives random/popular/adversarial.",
            "lmms-eval's own yes-ratio counts gold answers; lmmprobe reports POPE's (answers).",
        ),
        schema_confirmed="lmms-lab/POPE layout @ 4db1276 (data/test-0000N-of-00003.parquet) + "
        "card of its duplicate giobin/POPE (id, question_id, question, answer, image_source, "
        "image Image, category; 9000 rows) + lmms-eval pope/utils.py @ " + LMMS_EVAL_COMMIT[:7],
    )
)


# --------------------------------------------------------------------------- SEED-Bench


def _seed(row: Mapping[str, Any], ctx: RowContext) -> Sample | None:
    if row.get("data_type") != "image":
        return None  # SEED-Bench's video questions need frames lmmprobe does not read here
    images = row["image"]
    if not isinstance(images, list) or not images:
        raise RowError("image", "expected a list of images (Sequence(Image))")
    choices = [required_text(row, f"choice_{c}") for c in "abcd"]
    return Sample(
        id=str(row["question_id"]),
        images=[image_ref(im, ctx, f"image[{i}]") for i, im in enumerate(images)],
        question=required_text(row, "question"),
        choices=choices,
        answer=as_index(row["answer"], choices),
        metadata={
            "question_id": str(row["question_id"]),
            "question_type_id": _plain(row.get("question_type_id")),
        },
    )


SEEDBENCH = benchmark(
    Benchmark(
        name="seedbench",
        title="SEED-Bench (image questions)",
        citation="Li et al. 2024, SEED-Bench: Benchmarking Multimodal LLMs with Generative "
        "Comprehension, CVPR 2024, arXiv:2307.16125",
        license="cc-by-nc-4.0 (AILab-CVC/SEED-Bench card)",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question}\n{options}\n" + LETTER_PROMPT,
            source=lmms_source("seedbench/utils.py (seed_doc_to_text)"),
        ),
        to_sample=_seed,
        splits=("test",),
        hub_id="lmms-lab/SEED-Bench",
        size=14233,
        notes=(
            "Only image questions (data_type 'image', 14,233 of 17,990 rows) are read; video "
            "rows are skipped.",
            "The official score is accuracy (lmms-eval: seed_image); lmms-eval reads the first "
            "character of the answer, lmmprobe its matcher (mark, then option text).",
            "Revision not pinned: the hub shows its main only as 74c4ea0 and no public source "
            "read offline gives the full commit id, so the data is read from main.",
        ),
        schema_confirmed="",
    )
)


# --------------------------------------------------------------------------- ScienceQA-IMG


def _scienceqa(row: Mapping[str, Any], ctx: RowContext) -> Sample | None:
    if row.get("image") is None:
        return None  # ScienceQA-IMG is the image subset; a row without one is not asked
    choices = row["choices"]
    if not isinstance(choices, list) or len(choices) < 2:
        raise RowError("choices", f"expected a list of at least 2 options, got {choices!r}")
    choices = [str(c) for c in choices]
    hint = row.get("hint")
    return Sample(
        id=f"{ctx.split}-{ctx.index}",  # the hub copy has no question id
        images=[image_ref(row["image"], ctx)],
        question=required_text(row, "question"),
        choices=choices,
        answer=as_index(row["answer"], choices),
        context=str(hint) if _present(hint) else None,
        metadata={
            k: _plain(row.get(k))
            for k in ("subject", "topic", "category", "skill", "grade", "task")
        },
    )


SCIENCEQA = benchmark(
    Benchmark(
        name="scienceqa-img",
        title="ScienceQA-IMG (test)",
        citation="Lu et al. 2022, Learn to Explain: Multimodal Reasoning via Thought Chains for "
        "Science Question Answering, NeurIPS 2022, arXiv:2209.09513",
        license="cc-by-nc-sa-4.0 (ScienceQA)",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{context}{question}\n{options}\n" + LETTER_PROMPT,
            source=lmms_source(
                "scienceqa/utils.py (sqa_doc_to_text, format default) and "
                "scienceqa_img.yaml (post_prompt)"
            ),
            context_format="Context: {context}\n",
        ),
        to_sample=_scienceqa,
        include=("ScienceQA-IMG/*", "README.md"),
        splits=("train", "validation", "test"),
        hub_id="lmms-lab/ScienceQA",
        revision="df59f11e9fd34bc02e24b4d5314bb1c86dcd21c0",
        config="ScienceQA-IMG",
        size=2017,
        hemm="ScienceQA",
        reform="visually grounded reasoning",
        notes=(
            "The official score is accuracy; lmms-eval reads the answer as the letter alone or "
            "'X.' at its start, lmmprobe uses its matcher (mark, then option text).",
        ),
        schema_confirmed="lmms-lab/ScienceQA card @ df59f11 (config ScienceQA-IMG: image Image, "
        "question, choices list, answer int8, hint, task, grade, subject, topic, category, "
        "skill, lecture, solution; test 2017) + lmms-eval scienceqa/utils.py @ "
        + LMMS_EVAL_COMMIT[:7],
    )
)


# --------------------------------------------------------------------------- AI2D


def _ai2d(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    options = row["options"]
    if not isinstance(options, list) or len(options) < 2:
        raise RowError("options", f"expected a list of at least 2 options, got {options!r}")
    choices = [str(o) for o in options]
    return Sample(
        id=str(ctx.index),
        images=[image_ref(row["image"], ctx)],
        question=required_text(row, "question"),
        choices=choices,
        answer=as_index(row["answer"], choices),
    )


AI2D = benchmark(
    Benchmark(
        name="ai2d",
        title="AI2D (test)",
        citation="Kembhavi et al. 2016, A Diagram Is Worth A Dozen Images, ECCV 2016, "
        "arXiv:1603.07396",
        license="apache-2.0 (AI2D release); lmms-lab/ai2d card: unknown",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question}\n{options}\n" + LETTER_PROMPT,
            source=lmms_source("ai2d/utils.py (ai2d_doc_to_text, prompt_format mcq) and ai2d.yaml"),
        ),
        to_sample=_ai2d,
        splits=("test",),
        hub_id="lmms-lab/ai2d",
        revision="c83a9b9692933aff8349157c88a413df9d02c4e5",
        size=3088,
        notes=(
            "The official score is accuracy (lmms-eval: exact match of the letter read by a "
            "regex filter); lmmprobe reads answers with its matcher.",
        ),
        schema_confirmed="lmms-lab/ai2d card @ c83a9b9 (question, options list, answer index "
        "as text, image Image; test 3088) + lmms-eval ai2d/utils.py @ " + LMMS_EVAL_COMMIT[:7],
    )
)


# --------------------------------------------------------------------------- MMStar / RealWorldQA

_MMSTAR_OPTION = re.compile(r"(?:^|,\s)([A-D]):\s")
_LINE_OPTION = re.compile(r"^([A-Z])\.\s+(.*)$", re.MULTILINE)


def _embedded_sample(
    sid: str,
    question: str,
    marks: list[str],
    texts: list[str],
    answer: str,
    images: list[ImageRef],
    template: str,
    metadata: dict[str, Any],
) -> Sample:
    # The options are part of the question text as published: the prompt shows that text
    # verbatim, and the parsed options let lmmprobe's matcher read the answer. The model sees
    # the published letters whatever the run's shuffle, rotation or marks, so the request must
    # keep them (fixed_options) or the matcher would map its letter to another option.
    meta = {**metadata, "prompt_template": template}
    letters = [chr(ord("A") + i) for i in range(len(marks))]
    if len(marks) >= 2 and marks == letters and answer.strip() in marks:
        return Sample(
            id=sid,
            images=images,
            question=question,
            choices=texts,
            answer=marks.index(answer.strip()),
            metadata={**meta, "fixed_options": True},
        )
    return Sample(
        id=sid,
        images=images,
        question=question,
        answer=[answer],
        formulation="open_ended",
        metadata=meta,
    )


def _mmstar(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    question = required_text(row, "question")
    _head, sep, tail = question.partition("Options:")
    marks: list[str] = []
    texts: list[str] = []
    if sep:
        parts = _MMSTAR_OPTION.split(tail.strip())
        marks, texts = parts[1::2], [t.strip() for t in parts[2::2]]
    meta = _struct(row.get("meta_info"))
    return _embedded_sample(
        str(row["index"]),
        question.strip(),
        marks,
        texts,
        required_text(row, "answer"),
        [image_ref(row["image"], ctx)],
        "{question}\n" + LETTER_PROMPT.rstrip("."),
        {
            "category": _plain(row.get("category")),
            "l2_category": _plain(row.get("l2_category")),
            "source": _plain(meta.get("source")),
        },
    )


MMSTAR = benchmark(
    Benchmark(
        name="mmstar",
        title="MMStar (val)",
        citation="Chen et al. 2024, Are We on the Right Way for Evaluating Large Vision-Language "
        "Models? arXiv:2403.20330",
        license="unknown (see card)",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question}\n" + LETTER_PROMPT.rstrip("."),
            source=lmms_source(
                "mmstar/utils.py (mmstar_doc_to_text) and _default_template_yaml "
                "(post_prompt, without a final period)"
            ),
        ),
        to_sample=_mmstar,
        include=("mmstar.parquet", "README.md"),
        split="val",
        splits=("val",),
        hub_id="Lin-Chen/MMStar",
        revision="bc98d668301da7b14f648724866e57302778ab27",
        size=1500,
        notes=(
            "The question text holds its options ('Options: A: ..., B: ...'); the prompt shows "
            "it verbatim, so the options keep their published order and letters whatever "
            "--repeats, --circular or --option-marks say (metadata fixed_options): repeats ask "
            "the same text again, and --circular gives identical copies, not rotations.",
            "The official score is accuracy (--by category gives MMStar's six capabilities).",
        ),
        schema_confirmed="Lin-Chen/MMStar card @ a9beb09 (mmstar.parquet as split val: index "
        "int64, question, image Image, answer, category, l2_category, meta_info struct(source, "
        "split, image_path)); the options-in-question format from lmms-eval mmstar/utils.py "
        "(question shown verbatim) @ " + LMMS_EVAL_COMMIT[:7] + " and the MMStar paper's examples",
    )
)


def _realworldqa(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    question = required_text(row, "question")
    found = _LINE_OPTION.findall(question)
    return _embedded_sample(
        str(ctx.index),
        question,
        [m for m, _ in found],
        [t.strip() for _, t in found],
        str(row["answer"]),
        [image_ref(row["image"], ctx)],
        "{question}",
        {},
    )


REALWORLDQA = benchmark(
    Benchmark(
        name="realworldqa",
        title="RealWorldQA",
        citation="xAI 2024, RealWorldQA (released with Grok-1.5 Vision)",
        license="cc-by-nd-4.0 (xAI); lmms-lab/RealWorldQA card: cc-by-4.0",
        formulation="single_choice",
        metric="accuracy",
        prompt=PromptTemplate(
            template="{question}",
            source=lmms_source("realworldqa/realworldqa.yaml (empty pre/post prompt) and utils.py"),
        ),
        to_sample=_realworldqa,
        splits=("test",),
        hub_id="lmms-lab/RealWorldQA",
        revision="907c4e5228fd1703c710ed937601cb5f89ab8d5c",
        size=765,
        notes=(
            "Questions carry their options and instruction in the text; rows whose answer is "
            "an option letter are choice samples, the others (numbers, words) open-ended. "
            "The options keep their published order and letters whatever --repeats, "
            "--circular or --option-marks say (metadata fixed_options): repeats ask the same "
            "text again, and --circular gives identical copies, not rotations.",
            "The official score is exact-match accuracy.",
        ),
        schema_confirmed="",
    )
)


# --------------------------------------------------------------------------- HallusionBench


def _hallusion(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    gold = str(row["gt_answer"]).strip()
    if gold not in ("0", "1"):
        raise RowError("gt_answer", f"expected '1' (yes) or '0' (no), got {row['gt_answer']!r}")
    keys = ("category", "subcategory", "set_id", "figure_id", "question_id")
    meta = {k: str(row[k]) for k in keys}
    meta.update(
        gt_answer=gold,
        visual_input=str(row.get("visual_input")),
        gt_answer_details=_plain(row.get("gt_answer_details")),
    )
    image = row.get("image")
    return Sample(
        id="_".join(meta[k] for k in keys),
        images=[image_ref(image, ctx)] if image is not None else [],
        question=required_text(row, "question"),
        answer=["yes" if gold == "1" else "no"],
        formulation="open_ended",
        metadata=meta,
    )


HALLUSIONBENCH = benchmark(
    Benchmark(
        name="hallusionbench",
        title="HallusionBench (image questions)",
        citation="Guan et al. 2024, HallusionBench: An Advanced Diagnostic Suite for Entangled "
        "Language Hallucination and Visual Illusion in Large Vision-Language Models, CVPR 2024, "
        "arXiv:2310.14566",
        license="bsd-3-clause (tianyi-lab/HallusionBench repository); card: unknown",
        formulation="open_ended",
        metric="hallusionbench_qacc",
        prompt=PromptTemplate(
            template="{question}",
            source=lmms_source(
                "hallusion_bench/hallusion_bench_image.yaml and evaluate_hb.py "
                "(hb_doc_to_text: the question alone)"
            ),
        ),
        to_sample=_hallusion,
        split="image",
        splits=("image", "non_image"),
        hub_id="lmms-lab/HallusionBench",
        revision="ea5fd49f1b711d12cc8b0ec75be0c0593e17befe",
        size=951,
        notes=(
            "hallusionbench_qacc, _facc and _aacc are HallusionBench's question-pair, figure "
            "and question accuracies (its utils.py). The official protocol asks GPT-4 whether "
            "each answer agrees with the reference; lmmprobe reads yes/no by rule until a "
            "judge exists. Only an answer stating uncertainty ('I cannot tell', 'not sure', "
            "'hard to say'...) is 'unclear' (the judge's verdict for an answer unclear about "
            "the answer; right for a visual-supplement question asked without its figure); "
            "an answer with both yes and no, or neither, is unread and wrong.",
            "With --repeats each repeat is scored as its own run and the accuracies are "
            "averaged over repeats.",
            "split=non_image holds the 178 visual-supplement questions asked without a figure.",
        ),
        schema_confirmed="lmms-lab/HallusionBench card (category, subcategory, visual_input, "
        "set_id, figure_id, sample_note, question_id, question, gt_answer_details, gt_answer, "
        "filename, image Image; splits image 951, non_image 178) + lmms-eval "
        "hallusion_bench/evaluate_hb.py @ " + LMMS_EVAL_COMMIT[:7],
    )
)


# --------------------------------------------------------------------------- MathVista


def _mathvista(row: Mapping[str, Any], ctx: RowContext) -> Sample:
    choices = row.get("choices")
    qtype = required_text(row, "question_type")
    if qtype == "multi_choice" and (not isinstance(choices, list) or len(choices) < 2):
        raise RowError(
            "choices", f"a multi_choice question needs a list of options, got {choices!r}"
        )
    meta_info = _struct(row.get("metadata"))
    return Sample(
        id=required_text(row, "pid"),
        images=[image_ref(row["decoded_image"], ctx, "decoded_image")],
        question=required_text(row, "question"),
        answer=[str(row["answer"])],
        formulation="open_ended",
        metadata={
            "choices": _plain(choices),
            # Not "question_type": lmmprobe reads question_type "free_form" as a Dysca
            # free-form description (scored by embedding similarity).
            "mathvista_question_type": qtype,
            "answer_type": required_text(row, "answer_type"),
            "precision": _plain(row.get("precision")),
            "unit": _plain(row.get("unit")),
            "category": _plain(meta_info.get("category")),
            "task": _plain(meta_info.get("task")),
            "context": _plain(meta_info.get("context")),
            "prompt_template": _escape(required_text(row, "query")),
        },
    )


MATHVISTA = benchmark(
    Benchmark(
        name="mathvista",
        title="MathVista (testmini)",
        citation="Lu et al. 2024, MathVista: Evaluating Mathematical Reasoning of Foundation "
        "Models in Visual Contexts, ICLR 2024, arXiv:2310.02255",
        license="cc-by-sa-4.0 (AI4Math/MathVista card)",
        formulation="open_ended",
        metric="mathvista_accuracy",
        prompt=PromptTemplate(
            template="{question}",
            source="each row's query column, MathVista's own prompt (hint, question, choices) "
            "built by lupantech/MathVista evaluation/build_query.py @ 53d5258",
        ),
        to_sample=_mathvista,
        include=("data/testmini-*", "README.md"),
        split="testmini",
        splits=("testmini", "test"),
        hub_id="AI4Math/MathVista",
        revision="d32e834bdd9442cf2a0f72e3b2b7a74151c2a2d1",
        size=1000,
        notes=(
            "The official protocol extracts answers with an LLM (GPT-4) after a few rules; "
            "lmmprobe uses the rule-based reading (extract_answer with quick_extract, then "
            "normalize_extracted_answer) until a judge exists. A multiple-choice reply that is "
            "only an option letter ('B', '(B)', 'B.') is read as that option, as GPT-4's "
            "extraction would read it. An answer the rules cannot read is unparsed and wrong: "
            "unlike the released code, whose normalization sends an empty extraction to the "
            "nearest option by edit distance, lmmprobe never scores an option the model did "
            "not give.",
            "The prompt is the row's query column verbatim.",
        ),
        schema_confirmed="AI4Math/MathVista card @ d32e834 (pid, question, image path, "
        "decoded_image Image, choices list, unit, precision float64, answer, question_type, "
        "answer_type, metadata struct, query) + lupantech/MathVista evaluation/*.py @ 53d5258",
    )
)

__all__ = [
    "AI2D",
    "HALLUSIONBENCH",
    "MATHVISTA",
    "MMBENCH",
    "MME",
    "MMMU",
    "MMSTAR",
    "POPE",
    "REALWORLDQA",
    "SCIENCEQA",
    "SEEDBENCH",
]
