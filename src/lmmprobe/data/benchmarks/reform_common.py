"""What every ReForm-Eval dataset definition shares: the release, the dimensions, the readers.

ReForm-Eval (Li et al., 2023, arXiv:2310.02569; code FudanDISC/ReForm-Eval @ `REFORM_COMMIT`)
re-formulates 61 datasets in 8 capability dimensions and releases them as ReForm-Eval-Data
(`HUB_ID` on the Hugging Face Hub, also a Google Drive archive): one JSON file per dataset and
formulation under ``huggingface_data/<DATASET>/``, every image stored as base64 text. Its
dataset classes (``build/<DATASET>/*.py``) read the file its config
(``build/configs/*.yaml``, key ``offline_huggingface_data``) names and turn each item into a
sample; the definitions in ``reform/`` read the same file at the same path, relative to the
clone of ReForm-Eval-Data (``path=`` or ``$LMMPROBE_DATA_DIR/reform-eval``), and build the
same question, options, gold index and multi-round history the class builds.

Which item fields each class reads is a *family* here (`FAMILIES`): one reader per family,
each citing the classes it follows. Where a class picks its wording from an instruction list
per sample, the loaded sample asks entry 0 of the generation list: what the class asks with
``random_instruct`` and ``--dataset_duplication 1`` (the command in ReForm-Eval's README), in
the released option order. The sample also carries the class's lists (`WORDINGS`): a run's
repeat ``r`` asks them as ReForm-Eval's duplicate ``r`` does, generation or likelihood, its
options reshuffled (`lmmprobe.formulate.duplicates`). Where it draws
distractors at load time with an unseeded ``random.sample`` (TDIUC, MSCOCO object counting),
lmmprobe draws them the same way from the same lists, seeded by the question id, so a run is
reproducible (ReForm-Eval's own draw differs run to run).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks._images import image_ref
from lmmprobe.data.benchmarks.base import Benchmark, PromptTemplate, RowContext, RowError
from lmmprobe.data.benchmarks.register import benchmark
from lmmprobe.data.jsonl import read_json_file
from lmmprobe.schema import ImageRef, Sample
from lmmprobe.schema.text import ascii_integer

__all__ = [
    "CITATION",
    "COPY",
    "DIMENSIONS",
    "FAMILIES",
    "HUB_ID",
    "LICENSE",
    "REFORM_COMMIT",
    "REFORM_REPO",
    "UNPINNED",
    "WORDINGS",
    "Box",
    "ReformSet",
    "dimension_suite",
    "reform_set",
    "suite_benchmark",
]

REFORM_REPO = "FudanDISC/ReForm-Eval"
REFORM_COMMIT = "df1cfa7bf15f89591fc2c0e0f654c84d2cbf44bb"
HUB_ID = "Aweminus/ReForm-Eval-Data"
COPY = "reform-eval"
WORDINGS = "reform_wordings"
"""The sample metadata key holding the wordings a class rotates over duplicates (the key
`lmmprobe.formulate.duplicates` reads; data does not import formulate)."""
"""The folder under ``$LMMPROBE_DATA_DIR`` holding the one clone every member reads."""
CITATION = (
    "Li et al. 2023, ReForm-Eval: Evaluating Large Vision Language Models via Unified "
    "Re-Formulation of Task-Oriented Benchmarks. arXiv:2310.02569"
)
LICENSE = "apache-2.0 (ReForm-Eval); each source dataset under its own license"

DIMENSIONS: dict[str, str] = {
    "coarse": "Coarse-Grained Perception",
    "fine": "Fine-Grained Perception",
    "scene-text": "Scene Text Perception",
    "spatial": "Spatial Understanding",
    "cross-modal": "Cross-Modal Inference",
    "description": "Visual Description",
    "dialogue": "Multi-Turn Dialogue",
    "reasoning": "Visually Grounded Reasoning",
}
"""ReForm-Eval's 8 dimensions (README "Data Usage"), by the slug of ``reform-eval-<slug>``."""

UNPINNED = (
    f"The copy is not pinned: ReForm-Eval's code loads {HUB_ID}'s main, and the full hub "
    "commit of main at its release (Nov 2023, after the IC15/FUNSD update) could not be read "
    "offline (an earlier one, dafc82ea348febb92fff4db11821716f78a47a25 of Oct 16 2023, "
    "predates that update); the fetch command takes main."
)

_CHOICE_TEMPLATE = PromptTemplate(
    "{question} Options: {options}.",
    f"{REFORM_REPO} utils/data_utils.py question_with_options @ {REFORM_COMMIT[:7]}",
    option_format="({mark}) {text}",
    option_sep="; ",
)
_OPEN_TEMPLATE = PromptTemplate(
    "{question}", f"{REFORM_REPO} the dataset class's question @ {REFORM_COMMIT[:7]}"
)

