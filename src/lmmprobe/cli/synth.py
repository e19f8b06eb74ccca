"""``lmmprobe synth``: generate, inspect and clean synthetic (Dysca-style) benchmarks."""

from __future__ import annotations

import json
import shlex
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn
from rich.table import Table

from lmmprobe.cli._common import (
    DbOption,
    command_name,
    console,
    err_console,
    fail,
    said_when_interrupted,
)

app = typer.Typer(no_args_is_help=True, help="Generate and inspect synthetic benchmarks (Dysca).")


def _split(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


@app.command()
def generate(
    out: Annotated[Path, typer.Option("--out", "-o", help="Dataset folder to write.")],
    n: Annotated[
        int,
        typer.Option(
            "--n",
            help="Metadata items (3 questions each per scenario); recipe dysca: items per group.",
        ),
    ] = 100,
    tasks: Annotated[
        str,
        typer.Option(
            help="Comma-separated subtasks (13); recipe dysca: Dysca's groups (face, animal, "
            "plant, clothes, object, food, landmark, action, celebrity, profession, movie, "
            "tv show, anime, text) [default: all of them]."
        ),
    ] = "",
    recipe: Annotated[
        str,
        typer.Option(
            help="procedural (lmmprobe's subtasks and templates) or dysca (Dysca's metadata "
            "lists, prompt and question templates; needs --renderer diffusion)."
        ),
    ] = "procedural",
    scenarios: Annotated[
        str,
        typer.Option(
            help="Comma-separated: clean, corruption, print_attack, adversarial (either recipe)."
        ),
    ] = "clean",
    renderer: Annotated[
        str, typer.Option(help="procedural (CPU, offline) or diffusion.")
    ] = "procedural",
    diffusion_model: Annotated[
        str | None,
        typer.Option(
            help="diffusers pipeline path or hub id (SDXL / SDXL-Turbo), or tiny: a tiny "
            "random SDXL built here in seconds (noise images), to try a recipe offline."
        ),
    ] = None,
    diffusion_steps: Annotated[
        int | None,
        typer.Option(help="Denoising steps [default: 4 for turbo-like models, else 30]."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the whole set.")] = 0,
    size: Annotated[
        int | None,
        typer.Option(help="Image (frame) side in pixels [default: 512; 256 with --video]."),
    ] = None,
    severity: Annotated[int, typer.Option(help="Corruption severity 1-5.")] = 3,
    proxy: Annotated[
        str | None, typer.Option(help="hf model attacked by PGD for the adversarial scenario.")
    ] = None,
    # Defaults said as fractions: their floats (0.03137254901960784) crop at 80 columns.
    epsilon: Annotated[
        float,
        typer.Option(
            help="PGD L-inf bound (pixel scale 0-1) [default: 8/255].", show_default=False
        ),
    ] = 8 / 255,
    step_size: Annotated[
        float, typer.Option(help="PGD step size [default: 2/255].", show_default=False)
    ] = 2 / 255,
    steps: Annotated[int, typer.Option(help="PGD iterations.")] = 10,
    clip_model: Annotated[
        str | None, typer.Option(help="CLIP checkpoint for the text-image consistency filter.")
    ] = None,
    clip_threshold: Annotated[
        float | None,
        typer.Option(
            help="Minimum CLIP score (0-100) to keep "
            "[default: the rule's: 20 for lmmprobe, 25 for dysca-code]."
        ),
    ] = None,
    clip_rule: Annotated[
        str,
        typer.Option(
            help="lmmprobe (100*max(cos,0) >= threshold) or dysca-code (Dysca's clean_data.py: "
            "logits_per_image > threshold)."
        ),
    ] = "lmmprobe",
    ocr_check: Annotated[
        bool | None,
        typer.Option(
            "--ocr-check/--no-ocr-check",
            help="Drop text images a PP-OCR model does not read back (lmmprobe[ocr]) "
            "[default: on for recipe dysca, off for procedural].",
        ),
    ] = None,
    dysca_postprocess: Annotated[
        bool,
        typer.Option(
            "--dysca-postprocess/--no-dysca-postprocess",
            help="Recipe dysca: ask only the questions Dysca's pqa_postprocess.py keeps "
            "(random deletion, 13,000 caps on style/background/color), as its released set.",
        ),
    ] = True,
    workers: Annotated[
        int,
        typer.Option(
            # Each worker is a spawned Python process of some 100 MB; started at most one per
            # chunk and 4 per CPU (`lmmprobe.synth.generate.worker_count`).
            min=1,
            max=256,
            help="Worker processes (started: at most one per chunk of 32 items and 4 per CPU).",
        ),
    ] = 1,
    overwrite: Annotated[
        bool,
        typer.Option(
            help="Replace an existing synthetic-dataset folder (never one holding other files)."
        ),
    ] = False,
    video: Annotated[
        bool,
        typer.Option(
            "--video",
            help="Video clips instead of images: --tasks are the rules direction, order, "
            "color_changes, what_changed; scenarios clean, corruption, print_attack.",
        ),
    ] = False,
) -> None:
    """Generate a synthetic benchmark: JSONL + PNG images (or MKV clips) + manifest."""
    if video:
        _generate_video(
            out,
            n,
            tasks,
            scenarios,
            seed,
            size,
            severity,
            workers,
            overwrite,
            image_only={
                "--recipe": recipe != "procedural",
                "--renderer": renderer != "procedural",
                "--diffusion-model": diffusion_model is not None,
                "--diffusion-steps": diffusion_steps is not None,
                "--proxy": proxy is not None,
                "--clip-model": clip_model is not None,
                "--ocr-check": bool(ocr_check),
            },
        )
        return
    size = 512 if size is None else size
    from lmmprobe.synth.dysca_pqa import GROUPS
    from lmmprobe.synth.filters import CLIP_RULES
    from lmmprobe.synth.generate import SynthConfig, out_problem, write_dataset
    from lmmprobe.synth.metadata import SUBTASKS

    try:
        config = SynthConfig(
            n=n,
            seed=seed,
            subtasks=_split(tasks) or (GROUPS if recipe == "dysca" else SUBTASKS),
            scenarios=_split(scenarios),
            size=size,
            severity=severity,
            renderer=renderer,
            diffusion_model=diffusion_model,
            proxy=proxy,
            epsilon=epsilon,
            step_size=step_size,
            steps=steps,
            clip_model=clip_model,
            clip_threshold=CLIP_RULES.get(clip_rule, 20.0)
            if clip_threshold is None
            else clip_threshold,
            clip_rule=clip_rule,
            recipe=recipe,
            diffusion_steps=diffusion_steps,
            ocr_check=recipe == "dysca" if ocr_check is None else ocr_check,
            dysca_postprocess=dysca_postprocess,
        )
    except ValueError as exc:
        fail(exc)
    start = time.perf_counter()
    with (
        said_when_interrupted(_nothing_written(out)),
        _sigterm_as_interrupt(),
        Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        ) as progress,
    ):
        task = progress.add_task("items", total=None)
        try:
            manifest = write_dataset(
                config,
                out,
                workers=workers,
                overwrite=overwrite,
                on_progress=lambda done, total: progress.update(task, completed=done, total=total),
            )
        except FileExistsError:
            fail(out_problem(out, overwrite, "--overwrite") or f"{out} exists")
        except (ValueError, OSError, ImportError) as exc:
            fail(exc)
    elapsed = time.perf_counter() - start
    counts = manifest["counts"]
    console.print(
        f"wrote {counts['samples']} samples from {counts['items']} items to {escape(str(out))} "
        f"in {elapsed:.1f} s"
    )
    for f in manifest.get("filters", []):
        if "dropped_items" in f:
            n = f["dropped_items"]
            console.print(f"filter {escape(str(f['name']))}: dropped {n} item{'s' * (n != 1)}")
        elif f.get("name") == "dysca_postprocess":
            # Prose: wrapped between words on a terminal, one line in a log.
            console.print(_postprocess_line(f, counts["samples"]), soft_wrap=True)
    # The command on a line of its own, bare: pasted whole, backticks around it would have the
    # shell run it as a command substitution. Quoted for the shell: a folder with a space
    # (``my bench``) pasted bare is two arguments. One printed line, never wrapped.
    program = shlex.quote(command_name())
    console.print("evaluate with:")
    console.print(
        f"  {program} run --data {shlex.quote(f'synth:{out}')} --by subtask",
        markup=False,
        highlight=False,
        soft_wrap=True,
        no_wrap=True,
    )


def _generate_video(
    out: Path,
    n: int,
    tasks: str,
    scenarios: str,
    seed: int,
    size: int | None,
    severity: int,
    workers: int,
    overwrite: bool,
    image_only: dict[str, bool],
) -> None:
    """``synth generate --video``: clips and rule-made questions (`lmmprobe.synth.video`)."""
    from lmmprobe.synth.generate import out_problem
    from lmmprobe.synth.video import RULES, VideoSynthConfig, write_video_dataset

    given = [flag for flag, set_ in image_only.items() if set_]
    if given:
        fail(
            f"--video clips are drawn by the procedural renderer: {', '.join(given)} is for images"
        )
    try:
        config = VideoSynthConfig(
            n=n,
            seed=seed,
            rules=_split(tasks) or RULES,
            scenarios=_split(scenarios),
            size=256 if size is None else size,
            severity=severity,
        )
    except ValueError as exc:
        fail(exc)
    start = time.perf_counter()
    with said_when_interrupted(_nothing_written(out)), _sigterm_as_interrupt():
        try:
            manifest = write_video_dataset(config, out, workers=workers, overwrite=overwrite)
        except FileExistsError:
            fail(out_problem(out, overwrite, "--overwrite") or f"{out} exists")
        except (ValueError, OSError, ImportError) as exc:
            fail(exc)
    elapsed = time.perf_counter() - start
    counts = manifest["counts"]
    console.print(
        f"wrote {counts['samples']} samples from {counts['items']} clips to {escape(str(out))} "
        f"in {elapsed:.1f} s"
    )
    program = shlex.quote(command_name())
    console.print("evaluate with:")
    console.print(
        f"  {program} run --data {shlex.quote(f'synth:{out}')} --by subtask",
        markup=False,
        highlight=False,
        soft_wrap=True,
        no_wrap=True,
    )


def _nothing_written(out: Path) -> str:
    """What an interrupted generation keeps (`write_dataset` writes `out` whole or not at all)."""
    return (
        f"nothing was written: {out} is as it was (the work folder beside it is removed); "
        "the same command generates the set again"
    )


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Take SIGTERM (`timeout`, `kill`) as Ctrl-C while inside: the work folder is removed.

    By default SIGTERM ends the process at once, leaving the hidden work folder beside `--out`
    and the workers' semaphores behind.
    """

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _postprocess_line(record: dict[str, Any], samples: int) -> str:
    """Dysca's post-processing in numbers that add up to the `samples` written.

    Questions asked of an item a filter dropped afterwards are not written: "asked 46"
    beside "wrote 45 samples" said nothing of why. A kept question is one sample under each
    scenario shown (``--scenarios clean,corruption``: "9 kept" beside "wrote 18 samples"): the
    line ends on the samples when they are not the questions kept.
    """
    asked, kept = record["questions_asked"], record.get("questions_kept")
    line = f"Dysca's post-processing: asked {asked} of {record['questions_drawn']} questions"
    if kept is not None and kept != asked:
        gone = asked - kept
        where = "was on an item a filter" if gone == 1 else "were on items the filters"
        line += f"; {gone} of them {where} dropped, {kept} kept"
    if samples != (asked if kept is None else kept):
        line += f"; each a sample under every scenario its item is shown in: {samples} samples"
    return line


@app.command()
def show(
    folder: Annotated[Path, typer.Argument(help="A dataset folder made by `synth generate`.")],
) -> None:
    """Counts per subtask, scenario, style and question type, and the generation settings."""
    from lmmprobe.synth.generate import count_samples, load_manifest

    try:
        manifest = load_manifest(folder)
        counts = count_samples(folder)
    except (FileNotFoundError, ValueError) as exc:
        fail(exc)
    cfg = manifest["config"]
    # A video set (`synth generate --video`) has rules, not a recipe.
    recipe = "video clips" if manifest.get("kind") == "video" else cfg.get("recipe", "procedural")
    renderer = manifest["renderer"]
    drawn_by = str(renderer.get("name"))
    if renderer.get("model"):
        # Which pipeline drew the images: a set drawn by `--diffusion-model tiny` (random
        # weights, noise images) read the same as one drawn by SDXL.
        drawn_by += f" ({renderer['model']}" + (
            ": random weights, noise images)" if renderer["model"] == "tiny" else ")"
        )
    scenarios = cfg.get("scenarios")
    shown_scenarios = (
        f", scenarios {', '.join(map(str, scenarios))}" if isinstance(scenarios, list) else ""
    )
    if isinstance(scenarios, list) and "corruption" in scenarios and "severity" in cfg:
        shown_scenarios += f" (severity {cfg['severity']})"
    console.print(
        f"[bold]{escape(str(folder))}[/]: {sum(counts['subtask'].values())} samples, seed "
        f"{cfg['seed']}, {cfg['size']}px, recipe {escape(str(recipe))}, "
        f"renderer {escape(drawn_by)}{escape(shown_scenarios)}"
    )
    for key in ("subtask", "scenario", "style", "question_type"):
        table = Table(title=f"by {key}", box=box.SIMPLE_HEAD)
        table.add_column(key)
        table.add_column("samples", justify="right")
        for value, count in counts[key].items():
            table.add_row(escape(value), str(count))
        console.print(table)
    for f in manifest.get("filters", []):
        # One line per filter, its fields as words (a Python dict's repr before).
        if not isinstance(f, dict):
            console.print(f"filter: {escape(str(f))}")
            continue
        fields = "; ".join(
            f"{k.replace('_', ' ')} {v if isinstance(v, str | int | float) else json.dumps(v)}"
            for k, v in f.items()
            if k != "name"
        )
        console.print(f"filter {escape(str(f.get('name', '?')))}: {escape(fields)}")


@app.command("filter")
def filter_(
    folder: Annotated[Path, typer.Argument(help="A dataset folder made by `synth generate`.")],
    run: Annotated[
        list[str],
        typer.Option("--run", help="Run id of a reference model's evaluation (repeatable)."),
    ],
    db: DbOption = None,
) -> None:
    """Dysca's model-consensus filter: drop questions that every reference model got wrong."""
    from lmmprobe.synth.cleaning import apply_consensus_filter

    try:
        kept, dropped = apply_consensus_filter(folder, run, db=db)
    except (OSError, ValueError, LookupError) as exc:
        fail(exc)
    console.print(f"kept {kept} samples, dropped {dropped} that every reference model missed")
