"""Dysca's released test set: the ``dysca`` benchmark definition.

Origin: Zhang et al., "Dysca: A Dynamic and Scalable Benchmark for Evaluating Perception
Ability of LVLMs", ICLR 2025 (arXiv:2406.18849); code Robin-WZQ/Dysca @ ac202cb (the earlier
repository Benchmark-Dysca/Dysca @ 442ef75 holds the same scripts). Released under the
CreativeML Open RAIL++-M license of its repository; images made with Stable Diffusion XL.

The set is published on Google Drive (the repository's README, "Data download"), which cannot
be reached from here, so the folder layout read is the one Dysca's own scripts write, with
their default names (confirmed from the code, not from the Drive folder):

- the questions: ``Dysca.json``, a JSON list written by ``pqa_generate/pqa_postprocess.py``,
  each entry ``id``, ``images`` (``["images/N.png"]``), ``prompt``, ``negative_prompt``,
  ``instruction``, ``question``, ``answer``, ``question_type`` (``multi choice``, ``true or
  false``, ``image caption``), ``task``, ``options``, ``question_majority`` (the subtask) and
  ``granularity``; a scenario may have its own list, ``Dysca_{scenario}.json``;
- the images of each scenario: ``Dysca/`` (clean, ``image_generate/generate_data.py``: the
  base name of ``images[0]``; ``images[0]`` itself under the copy, as
  ``evaluate_LVLMs/Dysca_compute.py`` joins it, is read too), ``Dysca_corruption/``
  (``corruption.py``: the same names), ``Dysca_print_attack/`` (``print_attack.py``: one image
  per question, ``{id}.png``; questions of the OCR task get none and are skipped, as the
  script skips them) and ``Dysca_adversarial/`` (no script is released: the clean names are
  assumed).

Every question is asked with its own ``instruction``, byte for byte: the options stay in the
published order with the published letters (``fixed_options``), so the prompt a model sees is
the released string. Samples carry Dysca's breakdown keys as metadata: ``subtask`` (the
question majority), ``question_type`` (``multiple_choice``, ``true_false``, ``free_form``),
``scenario``, ``style`` (named by matching the entry's prompt and negative prompt against
Dysca's ``pqa_generate/metadata/Styles.json``, shipped as ``data/dysca_styles.json``, unless the
entry names it) and ``granularity``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from lmmprobe.data.base import DataError
from lmmprobe.data.benchmarks import (
    Benchmark,
    PromptTemplate,
    RowContext,
    RowError,
    benchmark,
    image_ref,
)
from lmmprobe.data.json_stream import first_json_char, iter_json
from lmmprobe.schema import Sample

__all__ = [
    "DYSCA",
    "DYSCA_COMMIT",
    "DYSCA_QUESTION_TYPES",
    "DYSCA_SCENARIOS",
    "dysca_style",
    "read_dysca_release",
]

DYSCA_REPO = "Robin-WZQ/Dysca"
DYSCA_COMMIT = "ac202cbfa09c52cdb994dbc1683e144ebaabceaf"

DYSCA_SCENARIOS: tuple[str, ...] = ("clean", "corruption", "print_attack", "adversarial")
"""Dysca's four scenarios, each a split (``split=all``, the default, reads every one present)."""

IMAGE_FOLDERS: dict[str, str] = {
    "clean": "Dysca",
    "corruption": "Dysca_corruption",
    "print_attack": "Dysca_print_attack",
    "adversarial": "Dysca_adversarial",
}
"""The image folder of each scenario: the default output folders of Dysca's scripts."""

DYSCA_QUESTION_TYPES: dict[str, str] = {
    "multi choice": "multiple_choice",
    "true or false": "true_false",
    "image caption": "free_form",
}
"""Dysca's ``question_type`` values and lmmprobe's names for them (``metadata.question_type``)."""

_SCENARIO = "_dysca_scenario"  # row keys the file reader adds for the row reader
_JSON = "_dysca_json"