Row = Mapping[str, Any]


@dataclass(frozen=True)
class Box:
    """The boxes a class's ``draw_bbox`` draws on the image (OpenCV, its colours in order).

    Attributes:
        field: The item field holding them.
        thickness: The line thickness of that class's ``draw_bbox``.
        corners: ``x1, y1, x2, y2`` (IC15, RefCOCO); else ``x, y, w, h``.
        several: The field holds a list of boxes (MOS, RefCOCO); else one box.
        crop: Crop the image to the box instead (TextOCR's ``crop_bbox``).

    """

    field: str
    thickness: int = 0
    corners: bool = False
    several: bool = False
    crop: bool = False


@dataclass(frozen=True)
class ReformSet:
    """One ReForm-Eval dataset as its README runs it.

    Attributes:
        slug: ``reform-eval-<slug>`` is its name.
        title: ReForm-Eval's name for it (README "Data Usage").
        dimension: A key of `DIMENSIONS`.
        files: The released files it reads, relative to the clone (its config's
            ``offline_huggingface_*`` paths without the leading ``ReForm-Eval-Data/``).
        config: ReForm-Eval's config (``build/configs/...yaml``).
        family: A key of `FAMILIES`: which item fields its class reads.
        formulation: ReForm-Eval's formulation (``SingleChoice``, ``Generation``,
            ``OCROpenEnded``, ``KIEOpenEnded``), as its README's command gives it.
        source: The dataset class (``build/...py``).
        instruction: Entry 0 of the class's generation instruction list, where the class
            asks it as the question (``{}`` filled with the item's text where it has one).
        instruct: Entry 0 of the class's generation instruction list, where the class sets it
            as the sample's ``instruct`` (its preprocessors put it before the question); CLEVR
            reads its list from the released file instead.
        instructs: The class's whole generation instruction list (5 wordings) where it sets
            them as ``instruct``: duplicate ``r`` asks entry ``r % 5`` (``random_instruct``).
        likelihood_instructs: The list the class switches to under likelihood inference.
        questions: The class's generation list where it asks its instruction as the question
            (``{}`` filled per item), rotated as `instructs` are.
        likelihood_questions: The question list the class switches to under likelihood.
        task: For TDIUC, the question type the config selects (for a few others, which
            variant of its family's reader: ``itm``, ``its``, ``ve``, ``wikihow``, ``vsr``).
        box: Where the class draws boxes on the image before asking (None: it draws none).
        loader: ReForm-Eval's ``--dataset_name`` for it (README "Data Usage").
        notes: Sentences ``data show`` prints.

    """

    slug: str
    title: str
    dimension: str
    files: tuple[str, ...]
    config: str
    family: str
    formulation: str
    source: str
    instruction: str = ""
    instruct: str = ""
    instructs: tuple[str, ...] = ()
    likelihood_instructs: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    likelihood_questions: tuple[str, ...] = ()
    task: str = ""
    box: Box | None = None
    loader: str = ""
    notes: tuple[str, ...] = ()


# Instruction lists several of ReForm-Eval's dataset classes share, word for word: one copy each,
# named by the datasets' definitions (`ReformSet.instructs` / `likelihood_instructs`).

# build/VQA/vqa_dataset.py's VQA class (and the classes built on it)
VQA_INSTRUCTS: tuple[str, ...] = (
    "Please analyze the image and the question, then select the correct option.",
    "Take a close look at the image and question, and then choose the correct option.",
    "Examine both the image and the question before selecting the right option.",
    "Carefully analyze the image and question and then pick the correct option.",
    "Evaluate the image and question thoroughly before making your selection.",
)
VQA_LIKELIHOOD_INSTRUCTS: tuple[str, ...] = (
    "Assess this image and provide an answer to the question.",
    "Take a look at this image and give your thoughts on the question.",
    "Please investigate this image and share your response to the question.",
    "Analyze this image and answer the question.",
    "Your task is to analyze this picture and respond to the question.",
)

