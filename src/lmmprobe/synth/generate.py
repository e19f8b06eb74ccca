"""Generate a synthetic benchmark: items → images → questions, streamed to disk or in memory.

Origin: Dysca (Zhang et al., 2024) — unlimited, leak-free test data whose ground truth is known
by construction. Two ways to use it:

- `iter_samples`: samples whose images are lazy recipes (drawn when a model needs them), for
  ``lmmprobe run --data synth``; procedural renderer and recipe scenarios only.
- `write_dataset`: a dataset folder — ``samples.jsonl`` (lmmprobe's JSONL, loadable with
  ``--data synth:DIR``), ``images/`` (PNG), ``dysca.json`` (Dysca's evaluation layout) and
  ``manifest.json`` (settings, renderer, font, filters, counts). Items are made in chunks by
  worker processes and written in item order as they arrive, so memory stays flat at any size
  and the same settings give byte-identical files whatever the number of workers.
"""

from __future__ import annotations

import contextlib
import io
import json
import multiprocessing
import os
import re
import secrets
import shutil
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from lmmprobe._version import __version__
from lmmprobe.data.base import DataError
from lmmprobe.data.files import bounded_lines, open_regular
from lmmprobe.data.jsonl import json_document, read_json_file
from lmmprobe.imaging import procedural, vocab
from lmmprobe.imaging.scenario import apply_scenario
from lmmprobe.schema import ImageRef, Sample
from lmmprobe.synth import scenarios
from lmmprobe.synth.dysca_pqa import GROUPS as DYSCA_GROUPS
from lmmprobe.synth.metadata import SUBTASKS, Item, make_item
from lmmprobe.synth.questions import item_questions

__all__ = [
    "DYSCA_FILE",
    "MANIFEST_FILE",
    "RECIPES",
    "SAMPLES_FILE",
    "SynthConfig",
    "dysca_record",
    "iter_samples",
    "write_dataset",
]

SAMPLES_FILE = "samples.jsonl"
DYSCA_FILE = "dysca.json"
MANIFEST_FILE = "manifest.json"
FORMAT = "lmmprobe-synth/1"

RECIPES: dict[str, str] = {
    "procedural": "lmmprobe's own subtasks, vocabulary and templates (`synth.metadata`, "
    "`synth.questions`); procedural or diffusion images",
    "dysca": "Dysca's metadata lists, prompt templates and question templates "
    "(`synth.dysca_pqa`), drawn by a diffusion pipeline",
}
"""The item recipes of ``synth generate --recipe``: where items, prompts and questions come from."""

FONT = {
    "name": "Noto Emoji (monochrome), weight 400",
    "license": "SIL Open Font License 1.1",
    "source": "npm @fontsource/noto-emoji 5.3.2",
}