def _source(path: str) -> str:
    return f"{DYSCA_REPO} {path} @ {DYSCA_COMMIT[:7]}"


@cache
def _styles() -> tuple[tuple[str, str, str], ...]:
    """(name, the prompt's style tail, negative prompt) of Dysca's styles."""
    text = resources.files("lmmprobe.data.benchmarks").joinpath("data/dysca_styles.json")
    styles = json.loads(text.read_text(encoding="utf-8"))
    # pqa_generate.py Prompt.generate_prompt_pair: the style's prompt with " {}." made "," is
    # appended to the content after ", ".
    return tuple(
        (s["name"], ", " + s["prompt"].replace(" {}.", ","), s["negative_prompt"]) for s in styles
    )


def dysca_style(prompt: str, negative_prompt: str) -> str | None:
    """The Dysca style an entry's diffusion prompt was made with, or None when none fits.

    Dysca's ``pqa_generate.py`` builds ``prompt = content + ", " + style_prompt`` (the style's
    ``{}.`` replaced by ``,``) and takes the style's negative prompt as is; the style is the
    one whose tail and negative prompt both match (no two of Dysca's 57 share both).
    """
    for name, tail, negative in _styles():
        if prompt.endswith(tail) and negative_prompt == negative:
            return name
    return None


def read_dysca_release(root: Path, split: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Entries of Dysca's released set for one scenario (or every scenario present: ``all``).

    Raises:
        DataError: The copy has no question list, a list is not a JSON list of objects, or a
            named scenario's image folder is missing (``all`` skips scenarios without one).

    """
    scenarios = DYSCA_SCENARIOS if split == "all" else (split,)
    present = [
        s
        for s in scenarios
        if (root / IMAGE_FOLDERS[s]).is_dir() or (s == "clean" and (root / "images").is_dir())
    ]
    if split != "all" and not present:
        raise DataError(
            f"benchmark dysca: no {root / IMAGE_FOLDERS[split]}/ (the {split} images); "
            f"fetch the released set with:\n  {DYSCA.fetch}"
        )
    if not present:
        folders = ", ".join(f"{f}/" for f in IMAGE_FOLDERS.values())
        raise DataError(
            f"benchmark dysca: {root} holds none of the image folders {folders}; fetch the "
            f"released set with:\n  {DYSCA.fetch}"
        )
    for scenario in present:
        own = root / f"Dysca_{scenario}.json"
        path = own if own.is_file() else root / "Dysca.json"
        # The released list holds 617,000 questions: read an entry at a time, never whole
        # (once per scenario that shares it).
        for i, entry in _entries(path):
            yield f"{path}[{scenario}]:#{i}", {**entry, _SCENARIO: scenario, _JSON: str(path)}


def _entries(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """Each entry of a question list with its position (from 1), read one at a time.

    Raises:
        DataError: No such file, not a JSON list, or an entry that is not an object (named
            by its position), malformed or past the element bounds (`iter_json`).

    """
    if not path.is_file():
        raise DataError(
            f"benchmark dysca: no {path} (the question list); fetch the released set with:\n  "
            f"{DYSCA.fetch}"
        )
    opener = first_json_char(path)
    if opener == "" and path.stat().st_size:
        # Not empty, so bytes that do not decode: iter_json names the line and byte offset.
        next(iter_json(path), None)
    if opener != "[":
        got = {"{": "a JSON object", "": "nothing"}.get(opener, "not JSON")
        raise DataError(f"{path}: expected a JSON list of entries, got {got}")
    for i, _, entry in iter_json(path):
        if not isinstance(entry, dict):
            raise DataError(f"{path}:#{i}: expected an entry (a JSON object), got {entry!r:.60}")
        yield i, entry


def _text(row: Mapping[str, Any], field: str) -> str:
    value = row.get(field)
    if field not in row:
        raise RowError(field, "missing required field")
    if not isinstance(value, str) or not value.strip():
        raise RowError(field, f"expected non-empty text, got {value!r}")
    return value


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _template(instruction: str, question: str, options: list[str]) -> str:
    """The row's instruction as a template that the loader fills back to the same string.

    The question's first occurrence becomes ``{question}`` and, for a choice question, the
    first ``(A) option`` ... block after it ``{options}``; everything else is kept verbatim.
    """
    start = instruction.find(question)
    if start < 0:
        raise RowError("instruction", "does not contain the entry's question")
    end = start + len(question)
    if not options:
        return _escape(instruction[:start]) + "{question}" + _escape(instruction[end:])
    block = "\n".join(f"({chr(65 + i)}) {o}" for i, o in enumerate(options))
    at = instruction.find(block, end)
    if at < 0:
        raise RowError(
            "instruction", "does not list the entry's options as '(A) text' lines in order"
        )
    return (
        _escape(instruction[:start])
        + "{question}"
        + _escape(instruction[end:at])
        + "{options}"
        + _escape(instruction[at + len(block) :])
    )


def _image(row: Mapping[str, Any], ctx: RowContext, scenario: str) -> Any:
    images = row.get("images")
    if not isinstance(images, list) or not images or not isinstance(images[0], str):
        raise RowError("images", f"expected a list of image paths, got {images!r}")
    name = Path(images[0]).name
    if scenario == "print_attack":
        # print_attack.py writes one image per question, named by the question's id.
        return f"{IMAGE_FOLDERS[scenario]}/{row['id']}.png"
    if scenario == "clean" and ctx.root is not None and (ctx.root / images[0]).is_file():
        return images[0]
    return f"{IMAGE_FOLDERS[scenario]}/{name}"


def _dysca(row: Mapping[str, Any], ctx: RowContext) -> Sample | None:
    scenario = str(row.get(_SCENARIO, ctx.split))
    if "id" not in row:
        raise RowError("id", "missing required field")
    qid = row["id"]
    if isinstance(qid, bool) or not isinstance(qid, int | str) or str(qid) == "":
        raise RowError("id", f"expected a number or text, got {qid!r}")
    kind = _text(row, "question_type")
    if kind not in DYSCA_QUESTION_TYPES:
        raise RowError(
            "question_type", f"expected one of {', '.join(DYSCA_QUESTION_TYPES)}, got {kind!r}"
        )
    qtype = DYSCA_QUESTION_TYPES[kind]
    if scenario == "print_attack" and row.get("task") == "OCR":
        return None  # print_attack.py makes no image for OCR questions
    majority = _text(row, "question_majority")
    instruction = _text(row, "instruction")
    question = _text(row, "question")
    answer = row.get("answer")
    if not isinstance(answer, str):
        raise RowError("answer", f"expected text, got {answer!r}")
    image = image_ref(_image(row, ctx, scenario), ctx, "images")
    style = row.get("style")
    if not isinstance(style, str) or not style:
        prompt, negative = row.get("prompt"), row.get("negative_prompt")
        style = (
            dysca_style(prompt, negative)
            if isinstance(prompt, str) and isinstance(negative, str)
            else None
        )
    granularity = row.get("granularity")
    metadata: dict[str, Any] = {
        "task": row.get("task"),
        "subtask": majority,
        "question_type": qtype,
        "scenario": scenario,
        "granularity": granularity
        if isinstance(granularity, str)
        else ("coarse" if majority in ("style", "background", "color") else "fine"),
        "dysca_id": qid,
    }
    if style is not None:
        metadata["style"] = style
    sid = f"{scenario}/{qid}"
    if qtype == "free_form":
        return Sample(
            id=sid,
            images=[image],
            question=question,
            answer=[answer],
            formulation="free_form",
            metadata=metadata,
            prompt=PromptTemplate(_template(instruction, question, [])),
        )
    options = row.get("options")
    if not isinstance(options, list) or len(options) < 2:
        raise RowError("options", f"expected a list of at least 2 options, got {options!r}")
    if not all(isinstance(o, str) for o in options):
        raise RowError("options", "every option must be text")
    if answer not in options:
        raise RowError("answer", f"{answer!r} is not one of the options {options!r}")
    return Sample(
        id=sid,
        images=[image],
        question=question,
        choices=list(options),
        answer=options.index(answer),
        formulation="single_choice",
        # The released instruction shows the options in this order with these letters.
        metadata={**metadata, "fixed_options": True},
        prompt=PromptTemplate(_template(instruction, question, options)),
    )


DYSCA = benchmark(
    Benchmark(
        name="dysca",
        title="Dysca (released test set)",
        citation="Zhang et al. 2025, Dysca: A Dynamic and Scalable Benchmark for Evaluating "
        "Perception Ability of LVLMs. ICLR 2025, arXiv:2406.18849",
        license="CreativeML Open RAIL++-M (Robin-WZQ/Dysca LICENSE.md)",
        formulation="single_choice",
        metric="dysca_average",
        # Dysca_compute.py's reading (last (x) mark, else last capital, else the nearest choice
        # line by edits): what dysca_average and its three figures are computed from.
        matcher="dysca",
        prompt=PromptTemplate(
            # Each question's own instruction is its template (pqa_postprocess.py writes it);
            # this one is the multiple-choice instruction that script writes.
            template="Question: {question} \n{options}\nHint: Please answer the question and "
            "provide the correct option letter, e.g., (A), (B), (C), (D), at the end. Do not "
            "contain the analysis progress.\nYour answer is:",
            source=_source("pqa_generate/pqa_postprocess.py (instruction)"),
            option_format="({mark}) {text}",
        ),
        to_sample=_dysca,
        fetch=(
            'mkdir -p "$LMMPROBE_DATA_DIR"/dysca && gdown --folder '
            "https://drive.google.com/drive/folders/1WFnqjqIU7N97mj_o92s3ogm2kHchsY1o "
            '-O "$LMMPROBE_DATA_DIR"/dysca'
        ),
        split="all",
        splits=("all", *DYSCA_SCENARIOS),
        size=617_000,
        layout="files",
        read_files=read_dysca_release,
        groups=("dysca",),
        notes=(
            "Dysca's released set (about 617K questions over 4 scenarios, 20 subtasks, 3 "
            "question types) is on Google Drive; the layout read is the one Dysca's scripts "
            "write (Dysca.json, or Dysca_SCENARIO.json, beside Dysca/, Dysca_corruption/, "
            "Dysca_print_attack/, Dysca_adversarial/): it could not be checked against the "
            "Drive folder offline. split=all reads every scenario whose image folder is there; "
            "split=clean|corruption|print_attack|adversarial one.",
            "Every question is asked with its released instruction, byte for byte, options in "
            "their published order. Answers are read with Dysca's rule (--matcher dysca, the "
            "default for this benchmark: last (x) mark, else last capital, else the nearest "
            "option by edit distance); under another --matcher the dysca_* figures are not "
            "given.",
            "dysca_average is Dysca_compute.py's overall 'average': (multiple-choice accuracy + "
            "true/false accuracy + caption score) / 3, each rounded as Dysca rounds them, "
            "counting a question type without questions as 0. Where an instruction lacks "
            "'Choices:' (as pqa_postprocess.py writes multiple-choice ones), Dysca's own code "
            "reads letter X as the option before it; a run reads the letter as the option it "
            "names, and `lmmprobe score OUTPUT --ground-truth Dysca.json` reproduces Dysca's "
            "figure from an output file, that quirk included.",
            "Breakdowns as Dysca's paper: --by subtask,question_type,scenario,style; the report "
            "shows per-subtask and per-scenario accuracy and the sensitivities SQ and SC.",
        ),
        schema_confirmed=_source(
            "pqa_generate/pqa_postprocess.py + evaluate_LVLMs/"
            "Dysca_compute.py + image_generate/*.py (layout: the "
            "scripts' default folders, not the Drive folder)"
        ),
    )
)