# the single-choice classification classes (CIFAR-10, Flowers102, ImageNet-1K, Pets37,
# MSCOCO-OC, TDIUC, VizWiz)
CHOICE_INSTRUCTS: tuple[str, ...] = (
    'Below I will give a question, a picture and options, which are ABCD or 1234, I need you to output only the correct option(such as "(A)" or "(1)")',
    "To answer the question, you can evaluate the picture and choose the accurate answer among the given options.",
    'From the options provided, choose the answer option that fits the question and image formatted as "(A)" or "(1)".',
    'Select the best answer choice for the given question and image, output the correct option(such as "(A)" or "(1)")',
    'Please select the appropriate response option by assessing the question, image, and provided choices. Output the correct option in the format of "(A)" or "(1)".',
)
CHOICE_LIKELIHOOD_INSTRUCTS: tuple[str, ...] = (
    "Please evaluate this image and offer a response to the question.",
    "Take a look at this image and give your thoughts on the question.",
    "Assess this image and provide an answer to the question.",
    "Please investigate this image and share your response to the question.",
    "Your task is to analyze this picture and respond to the question.",
)

# the multi-turn and spatial classes (MP3D, MSCOCO GOI/MCI/MOS, VisDial, VQA-MT, VSR)
DIALOGUE_INSTRUCTS: tuple[str, ...] = (
    "Answer the following questions based on the image and the conversation history.",
    "Select the correct option for the questions by referring to the provided image and dialogue history.",
    "Utilize the content of the image and conversation to infer the answers to the questions.",
    "Based on the image and previous conversation, answer the questions with the provided options.",
    "Respond to the following questions according to the image and the dialogue history.",
)
DIALOGUE_LIKELIHOOD_INSTRUCTS: tuple[str, ...] = (
    "Answer the following questions based on the image and the conversation history.",
    "Provide answers to the questions by referring to the provided image and dialogue history.",
    "Utilize the content of the image and conversation to infer the answers to the questions.",
    "Based on the image and previous conversation, answer the questions.",
    "Respond to the following questions according to the image and the dialogue history.",
)


# --- reading the release -------------------------------------------------------------------


def _clone(root: Path) -> Path:
    # A clone's root holds huggingface_data/; ReForm-Eval's own layout nests it one deeper.
    nested = root / "ReForm-Eval-Data"
    if not (root / "huggingface_data").is_dir() and (nested / "huggingface_data").is_dir():
        return nested
    return root


def _load_json(path: Path) -> Any:
    if not path.is_file():
        raise DataError(f"{path}: file not found (a clone of {HUB_ID} holds it)")
    return read_json_file(path, what="a ReForm-Eval file")


def _items(path: Path, doc: Any = None) -> list[Any]:
    """The items of a released file: the ``data`` list of its object, or the list itself."""
    if doc is None:
        doc = _load_json(path)
    if isinstance(doc, dict) and "data" in doc:
        doc = doc["data"]
    if not isinstance(doc, list):
        raise DataError(f"{path}: expected a JSON list of items or an object with a 'data' list")
    return doc


def _text(row: Row, field: str) -> str:
    value = row.get(field)
    if not isinstance(value, str) or not value:
        raise RowError(field, f"expected text, got {value!r}")
    return value


def _options(row: Row, field: str) -> list[str]:
    value = row.get(field)
    if not isinstance(value, list) or len(value) < 2:
        raise RowError(field, f"expected a list of at least 2 options, got {value!r}")
    return [str(v) for v in value]


def _index(value: Any, options: Sequence[str], field: str = "answer") -> int:
    # ReForm writes the gold as an int or str(index) (MEDIC's str(item['gt'])), some files as
    # the option text itself.
    if isinstance(value, bool):
        raise RowError(field, f"expected an option index, got {value!r}")
    # ASCII digits only: "²" passes isdigit() and int() refuses it; "٣" is no index.
    number = ascii_integer(value.strip(), signed=False) if isinstance(value, str) else None
    if isinstance(value, int):
        index = value
    elif number is not None:
        index = number
    elif isinstance(value, str) and value in options:
        index = list(options).index(value)
    else:
        raise RowError(field, f"expected an option index or option text, got {value!r}")
    if not 0 <= index < len(options):
        raise RowError(field, f"index {index} is out of range for {len(options)} options")
    return index


def _id(row: Row, *fields: str, default: int) -> str:
    for field in fields:
        value = row.get(field)
        if isinstance(value, int | str) and not isinstance(value, bool) and value != "":
            return str(value)
    return str(default)


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


@dataclass(frozen=True)
class _Item:
    """What a family reader hands the definition: the item and where it is."""

    spec: ReformSet
    row: Row
    ctx: RowContext


_COLORS = ((255, 0, 0), (0, 128, 0), (0, 0, 255), (255, 215, 0))
"""``draw_bbox``'s colours, box by box (RGB: the array is the PIL image's)."""