@dataclass(frozen=True)
class SynthConfig:
    """Everything that decides a synthetic dataset's content (recorded in its manifest).

    Attributes:
        n: Number of metadata items; each gives 3 questions per scenario it is shown under.
            Recipe ``dysca``: items drawn per Dysca group (its ``--prompt_num``).
        seed: Seed of the whole set.
        subtasks: Subtasks items cycle through (`lmmprobe.synth.metadata.SUBTASKS`); recipe
            ``dysca``: Dysca's groups (`lmmprobe.synth.dysca_pqa.GROUPS`, default all 14).
        scenarios: Scenarios each item is shown under (`lmmprobe.synth.scenarios.SCENARIOS`).
        size: Image side in pixels.
        severity: Corruption severity (1-5; Dysca's settings are 3).
        renderer: ``procedural`` (offline, CPU) or ``diffusion`` (a diffusers pipeline).
        diffusion_model: Pipeline path or hub id for the diffusion renderer.
        proxy: hf model spec attacked by PGD for the adversarial scenario.
        epsilon: PGD L-infinity bound on pixel values in [0, 1].
        step_size: PGD step.
        steps: PGD iterations.
        clip_model: CLIP checkpoint path for the text-image consistency filter (None: off).
        clip_threshold: Items whose clean image scores below this against the prompt are dropped.
        recipe: Where items come from (`RECIPES`): ``procedural`` or ``dysca``.
        diffusion_steps: Denoising steps of the diffusion renderer (None: by model kind).
        clip_rule: How the CLIP filter scores and compares (`lmmprobe.synth.filters.CLIP_RULES`):
            ``lmmprobe`` or Dysca's code, ``dysca-code``.
        ocr_check: Drop scene-text items whose text a PP-OCR model does not read back
            (`lmmprobe.synth.ocr`); needs ``lmmprobe[ocr]``.
        dysca_postprocess: Recipe ``dysca``: ask only the questions Dysca's
            ``pqa_postprocess.py`` keeps (`lmmprobe.synth.dysca_postprocess`).

    """

    n: int = 100
    seed: int = 0
    subtasks: tuple[str, ...] = SUBTASKS
    scenarios: tuple[str, ...] = ("clean",)
    size: int = 512
    severity: int = 3
    renderer: str = "procedural"
    diffusion_model: str | None = None
    proxy: str | None = None
    epsilon: float = 8 / 255
    step_size: float = 2 / 255
    steps: int = 10
    clip_model: str | None = None
    clip_threshold: float = 20.0
    recipe: str = "procedural"
    ocr_check: bool = False
    diffusion_steps: int | None = None
    clip_rule: str = "lmmprobe"
    dysca_postprocess: bool = True

    def __post_init__(self) -> None:
        problems = []
        known = SUBTASKS
        if self.recipe == "dysca":
            known = DYSCA_GROUPS
            if self.subtasks == SUBTASKS:  # the field's default: every group of the recipe
                object.__setattr__(self, "subtasks", DYSCA_GROUPS)
            if self.renderer != "diffusion":
                problems.append(
                    "the dysca recipe draws Dysca's prompts with a diffusion pipeline: pass "
                    "--renderer diffusion --diffusion-model PATH_OR_ID (or --diffusion-model "
                    "tiny: a tiny random SDXL built offline in seconds, noise images, to try "
                    "the recipe)"
                )
        elif self.recipe not in RECIPES:
            problems.append(f"unknown recipe {self.recipe!r} (known: {', '.join(RECIPES)})")
        if self.n < 1:  # 0 wrote an empty set and suggested running it (re-test 13 #10)
            problems.append(f"n must be at least 1, got {self.n}")
        if not 32 <= self.size <= 4096:
            problems.append(f"size must be in [32, 4096], got {self.size}")
        if not 1 <= self.severity <= 5:
            problems.append(f"severity must be in [1, 5], got {self.severity}")
        bad = [s for s in self.subtasks if s not in known]
        if bad or not self.subtasks:
            problems.append(f"unknown subtasks {bad} (known: {', '.join(known)})")
        bad = [s for s in self.scenarios if s not in scenarios.SCENARIOS]
        if bad or not self.scenarios:
            problems.append(f"unknown scenarios {bad} (known: {', '.join(scenarios.SCENARIOS)})")
        if self.clip_rule not in ("lmmprobe", "dysca-code"):
            problems.append(f"clip_rule must be lmmprobe or dysca-code, got {self.clip_rule!r}")
        if self.renderer not in ("procedural", "diffusion"):
            problems.append(f"renderer must be procedural or diffusion, got {self.renderer!r}")
        if self.renderer == "diffusion" and not self.diffusion_model:
            problems.append(
                "the diffusion renderer needs a model (--diffusion-model PATH_OR_ID, or "
                "--diffusion-model tiny: a tiny random SDXL built offline in seconds, noise "
                "images, to try the recipe)"
            )
        if "adversarial" in self.scenarios and not self.proxy:
            problems.append("the adversarial scenario needs a proxy model (--proxy hf:PATH)")
        if problems:
            raise ValueError("; ".join(problems))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready settings (tuples as lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def _wrong_options(sample: Sample) -> list[str]:
    assert sample.choices is not None and isinstance(sample.answer, int)
    return [c for i, c in enumerate(sample.choices) if i != sample.answer]


def _with_scenario(
    samples: list[Sample], params: dict[str, Any], extra: dict[str, Any]
) -> list[Sample]:
    meta: dict[str, Any] = dict(extra)
    if params.get("type") == "corruption":
        meta.update(corruption=params["kind"], severity=params["severity"])
    elif params.get("type") == "print_attack":
        meta["print_attack"] = params["attack"]
    if not meta:
        return samples
    return [s.model_copy(update={"metadata": {**s.metadata, **meta}}) for s in samples]


def iter_samples(config: SynthConfig) -> Iterator[Sample]:
    """Samples with lazily drawn images (procedural renderer, recipe scenarios only).

    Raises:
        ValueError: The config asks for something only `write_dataset` makes (diffusion,
            adversarial images, the CLIP filter).

    """
    if config.renderer != "procedural" or config.clip_model or config.ocr_check:
        raise ValueError(
            "on-the-fly synthetic data uses the procedural renderer without filters; "
            "use `lmmprobe synth generate` for diffusion images, the CLIP filter or the OCR check"
        )
    if "adversarial" in config.scenarios:
        raise ValueError(
            "the adversarial scenario needs a proxy model: make the set with "
            "`lmmprobe synth generate --scenarios ...,adversarial --proxy hf:PATH`"
        )
    for index in range(config.n):
        item = make_item(index, config.seed, subtasks=config.subtasks, size=config.size)
        clean = item_questions(item, scenarios.scenario_ref(item, {}), scenario="clean")
        for name in config.scenarios:
            if not scenarios.applies(item, name):
                continue
            params = scenarios.scenario_params(
                item, name, _wrong_options(clean[0]), config.severity
            )
            ref = scenarios.scenario_ref(item, params)
            yield from _with_scenario(item_questions(item, ref, scenario=name), params, {})


# --- writing a dataset folder -------------------------------------------------------------

# Heavy per-process objects (a diffusion pipeline, the PGD proxy, CLIP), built on first use in
# each worker and kept for its later chunks, keyed by the settings they were built with.
_STATE: dict[tuple[Any, ...], Any] = {}


def _diffusion(config: SynthConfig) -> Any:
    key = ("diffusion", config.diffusion_model, config.diffusion_steps)
    if key not in _STATE:
        from lmmprobe.synth.diffusion import DiffusionRenderer

        assert config.diffusion_model is not None
        _STATE[key] = DiffusionRenderer(config.diffusion_model, steps=config.diffusion_steps)
    return _STATE[key]


def _attacker(config: SynthConfig) -> Any:
    key = ("attacker", config.proxy, config.epsilon, config.step_size, config.steps)
    if key not in _STATE:
        from lmmprobe.synth.adversarial import PGDAttacker, PGDConfig

        assert config.proxy is not None
        pgd = PGDConfig(epsilon=config.epsilon, step_size=config.step_size, steps=config.steps)
        _STATE[key] = PGDAttacker(config.proxy, pgd)
    return _STATE[key]


def _clip(config: SynthConfig) -> Any:
    key = ("clip", config.clip_model, config.clip_threshold, config.clip_rule)
    if key not in _STATE:
        from lmmprobe.synth.filters import ClipScoreFilter

        assert config.clip_model is not None
        _STATE[key] = ClipScoreFilter(
            config.clip_model, config.clip_threshold, rule=config.clip_rule
        )
    return _STATE[key]


def _ocr() -> Any:
    key = ("ocr",)
    if key not in _STATE:
        from lmmprobe.synth.ocr import OcrFilter

        _STATE[key] = OcrFilter()
    return _STATE[key]


def _read_back(image: Image.Image, facts: dict[str, Any]) -> bool:
    return bool(_ocr().keep([image], [str(facts["word"])])[0])


def _drop(result: _Chunk, reason: str) -> None:
    result.dropped[reason] = result.dropped.get(reason, 0) + 1


def _prompt(recipe: dict[str, Any]) -> str:
    from lmmprobe.synth.prompt import build_prompt

    return build_prompt(recipe)


def image_path(item: Item, scenario: str) -> str:
    """Where an item's image under a scenario is written, relative to the dataset folder."""
    # Shards of 1,000 items keep directories small at 100k+ items.
    return f"images/{item.index // 1000:04d}/{item.id}@{scenario}.png"


# Our question types in the vocabulary of Dysca's generator and evaluation code.
DYSCA_QUESTION_TYPES: dict[str, str] = {
    "multiple_choice": "multi choice",
    "true_false": "true or false",
    "free_form": "image caption",
}


def dysca_record(sample: Sample, prompt: str) -> dict[str, Any]:
    """One question in Dysca's evaluation JSON layout, scorable by Dysca's own code.

    ``question_type`` uses Dysca's names (``multi choice``, ``true or false``, ``image
    caption``). ``answer`` is the correct option's text for choice questions (its letter is
    ``answer_letter``) and the reference description for free-form ones. ``instruction`` is
    the text to ask with, laid out as Dysca's released data has it (its README example):
    ``Question: ...``, a ``Choices:`` line, one ``(A) option`` per line, the hint.
    ``Dysca_compute.py`` finds the options by that ``Choices:`` line, so
    ``lmmprobe score OUTPUTS --ground-truth dysca.json`` (and Dysca's script) read answers to
    these questions as Dysca does.
    """
    from lmmprobe.formulate import DYSCA_CHOICE_HINT, formulate
    from lmmprobe.schema import FormulateConfig

    request = formulate(sample, config=FormulateConfig(prompt_style="dysca"))
    kind = str(sample.metadata["question_type"])
    record: dict[str, Any] = {
        "id": sample.id,
        "images": [img.path for img in sample.images],
        "prompt": prompt,
        "instruction": request.prompt,
        "question": sample.question,
        "answer": sample.gold_text,
        "options": list(sample.choices or []),
        "question_type": DYSCA_QUESTION_TYPES.get(kind, kind),
        "question_majority": sample.metadata["subtask"],
        "granularity": sample.metadata["granularity"],
        "scenario": sample.metadata["scenario"],
        "style": sample.metadata["style"],
    }
    if sample.is_choice and request.marks is not None:
        assert request.order is not None and request.options is not None
        lines = "".join(f"({m}) {o}\n" for m, o in zip(request.marks, request.options, strict=True))
        record["instruction"] = f"Question: {sample.question}\nChoices:\n{lines}{DYSCA_CHOICE_HINT}"
        record["options"] = list(request.options)
        record["answer_letter"] = request.marks[request.order.index(int(sample.answer))]  # type: ignore[arg-type]
    return record


def _row(sample: Sample) -> str:
    data: dict[str, Any] = {
        "id": sample.id,
        "images": [img.path for img in sample.images],
        "question": sample.question,
        "choices": sample.choices,
        "answer": sample.answer,
        "formulation": sample.formulation,
        "metadata": sample.metadata,
    }
    return json.dumps({k: v for k, v in data.items() if v is not None}, ensure_ascii=False)


@dataclass
class _Chunk:
    lines: list[str] = field(default_factory=list)
    dysca: list[str] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    adversarial: dict[str, Any] | None = None
    # Dysca recipe: the asked questions of the items the filters kept (each one sample per
    # scenario), so the summary can tell them from those asked of dropped items.
    questions: int = 0


def _save_png(image: Image.Image, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Level 1: most of zlib's size win at a fraction of the default level's time; fixed
    # settings keep the bytes identical run to run.
    image.save(path, format="PNG", compress_level=1)


def _clean_images(config: SynthConfig, items: list[Item]) -> list[Image.Image]:
    if config.renderer == "diffusion":
        return list(_diffusion(config).render([item.recipe for item in items]))
    return [procedural.render(item.recipe) for item in items]


def _make_chunk(job: tuple[SynthConfig, str, list[int]]) -> _Chunk:
    config, out, indices = job
    root = Path(out)
    if config.recipe == "dysca":
        return _make_dysca_chunk(config, root, indices)
    items = [make_item(i, config.seed, subtasks=config.subtasks, size=config.size) for i in indices]
    images = _clean_images(config, items)
    result = _Chunk()
    counters: dict[str, Counter[str]] = {
        k: Counter() for k in ("subtask", "scenario", "style", "question_type")
    }
    for item, clean_image in zip(items, images, strict=True):
        prompt = _prompt(item.recipe)
        if config.clip_model and not _clip(config).keep([clean_image], [prompt])[0]:
            _drop(result, "clip_score")
            continue
        if config.ocr_check and item.subtask == "ocr" and not _read_back(clean_image, item.facts):
            _drop(result, "ocr")
            continue
        clean_questions = item_questions(item, ImageRef(path="x"), scenario="clean")
        wrong = _wrong_options(clean_questions[0])
        for name in config.scenarios:
            if not scenarios.applies(item, name):
                continue
            rel = image_path(item, name)
            extra: dict[str, Any] = {}
            if name == "adversarial":
                attacker = _attacker(config)
                mc = clean_questions[0].model_copy(
                    update={"images": [ImageRef.from_pil(clean_image)]}
                )
                attack = attacker.attack(mc, clean_image, seed=item.recipe["seed"])
                image = attack.image
                params: dict[str, Any] = {}
                # The proxy's identity (with its weights fingerprint) travels with every sample,
                # so results can be split into white-box and transfer rows
                # (`lmmprobe.synth.adversarial.proxy_relation`).
                extra["adversarial"] = attacker.sample_metadata(attack)
                result.adversarial = dict(attacker.identity)
            else:
                params = scenarios.scenario_params(item, name, wrong, config.severity)
                image = apply_scenario(clean_image, params)
            _save_png(image, root / rel)
            ref = ImageRef(path=rel)
            for sample in _with_scenario(item_questions(item, ref, scenario=name), params, extra):
                result.lines.append(_row(sample))
                result.dysca.append(json.dumps(dysca_record(sample, prompt), ensure_ascii=False))
                for key, counter in counters.items():
                    counter[str(sample.metadata[key])] += 1
    result.counts = {k: dict(c) for k, c in counters.items()}
    return result


def _dysca_items(config: SynthConfig) -> tuple[Any, ...]:
    from lmmprobe.synth.dysca_recipe import dysca_items

    return dysca_items(
        config.seed, config.n, tuple(config.subtasks), config.size, config.dysca_postprocess
    )


def _dysca_image_path(item: Any, name: str) -> str:
    return f"images/{item.index // 1000:04d}/{item.id}{name}.png"


def _dysca_scenario(
    config: SynthConfig, root: Path, item: Any, image: Image.Image, name: str, result: _Chunk
) -> list[Sample]:
    """The item's samples under scenario `name`, their images written (`dysca_recipe`)."""
    from lmmprobe.synth import dysca_recipe

    if name == "print_attack":
        # One picture per question, with one of that question's own wrong options on it.
        images: dict[int, ImageRef] = {}
        params: dict[int, dict[str, Any]] = {}
        for k in item.asked:
            params[k] = dysca_recipe.scenario_params(item, name, config.severity, k)
            rel = _dysca_image_path(item, f"-q{k}@{name}")
            _save_png(apply_scenario(image, params[k]), root / rel)
            images[k] = ImageRef(path=rel)
        samples = dysca_recipe.dysca_samples(item, ImageRef(path="-"), scenario=name, images=images)
        return [
            _with_scenario([s], params[k], {})[0]
            for s, k in zip(samples, _asked_with_questions(item), strict=True)
        ]
    extra: dict[str, Any] = {}
    scenario: dict[str, Any] = {}
    if name == "adversarial":
        attacker = _attacker(config)
        first = dysca_recipe.dysca_samples(item, ImageRef.from_pil(image))
        target = next(s for s in first if s.formulation == "single_choice")
        attack = attacker.attack(target, image, seed=item.recipe["seed"])
        picture = attack.image
        extra["adversarial"] = attacker.sample_metadata(attack)
        result.adversarial = dict(attacker.identity)
    else:
        scenario = dysca_recipe.scenario_params(item, name, config.severity)
        picture = apply_scenario(image, scenario)
    rel = _dysca_image_path(item, f"@{name}")
    _save_png(picture, root / rel)
    samples = dysca_recipe.dysca_samples(item, ImageRef(path=rel), scenario=name)
    return _with_scenario(samples, scenario, extra)


def _asked_with_questions(item: Any) -> list[int]:
    return [k for k in item.asked if item.record["q_a"][k]["question"]]


def _dysca_export(sample: Sample, item: Any) -> dict[str, Any]:
    """`dysca_record`, with Dysca's own free-form instruction, ``task`` and negative prompt.

    Free-form questions end in a line ``Your answer is:`` as Dysca's ``pqa_postprocess.py`` writes
    them; true/false ones already read as it writes them; multiple-choice ones keep their
    ``Choices:`` line (docs/definitions.md: Dysca's script writes none, its scorer needs one).
    """
    from lmmprobe.synth.dysca_postprocess import dysca_instruction

    record = dysca_record(sample, item.prompt)
    if record["question_type"] == "image caption":
        record["instruction"] = dysca_instruction(sample.question, "image caption", [])
    record["negative_prompt"] = item.record["negative_prompt"]
    record["task"] = sample.metadata["dysca_task"]
    return record


def _make_dysca_chunk(config: SynthConfig, root: Path, indices: list[int]) -> _Chunk:
    from lmmprobe.synth.dysca_recipe import applies

    every = _dysca_items(config)
    items = [every[i] for i in indices]
    images = _diffusion(config).render([item.recipe for item in items])
    result = _Chunk()
    counters: dict[str, Counter[str]] = {
        k: Counter() for k in ("subtask", "scenario", "style", "question_type")
    }
    for item, image in zip(items, images, strict=True):
        if config.clip_model and not _clip(config).keep([image], [item.prompt])[0]:
            _drop(result, "clip_score")
            continue
        if config.ocr_check and item.text is not None and not _ocr().keep([image], [item.text])[0]:
            _drop(result, "ocr")
            continue
        result.questions += len(_asked_with_questions(item))
        for name in config.scenarios:
            if not applies(item, name):
                continue
            for sample in _dysca_scenario(config, root, item, image, name, result):
                result.lines.append(_row(sample))
                result.dysca.append(json.dumps(_dysca_export(sample, item), ensure_ascii=False))
                for key, counter in counters.items():
                    counter[str(sample.metadata[key])] += 1
    result.counts = {k: dict(c) for k, c in counters.items()}
    return result


def _item_total(config: SynthConfig) -> int:
    return len(_dysca_items(config)) if config.recipe == "dysca" else config.n


def chunk_indices(n: int, size: int) -> Iterator[list[int]]:
    """Item indices ``0..n-1`` in consecutive chunks of `size` (the last one shorter)."""
    for start in range(0, n, size):
        yield list(range(start, min(n, start + size)))


def _vocabulary(config: SynthConfig) -> dict[str, Any]:
    if config.recipe == "dysca":
        from lmmprobe.synth.dysca_pqa import load_metadata

        meta = load_metadata()
        return {
            "source": {k: meta.origin[k] for k in ("repository", "commit", "license")},
            "styles": len(meta.styles),
            "text_templates": len(meta.text_templates),
            **{name: len(values) for name, values in sorted(meta.lists.items())},
        }
    return {
        "glyph_classes": sum(len(g) for g in vocab.GLYPHS.values()),
        "glyph_groups": len(vocab.GLYPHS),
        "shapes": len(vocab.SHAPES),
        "words": len(vocab.WORDS),
        "backgrounds": len(vocab.BACKGROUNDS),
        "styles": len(vocab.STYLES),
        "colors": len(vocab.COLORS),
    }


def _renderer_identity(config: SynthConfig) -> dict[str, Any]:
    if config.renderer == "diffusion":
        identity = {"name": "diffusion", **dict(_diffusion(config).identity)}
        if config.recipe == "dysca":
            identity["prompt"] = "lmmprobe.synth.dysca_pqa (Dysca's prompt templates)"
        return identity
    return {
        "name": procedural.RENDERER,
        "version": procedural.RENDERER_VERSION,
        "font": FONT,
    }


def write_dataset(
    config: SynthConfig,
    out: str | Path,
    *,
    workers: int = 1,
    chunk_size: int = 32,
    overwrite: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Generate the dataset into folder `out` and return its manifest.

    The set is written into a hidden folder beside `out` and renamed to `out` once complete,
    so a generation that fails or is interrupted leaves `out` as it was (and no folder it
    made); a diffusion pipeline is loaded before anything is written.

    Args:
        config: What to generate.
        out: Output folder (created; must be empty or absent unless `overwrite`).
        workers: Worker processes making chunks of items (1: in this process). The diffusion
            renderer always runs in this process (one pipeline on one device).
        chunk_size: Items per chunk handed to a worker.
        overwrite: Replace an existing synthetic-dataset folder (once the new one is
            complete); a folder holding anything else is never replaced.
        on_progress: Called with (items done, items total) after each chunk.

    Raises:
        FileExistsError: `out` is a file, holds anything but a synthetic dataset, or holds
            one and `overwrite` is false (`out_problem`).

    """
    problem = out_problem(Path(out), overwrite)
    if problem:  # before a diffusion pipeline loads for minutes
        raise FileExistsError(problem)
    if config.renderer == "diffusion":
        _diffusion(config)  # a pipeline that cannot load fails here, before any file is made
    return write_folder(
        out, overwrite, lambda root: _write_files(config, root, workers, chunk_size, on_progress)
    )


def write_folder(
    out: str | Path, overwrite: bool, fill: Callable[[Path], dict[str, Any]]
) -> dict[str, Any]:
    """Have `fill` write a dataset into a hidden folder beside `out`, then rename it to `out`.

    A `fill` that fails or is interrupted leaves `out` as it was (and no folder it made).
    Shared by the image (`write_dataset`) and video (`lmmprobe.synth.video`) writers.

    Raises:
        FileExistsError: `out` is a file, holds anything but a synthetic dataset, or holds
            one and `overwrite` is false (`out_problem`).

    """
    root = Path(out)
    problem = out_problem(root, overwrite)
    if problem:
        raise FileExistsError(problem)
    made = _first_missing(root.parent)
    root.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(root)
    work = root.parent / f"{_partial_prefix(root)}{os.getpid()}-{secrets.token_hex(4)}"
    work.mkdir()
    try:
        manifest = fill(work)
        if root.exists():
            shutil.rmtree(root)
        work.rename(root)
    except BaseException:
        # Leave `out` as it was: drop this attempt's files and the folders it created.
        shutil.rmtree(made or work, ignore_errors=True)
        raise
    return manifest


_DATASET_NAMES = frozenset(
    {
        MANIFEST_FILE,
        SAMPLES_FILE,
        DYSCA_FILE,
        "images",
        "videos",
        "samples.unfiltered.jsonl",
        "dysca.unfiltered.json",
    }
)
"""What a synthetic-dataset folder holds: the files `write_dataset` and ``synth filter`` write."""

_FOREIGN_SHOWN = 3
"""Foreign names a refusal lists before ``…``."""


def foreign_files(root: Path) -> list[str]:
    """Up to `_FOREIGN_SHOWN` + 1 names in `root` that no synthetic-dataset writer made.

    A dataset folder holds lmmprobe-synth's manifest (its ``format``), the files beside it
    (`_DATASET_NAMES`) and, under ``images/``, folders of PNG files; links and anything else
    are foreign (a store, notes, a project). An empty list: `root` is a dataset folder.
    """
    found: list[str] = []
    try:
        synth = str(load_manifest(root).get("format", "")).startswith("lmmprobe-synth/")
    except (OSError, ValueError):
        synth = False
    if not synth and os.path.lexists(root / MANIFEST_FILE):
        found.append(MANIFEST_FILE)  # another program's manifest, or a damaged one
    names = sorted(os.listdir(root))
    for name in names:
        path = root / name
        if len(found) > _FOREIGN_SHOWN:
            break
        if name == MANIFEST_FILE:
            continue
        if name not in _DATASET_NAMES or path.is_symlink():
            found.append(name)
        elif name in ("images", "videos"):
            found.extend(_foreign_images(path, _FOREIGN_SHOWN + 1 - len(found)))
        elif not path.is_file():
            found.append(name)
    if not synth and not found:  # a dataset's files without its manifest: not one of ours
        found = names
    return found[: _FOREIGN_SHOWN + 1]


def _foreign_images(images: Path, most: int) -> list[str]:
    """Up to `most` paths under ``images/`` (``videos/``) that are not folders of PNG (MKV) files."""
    suffix = ".mkv" if images.name == "videos" else ".png"
    if not images.is_dir() or images.is_symlink():
        return [images.name]
    found: list[str] = []
    for folder, dirs, files in os.walk(images):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            if path.is_symlink() or (
                name in files and (not name.endswith(suffix) or not path.is_file())
            ):
                found.append(str(path.relative_to(images.parent)))
                if len(found) >= most:
                    return found
    return found


def out_problem(root: Path, overwrite: bool, flag: str = "overwrite=True") -> str | None:
    """Why `write_dataset` would not write to `root`, or None.

    `root` may be absent or an empty folder; with `overwrite`, a synthetic-dataset folder
    (`foreign_files`). Anything else (a store, notes, a project folder) is never replaced.
    `flag` names the overwrite switch in the message (``--overwrite`` on the command line).
    """
    if root.is_symlink():  # replacing it would replace the link, not the folder it names
        return f"{root} is a link, not a dataset folder: name the folder itself"
    if os.path.lexists(root) and not root.is_dir():
        return f"{root} is a file, not a dataset folder: choose another folder"
    if not root.is_dir() or not any(root.iterdir()):
        return None
    foreign = foreign_files(root)
    if foreign:
        names = ", ".join(foreign[:_FOREIGN_SHOWN]) + (
            ", …" if len(foreign) > _FOREIGN_SHOWN else ""
        )
        return (
            f"{root} holds files that are not a synthetic dataset ({names}): choose an empty or "
            "new folder"
        )
    if not overwrite:
        return (
            f"{root} holds a synthetic dataset: pass {flag} to replace it, or choose another folder"
        )
    return None


def _partial_prefix(root: Path) -> str:
    """The name start of `root`'s hidden work folders; the writer's pid and a token follow."""
    return f".{root.name}.partial-"


def remove_stale_partials(out: str | Path) -> list[Path]:
    """Remove the work folders of `out` left by generations whose process is gone; those removed.

    A generation killed outright (SIGKILL, a power cut) cannot clean up after itself; its folder
    names its pid, so the next generation to the same `out` can tell it from a live one's.
    """
    root = Path(out)
    prefix = _partial_prefix(root)
    removed: list[Path] = []
    if not root.parent.is_dir():
        return removed
    for path in root.parent.iterdir():
        pid, _, token = path.name.removeprefix(prefix).partition("-")
        if not path.name.startswith(prefix) or not pid.isdigit() or not token:
            continue
        if path.is_dir() and not path.is_symlink() and not _pid_alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (one of another user counts: leave its folder)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _first_missing(folder: Path) -> Path | None:
    """The outermost of `folder` and its parents that does not exist yet (None: it exists)."""
    missing = None
    for path in (folder, *folder.parents):
        if path.exists():
            break
        missing = path
    return missing


def _write_files(
    config: SynthConfig,
    root: Path,
    workers: int,
    chunk_size: int,
    on_progress: Callable[[int, int], None] | None,
) -> dict[str, Any]:
    """Write the dataset's files into the existing, empty folder `root`; the manifest."""
    if config.renderer == "diffusion" or "adversarial" in config.scenarios:
        workers = 1  # one model on one device; extra processes would each load it
    total = _item_total(config)
    workers = worker_count(workers, -(-total // chunk_size))
    jobs = ((config, str(root), idx) for idx in chunk_indices(total, chunk_size))
    totals: dict[str, Counter[str]] = {}
    dropped: Counter[str] = Counter()
    adversarial: dict[str, Any] | None = None
    done = samples = questions = 0
    with (
        (root / SAMPLES_FILE).open("w", encoding="utf-8", newline="\n") as jsonl,
        (root / DYSCA_FILE).open("w", encoding="utf-8", newline="\n") as dysca,
        # closing: an interruption ends the workers (the pool's exit) before the caller
        # removes the folder they write into.
        contextlib.closing(_run_jobs(jobs, workers)) as chunks,
    ):
        dysca.write("[")
        first = True
        for chunk in chunks:
            for line in chunk.lines:
                jsonl.write(line + "\n")
            for record in chunk.dysca:
                dysca.write(("\n" if first else ",\n") + record)
                first = False
            samples += len(chunk.lines)
            questions += chunk.questions
            for key, counts in chunk.counts.items():
                totals.setdefault(key, Counter()).update(counts)
            dropped.update(chunk.dropped)
            adversarial = chunk.adversarial or adversarial
            done = min(total, done + chunk_size)
            if on_progress:
                on_progress(done, total)
        dysca.write("\n]\n")
    manifest = _manifest(config, totals, dropped, (samples, questions), adversarial, total)
    (root / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def worker_count(asked: int, chunks: int) -> int:
    """The worker processes started: `asked`, at most one per chunk and 4 per CPU.

    A process given no chunk only costs its start-up (seconds, and memory); more than a few
    per CPU only take turns.
    """
    return max(1, min(asked, chunks, 4 * (os.cpu_count() or 1)))


def _run_jobs(
    jobs: Iterator[tuple[SynthConfig, str, list[int]]], workers: int
) -> Generator[_Chunk, None, None]:
    if workers <= 1:
        yield from map(_make_chunk, jobs)
        return
    # spawn: workers start clean (no inherited torch threads or open files) on every platform.
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers) as pool:
        # imap keeps item order, so the files do not depend on which worker finished first.
        yield from pool.imap(_make_chunk, jobs)


def _manifest(
    config: SynthConfig,
    totals: dict[str, Counter[str]],
    dropped: Counter[str],
    written: tuple[int, int],
    adversarial: dict[str, Any] | None,
    total: int,
) -> dict[str, Any]:
    """The manifest; `written` is (samples, Dysca questions of the items the filters kept)."""
    samples, questions = written
    filters: list[dict[str, Any]] = []
    if config.clip_model:
        filters.append(
            {**dict(_clip(config).describe()), "dropped_items": dropped.get("clip_score", 0)}
        )
    if config.ocr_check:
        filters.append({**dict(_ocr().describe()), "dropped_items": dropped.get("ocr", 0)})
    if config.recipe == "dysca" and config.dysca_postprocess:
        items = _dysca_items(config)
        filters.append(
            {
                "name": "dysca_postprocess",
                "reference": "Benchmark-Dysca/Dysca@442ef7565029ca62756bea79138b63c038cfb7e4 "
                "pqa_generate/pqa_postprocess.py",
                "seed": config.seed,
                "questions_drawn": sum(len(i.record["q_a"]) for i in items),
                "questions_asked": sum(len(i.asked) for i in items),
                # Fewer where a filter dropped an item: the samples are these questions.
                "questions_kept": questions,
            }
        )
    return {
        "format": FORMAT,
        "lmmprobe": __version__,
        "config": config.to_dict(),
        "renderer": _renderer_identity(config),
        "vocabulary": _vocabulary(config),
        "files": {"samples": SAMPLES_FILE, "dysca": DYSCA_FILE, "images": "images/"},
        "counts": {
            "items": total - sum(dropped.values()),
            "samples": samples,
            **{f"by_{k}": dict(sorted(v.items())) for k, v in sorted(totals.items())},
        },
        "filters": filters,
        "adversarial_proxy": adversarial,
    }


MAX_MANIFEST_BYTES = 16 << 20
"""The largest manifest read (16 MiB): lmmprobe writes a few kilobytes (settings, vocabulary,
counts, filters)."""

SAMPLE_KEYS = ("subtask", "scenario", "style", "question_type")
"""The metadata keys `count_samples` counts by."""


def _shape_error(path: Path, field: str, expected: str, value: Any) -> DataError:
    got = "nothing (missing or null)" if value is None else type(value).__name__
    return DataError(f"{path}: {field}: expected {expected}, got {got}")


def _check_manifest(path: Path, manifest: Any) -> dict[str, Any]:
    """`manifest` when it has the shape `write_dataset` gives (the fields read back)."""
    if not isinstance(manifest, dict):
        raise _shape_error(path, "(the document)", "an object", manifest)
    for key in ("config", "renderer", "counts"):
        if not isinstance(manifest.get(key), dict):
            raise _shape_error(path, key, "an object", manifest.get(key))
    config = manifest["config"]
    for key in ("seed", "size"):
        if not isinstance(config.get(key), int) or isinstance(config.get(key), bool):
            raise _shape_error(path, f"config.{key}", "an integer", config.get(key))
    if not isinstance(manifest.get("filters", []), list):
        raise _shape_error(path, "filters", "a list", manifest["filters"])
    for i, record in enumerate(manifest.get("filters", [])):
        if not isinstance(record, dict):
            raise _shape_error(path, f"filters[{i}]", "an object", record)
    return manifest


def load_manifest(folder: str | Path) -> dict[str, Any]:
    """Read a dataset folder's manifest, as every outside file is read, and check its shape.

    A folder may come from elsewhere: the manifest is a regular file inside it (a link
    leading out of the folder is refused), at most `MAX_MANIFEST_BYTES`, nested at most 100
    levels (`lmmprobe.data.jsonl.read_json_file`), with the fields lmmprobe reads back.

    Raises:
        FileNotFoundError: No manifest (not a dataset made by `write_dataset`).
        DataError: A manifest that cannot be read or has another shape; one line naming the
            file and the field.

    """
    root = Path(folder)
    path = root / MANIFEST_FILE
    if not os.path.lexists(path):
        raise FileNotFoundError(
            f"{path}: no synthetic-dataset manifest (make one with `lmmprobe synth generate`)"
        )
    manifest = read_json_file(
        path, what="a synthetic-dataset manifest", cap=MAX_MANIFEST_BYTES, within=root
    )
    return _check_manifest(path, manifest)


def read_samples(folder: str | Path) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """``(line number, line, row)`` for each row of a dataset folder's ``samples.jsonl``.

    Read as the data loaders read outside files: a regular file inside the folder, a line at a
    time of at most 64 MiB, each nested at most 100 levels, and each row an object whose
    ``metadata`` (when given) is an object. Blank lines are skipped.

    Raises:
        DataError: One line naming the file, the line and the field.

    """
    root = Path(folder)
    path = root / SAMPLES_FILE
    try:
        raw = open_regular(path, root, what="a synthetic dataset's samples")
    except OSError as exc:
        raise DataError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    # Undecodable bytes are kept as surrogates and refused by line: a decoder error would
    # come from a chunk read ahead, not from the line it is in.
    with io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape") as fh:
        for n, line in enumerate(bounded_lines(fh, path), 1):
            where = f"{path}:{n}"
            if _UNDECODED.search(line):
                raise DataError(f"{where}: not UTF-8 text")
            if not line.strip():
                continue
            row = json_document(where, line)
            if not isinstance(row, dict):
                raise _shape_error(Path(where), "(the row)", "an object", row)
            if not isinstance(row.get("metadata", {}), dict):
                raise _shape_error(Path(where), "metadata", "an object", row["metadata"])
            yield n, line, row


_UNDECODED = re.compile("[\udc80-\udcff]")
"""A byte that is not UTF-8, as ``surrogateescape`` keeps it."""


def tally(
    rows: Iterable[dict[str, Any]], keys: Sequence[str] = SAMPLE_KEYS
) -> dict[str, dict[str, int]]:
    """Count rows per metadata key (``-`` where a row has none)."""
    counts: dict[str, Counter[str]] = {k: Counter() for k in keys}
    for row in rows:
        meta = row.get("metadata", {})
        for k in keys:
            counts[k][str(meta.get(k, "-"))] += 1
    return {k: dict(sorted(c.items())) for k, c in counts.items()}


def count_samples(
    folder: str | Path, keys: Sequence[str] = SAMPLE_KEYS
) -> dict[str, dict[str, int]]:
    """Count a dataset's samples per metadata key, read from its JSONL (true after filtering).

    Raises:
        DataError: As `read_samples`.

    """
    return tally((row for _, _, row in read_samples(folder)), keys)