def _boxed(ref: ImageRef, boxes: Any, box: Box) -> ImageRef:
    """The image with `boxes` drawn as the class's ``draw_bbox`` draws them (OpenCV)."""
    try:
        import cv2
    except ImportError:
        raise DataError(
            "ReForm-Eval draws its region boxes on the image with OpenCV; install it: "
            "pip install opencv-python-headless"
        ) from None
    import numpy as np

    if box.crop:
        if not isinstance(boxes, list | tuple) or len(boxes) != 4:
            raise RowError(box.field, f"expected a box x, y, w, h, got {boxes!r}")
        x, y, w, h = boxes
        image = ref.load().convert("RGB").crop((int(x), int(y), int(x + w), int(y + h)))
        return ImageRef.from_pil(image)
    many = boxes if box.several else [boxes]
    if not isinstance(many, list) or not all(
        isinstance(b, list | tuple) and len(b) == 4 for b in many
    ):
        raise RowError(box.field, f"expected {'boxes' if box.several else 'a box'}, got {boxes!r}")
    if len(many) > len(_COLORS):
        raise RowError(box.field, f"{len(many)} boxes; draw_bbox has colours for {len(_COLORS)}")
    img = np.array(ref.load().convert("RGB"))
    for i, (x, y, w, h) in enumerate(many):
        x2, y2 = (w, h) if box.corners else (x + w, y + h)
        img = cv2.rectangle(img, (int(x), int(y)), (int(x2), int(y2)), _COLORS[i], box.thickness)
    return ImageRef.from_pil(Image.fromarray(img).convert("RGB"))


def _instruct(item: _Item) -> str:
    if item.spec.instruct:
        return item.spec.instruct
    listed = item.row.get("_instructs")  # CLEVR: the file's own list, data['instructs'][:5]
    return str(listed[0]) if isinstance(listed, list) and listed else ""


def _prompt(item: _Item, choice: bool) -> PromptTemplate | None:
    """The sample's whole message as ReForm-Eval's preprocessor builds it.

    The instruct, a space, then ``question_with_options`` (utils/preprocessors.py
    ``preprocess``).
    """
    instruct = _instruct(item)
    if not instruct:
        return None
    main = _CHOICE_TEMPLATE.template if choice else _OPEN_TEMPLATE.template
    return PromptTemplate(_escape(instruct) + " " + main)


def _choice(
    item: _Item,
    question: str,
    options: list[str],
    answer: int,
    questions: tuple[Sequence[str], Sequence[str]] | None = None,
    **meta: Any,
) -> Sample:
    s, ctx = item.spec, item.ctx
    return Sample(
        prompt=_prompt(item, True),
        id=_id(item.row, "question_id", "instance_id", "sample_id", "id", default=ctx.index),
        images=[_image(item)],
        question=question,
        choices=options,
        answer=answer,
        formulation="single_choice",
        metadata=_with_instruct(item, _meta(s, **meta), questions),
    )


def _image(item: _Item) -> ImageRef:
    ref = image_ref(_image_value(item.row), item.ctx)
    box = item.spec.box
    return ref if box is None else _boxed(ref, item.row.get(box.field), box)


def _image_value(row: Row) -> Any:
    for field in ("image", "img", "image_id", "image_base64", "Image_ID", "image_name"):
        if field in row:
            return row[field]
    raise RowError("image", "no image field (image, img, image_id)")


def _meta(s: ReformSet, **extra: Any) -> dict[str, Any]:
    # "subtask" and "dimension" are what the report groups by (its subtask table, dimension
    # by dimension, and each dimension's mean): the paper's per-dataset and per-dimension tables.
    return {
        "dataset": s.title,
        "subtask": s.title,
        "dimension": DIMENSIONS[s.dimension],
        "reform_formulation": s.formulation,
        **{k: v for k, v in extra.items() if v is not None},
    }


def _with_instruct(
    item: _Item,
    meta: dict[str, Any],
    questions: tuple[Sequence[str], Sequence[str]] | None = None,
) -> dict[str, Any]:
    instruct = _instruct(item)
    meta = {**meta, "instruct": instruct} if instruct else meta
    wordings = _wordings(item, questions)
    return {**meta, WORDINGS: wordings} if wordings else meta


def _wordings(
    item: _Item, questions: tuple[Sequence[str], Sequence[str]] | None
) -> dict[str, dict[str, list[str]]]:
    """What a duplicate asks, by part and inference method (`WORDINGS`).

    ``instruct`` and ``question`` each map ``generate`` and ``likelihood`` to the class's
    list: duplicate ``r`` of a run asks entry ``r % len(list)`` (``random_instruct``, as
    ``__getitem__`` indexes it with ``index % duplication``). `questions` is the generation
    and likelihood question list where the class rotates the question (the item's own
    wordings, or the class's list).
    """
    s = item.spec
    out: dict[str, dict[str, list[str]]] = {}
    instructs = list(s.instructs)
    listed = item.row.get("_instructs")  # CLEVR: the file's list, for both methods
    if not instructs and isinstance(listed, list) and listed:
        instructs = [str(x) for x in listed]
    if instructs:
        out["instruct"] = {
            "generate": instructs,
            "likelihood": list(s.likelihood_instructs) or instructs,
        }
    if questions is not None:
        generate, likelihood = questions
        out["question"] = {"generate": list(generate), "likelihood": list(likelihood)}
    return out


# --- the families ---------------------------------------------------------------------------


def _wording(value: Any) -> str:
    # Classes holding several wordings of a question ask entry 0 with random_instruct and
    # --dataset_duplication 1 (index % 1); one text is asked as it is.
    if isinstance(value, list) and value:
        value = value[0]
    if not isinstance(value, str) or not value:
        raise RowError("question", f"expected text or a list of texts, got {value!r}")
    return value


def _qa(item: _Item) -> Sample:
    """The reader of one item layout.

    ``question_id, image, question, answer`` (the option's index), ``answer_options``
    (MSCOCO MCI/GOI/MOS, CLEVR, VSR, MP3D's ``questions``).
    """
    row = item.row
    raw = row.get("question", row.get("questions"))
    question = _wording(raw)
    options = _options(row, "answer_options")
    if item.spec.task == "vsr":
        # build/VSR/spatial_dataset.py ends every option with a period.
        options = [o if o.endswith(".") else o + "." for o in options]
    listed = _listed(raw)
    return _choice(item, question, options, _index(row.get("answer"), options), listed)


def _listed(raw: Any) -> tuple[list[str], list[str]] | None:
    # An item holding several wordings of its question (VSR, MP3D, the OCR sets): duplicate r
    # asks wording r % len (spatial_dataset.py, ocr_dataset.py), whatever the method.
    if isinstance(raw, list) and len(raw) > 1 and all(isinstance(q, str) for q in raw):
        return list(raw), list(raw)
    return None


def _text_index(value: Any, options: Sequence[str], field: str = "answer") -> int:
    # The VQA-family classes' get_options: options.index(answer), the gold is option text
    # (a digit string is a text too: "2" among counting options).
    if not isinstance(value, str) or value not in options:
        raise RowError(field, f"expected one of the options' texts, got {value!r}")
    return list(options).index(value)


def _vqa(item: _Item) -> Sample:
    """The reader of one item layout.

    ``question_id, image_id, question, answer`` (the option's text), ``answer_options``
    (build/VQA/vqa_dataset.py and kvqa_dataset.py's ``context``, build/AOKVQA/qra_dataset.py,
    build/Winoground/caption_selection_dataset.py).
    """
    row, task = item.row, item.spec.task
    options = _options(row, "answer_options")
    question = _text(row, "question")
    if task == "kvqa":  # kvqa_dataset.py: question + f' Context: {context}'
        question += f" Context: {row.get('context')}"
    elif task == "vqra":  # qra_dataset.py: question + f' Rationale: {rationale}'
        question += f" Rationale: {row.get('rationale')}"
    elif task == "winoground":  # caption_selection_dataset.py asks one fixed question
        question = "Which description matches this image?"
    # Winoground asks another fixed question under likelihood inference.
    lik = item.spec.likelihood_questions
    questions = ([question], list(lik)) if lik else None
    return _choice(item, question, options, _text_index(row.get("answer"), options), questions)


def _vqar(item: _Item) -> Sample:
    """A-OKVQAR (build/AOKVQA/qar_dataset.py): the rationale is chosen among its options."""
    row = item.row
    options = _options(row, "rationale_options")
    # The class asks the question with its answer: question + f' Answer: {answer}'.
    question = _text(row, "question") + f" Answer: {row.get('answer')}"
    return _choice(item, question, options, _text_index(row.get("rationale"), options, "rationale"))


def _claim(item: _Item) -> Sample:
    """MOCHEG (build/MOCHEG/mcv_dataset.py): the claim and text evidence make the question."""
    row = item.row
    claim, evidence = _text(row, "claim").strip(), _text(row, "text_evidence").strip()
    options = _options(row, "answer_options")
    question = f"What is the truthfulness of this claim? Claim: {claim} Text Evidence: {evidence}"
    return _choice(item, question, options, _text_index(row.get("answer"), options))


def _bootstrap(item: _Item) -> Sample:
    """The reader of one item layout.

    ``img, gt, options|anno``: the instruction is the question (MEDIC, RefCOCO, MSCOCO
    ITS/ITM, SNLI-VE, WikiHow).
    """
    row, s = item.row, item.spec
    fixed = {"itm": ["no", "yes"], "ve": ["yes", "not sure", "no"]}.get(s.task)
    if fixed is not None:
        options = fixed
    elif s.task == "its":
        options = _options(row, "anno")
    else:
        options = _options(row, "options")
    text = row.get("method") if s.task == "wikihow" else row.get("anno")
    question = s.instruction
    if "{}" in question and not isinstance(text, str):
        raise RowError("anno", f"expected the text the question quotes, got {text!r}")

    def filled(wording: str) -> str:
        return wording.format(text) if "{}" in wording else wording

    question = filled(question)
    generate = [filled(q) for q in s.questions] or [question]
    likelihood = [filled(q) for q in s.likelihood_questions] or generate
    return _choice(
        item, question, options, _index(row.get("gt"), options, "gt"), (generate, likelihood)
    )


def _classify(item: _Item) -> Sample:
    """The reader of one item layout.

    ``id, image, question, answer, options`` (CIFAR10, Flowers102, ImageNet-1K, Pets37,
    VizWiz image quality).
    """
    row = item.row
    options = _options(row, "options")
    return _choice(item, _text(row, "question"), options, _index(row.get("answer"), options))


def _draw(answer: str, pool: Sequence[str], key: str) -> list[str]:
    # make_choices (build/TDIUC/tdiuc_dataset.py, build/MSCOCO/object_counting_dataset.py):
    # yes/no answers get [yes, no]; else 3 distractors from the type's list without the
    # answer, then the answer last. Seeded by the question id (ReForm-Eval's draw is unseeded).
    if answer in ("yes", "no"):
        return ["yes", "no"]
    rest = [c for c in pool if c != answer]
    if len(rest) < 3:
        raise RowError("answer", f"the choice list has {len(rest)} other options, needs 3")
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    return [*random.Random(seed).sample(rest, 3), answer]


def _tdiuc(item: _Item) -> Sample:
    """TDIUC (joined question and annotation; options drawn by `_draw`)."""
    row, s = item.row, item.spec
    answers = row.get("answers")
    if not isinstance(answers, list) or not answers or not isinstance(answers[0], dict):
        raise RowError("answers", f"expected a list of {{'answer': ...}}, got {answers!r}")
    answer = str(answers[0].get("answer"))
    pool = row.get("_choices")
    assert isinstance(pool, list)
    qid = _id(row, "question_id", default=item.ctx.index)
    options = _draw(answer, pool, f"{s.slug}/{qid}")
    return _choice(item, _text(row, "question"), options, options.index(answer))


def _counting(item: _Item) -> Sample:
    """MSCOCO object counting (``Image_ID, Question, Answer``; options drawn by `_draw`)."""
    row, s = item.row, item.spec
    answer = str(row.get("Answer"))
    pool = row.get("_choices")
    assert isinstance(pool, list)
    options = _draw(answer, [str(p) for p in pool], f"{s.slug}/{item.ctx.index + 1}")
    sample = _choice(item, _text(row, "Question"), options, options.index(answer))
    return sample.model_copy(update={"id": str(item.ctx.index + 1)})


def _open(item: _Item, formulation: str, answer: Any) -> Sample:
    row, s, ctx = item.row, item.spec, item.ctx
    question = row.get("question")
    if s.task == "kie" and not isinstance(question, str):
        # The KIE classes ask the item's question as it is: one text.
        raise RowError("question", f"expected text, got {question!r}")
    listed = _listed(question)
    question = _wording(question)
    refs = answer if isinstance(answer, list) else [answer]
    if not refs or not all(isinstance(r, str | int | float) for r in refs):
        raise RowError("answer", f"expected reference text(s), got {answer!r}")
    return Sample(
        id=_id(row, "question_id", "sample_id", default=ctx.index),
        images=[_image(item)],
        question=question,
        answer=[str(r) for r in refs],
        formulation=formulation,
        metadata=_with_instruct(item, _meta(s), listed),
        prompt=_prompt(item, False),
    )


def _ocr(item: _Item) -> Sample:
    """The reader of one item layout.

    ``question_id, image, question, answer_txt`` (IC15, COCO-Text, TextOCR, CUTE80, IIIT5K,
    WordArt, FUNSD, POIE, SROIE; the grounded variants carry ``bbox``).
    """
    kind = "kie" if item.spec.formulation == "KIEOpenEnded" else "ocr"
    return _open(item, kind, item.row.get("answer_txt"))


def _ocr_vqa(item: _Item) -> Sample:
    """The reader of one item layout.

    ``question_id, image_id, question, answer`` (build/OCR/ocr_dataset.py: TextVQA, DocVQA,
    OCR-VQA).
    """
    return _open(item, "ocr", item.row.get("answer"))


def _caption(item: _Item) -> Sample:
    """``img, annos`` (the four caption classes): the instruction is the question."""
    row, s, ctx = item.row, item.spec, item.ctx
    refs = row.get("annos")
    if not isinstance(refs, list) or not refs or not all(isinstance(r, str) for r in refs):
        raise RowError("annos", f"expected reference captions, got {refs!r}")
    return Sample(
        id=str(ctx.index),
        images=[image_ref(_image_value(row), ctx)],
        question=s.instruction,
        answer=refs,
        formulation="caption",
        # The class rotates its list over duplicates; with one duplicate it draws at random
        # (``random.choice``), which the formulator reproduces seeded (`WORDINGS`).
        metadata={
            **_meta(s),
            WORDINGS: {"question": {"generate": list(s.questions)}, "one_duplicate": "random"},
        }
        if s.questions
        else _meta(s),
    )


def _capital(text: str) -> str:
    return text.capitalize()


def _dialogue(item: _Item) -> list[Sample]:
    """The reader of one item layout.

    One VisDial-layout dialog (build/VisDial/visual_dialog_dataset.py, ``capitalize`` on as
    ``load_reform_dataset`` sets it): one sample per round, asked round by round with the
    model's own earlier answers (``--online_multi_round``).
    """
    row, s, ctx = item.row, item.spec, item.ctx
    questions, answers = row["_questions"], row["_answers"]
    image_id = row.get("image_id")
    rounds = row.get("dialog")
    if not isinstance(rounds, list) or not rounds:
        raise RowError("dialog", f"expected a list of rounds, got {type(rounds).__name__}")
    image = image_ref(row.get("image_base64", row.get("image")), ctx, "image_base64")
    out = []
    for j, rnd in enumerate(rounds):
        if not isinstance(rnd, dict):
            raise RowError(f"dialog[{j}]", "expected an object")
        try:
            q = questions[rnd["question"]]
            opts = [_capital(answers[a]) for a in rnd["answer_options"]]
            gold = list(rnd["answer_options"]).index(rnd["answer"])
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise RowError(f"dialog[{j}]", f"bad question/answer index: {exc}") from exc
        q = q.capitalize() if q.endswith("?") else q.capitalize() + "?"
        out.append(
            Sample(
                id=f"{image_id}_{j}",
                images=[image],
                question=q,
                choices=opts,
                answer=gold,
                formulation="single_choice",
                metadata=_with_instruct(item, _meta(s, dialogue_id=str(image_id), round=j)),
                prompt=_prompt(item, True),
            )
        )
    return out


FAMILIES: dict[str, Callable[[_Item], Sample | list[Sample]]] = {
    "qa": _qa,
    "vqa": _vqa,
    "vqar": _vqar,
    "claim": _claim,
    "bootstrap": _bootstrap,
    "classify": _classify,
    "tdiuc": _tdiuc,
    "counting": _counting,
    "ocr": _ocr,
    "ocr_vqa": _ocr_vqa,
    "caption": _caption,
    "dialogue": _dialogue,
}
"""The readers, by the item layout their classes read."""


def _rows(spec: ReformSet, root: Path) -> Iterator[tuple[str, Row]]:
    clone = _clone(root)
    first = clone / spec.files[0]
    if spec.family == "tdiuc":
        # Questions and annotations joined by question id (both sorted by it, then zipped).
        questions = sorted(_items(first), key=lambda q: q["question_id"])
        anns = sorted(_items(clone / spec.files[1]), key=lambda a: a["question_id"])
        doc = _load_json(clone / spec.files[2])
        pool = doc.get("choice") if isinstance(doc, dict) else doc
        if isinstance(pool, list) and pool and isinstance(pool[0], list):
            pool = pool[0]
        for i, (q, a) in enumerate(zip(questions, anns, strict=False)):
            if a.get("question_type") == spec.task:
                yield f"{first}:{i}", {**q, **a, "_choices": pool}
        return
    if spec.family == "counting":
        doc = _load_json(clone / spec.files[1])
        pool = doc.get("choice") if isinstance(doc, dict) else doc
        for i, item in enumerate(_items(first)):
            yield f"{first}:{i}", {**item, "_choices": pool}
        return
    if spec.family == "dialogue":
        doc = _load_json(first)
        data = doc.get("data") if isinstance(doc, dict) else None
        if not isinstance(data, dict) or not isinstance(data.get("dialogs"), list):
            raise DataError(f"{first}: expected data.questions, data.answers, data.dialogs")
        for i, dialog in enumerate(data["dialogs"]):
            row = {**dialog, "_questions": data["questions"], "_answers": data["answers"]}
            yield f"{first}:{i}", row
        return
    doc = _load_json(first)
    # CLEVR's class reads its instruction list from the file: data['instructs'][:5].
    listed = doc.get("instructs") if isinstance(doc, dict) and spec.task == "clevr" else None
    for i, item in enumerate(_items(first, doc)):
        if isinstance(listed, list) and isinstance(item, dict):
            item = {**item, "_instructs": listed[:5]}
        yield f"{first}:{i}", item


SETS: dict[str, ReformSet] = {}
"""Every registered dataset's `ReformSet`, by benchmark name (the parity tests read them)."""


def reform_set(spec: ReformSet) -> Benchmark:
    """Register ``reform-eval-<slug>``: `spec` read from a clone of ReForm-Eval-Data.

    Returns:
        The registered definition.

    """
    if spec.dimension not in DIMENSIONS or spec.family not in FAMILIES:
        raise ValueError(f"reform-eval-{spec.slug}: unknown dimension or family")
    SETS[f"reform-eval-{spec.slug}"] = spec
    reader = FAMILIES[spec.family]

    def to_sample(row: Row, ctx: RowContext) -> Sample | list[Sample]:
        return reader(_Item(spec, row, ctx))

    choice = spec.formulation == "SingleChoice" and spec.family not in ("caption",)
    generation = spec.formulation == "Generation"
    formulation = {
        "SingleChoice": "single_choice",
        "Generation": "caption",
        "OCROpenEnded": "ocr",
        "KIEOpenEnded": "kie",
    }[spec.formulation]
    notes = (
        f"ReForm-Eval dimension: {DIMENSIONS[spec.dimension]}; formulation "
        f"{spec.formulation}; config {spec.config}; class {spec.source}.",
        "Read from a clone of ReForm-Eval-Data (path= or $LMMPROBE_DATA_DIR/reform-eval).",
        UNPINNED,
        *spec.notes,
    )
    if choice:
        notes += (
            "Score as the paper: --matcher reform (generation) or --method likelihood; "
            "instability with --repeats N.",
        )
    return benchmark(
        Benchmark(
            name=f"reform-eval-{spec.slug}",
            title=f"ReForm-Eval {spec.title}",
            citation=CITATION,
            license=LICENSE,
            formulation=formulation,
            metric="CIDEr" if generation else "accuracy",
            prompt=_CHOICE_TEMPLATE if choice else _OPEN_TEMPLATE,
            to_sample=to_sample,
            hub_id=HUB_ID,
            include=spec.files,
            layout="files",
            read_files=lambda root, split: _rows(spec, root),
            reform=DIMENSIONS[spec.dimension],
            copy=COPY,
            notes=notes,
            schema_confirmed=f"{REFORM_REPO} {spec.source} (offline_hf branch) and "
            f"{spec.config} @ {REFORM_COMMIT[:7]}; not checked against the hub files",
        )
    )


def suite_benchmark(
    name: str,
    title: str,
    members: tuple[str, ...],
    dimension: str | None,
    notes: tuple[str, ...],
) -> Benchmark:
    """Register a suite of ReForm-Eval datasets that all read one clone (`COPY`).

    Returns:
        The registered definition.

    """
    return benchmark(
        Benchmark(
            name=name,
            title=title,
            citation=CITATION,
            license=LICENSE,
            formulation="single_choice",
            metric="accuracy",
            prompt=_CHOICE_TEMPLATE,
            to_sample=_suite_row,
            hub_id=HUB_ID,
            layout="files",
            members=members,
            groups=("reform-eval",),
            reform=dimension,
            copy=COPY,
            notes=notes,
            schema_confirmed=f"each member's class, {REFORM_REPO} build/ @ {REFORM_COMMIT[:7]} "
            "(run on fixtures; not checked against the hub files)",
        )
    )


def dimension_suite(slug: str, members: tuple[str, ...]) -> Benchmark:
    """Register ``reform-eval-<slug>``: one dimension's datasets, read from one clone.

    Returns:
        The registered definition.

    """
    return suite_benchmark(
        f"reform-eval-{slug}",
        f"ReForm-Eval {DIMENSIONS[slug]} ({len(members)} datasets)",
        members,
        DIMENSIONS[slug],
        (
            "path=CLONE is one clone of ReForm-Eval-Data, shared by every member.",
            "Break results down with --by dataset.",
            UNPINNED,
        ),
    )


def _suite_row(row: Row, ctx: RowContext) -> Sample:
    raise DataError("a ReForm-Eval suite's members are read, not its rows")
