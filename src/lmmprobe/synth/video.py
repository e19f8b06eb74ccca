"""Synthetic video clips with rule-made questions: lmmprobe's own temporal benchmark.

Origin: written for lmmprobe (issue 38), in the spirit of Dysca (Zhang et al., 2024): fresh,
leak-free test data whose ground truth is known by construction, here over time. Each clip is
drawn frame by frame with the procedural renderer (`lmmprobe.imaging.procedural`: its
glyphs, shapes and backgrounds, no style filter) and asks one single-choice question made by
one of four rules (`RULES`):

- ``direction``: one object moves left, right, up or down across the clip; which way?
- ``order``: three objects appear one after another; which appeared first?
- ``color_changes``: one object changes colour 1-4 times; how many times?
- ``what_changed``: partway through, the shapes change colour, kind or number; which?

The sampling guarantee (lmmprobe's, tested): a clip is `SEGMENTS` equal segments of
`FRAMES_PER_SEGMENT` frames at `FPS`; everything but a ``direction`` clip's motion holds
still within a segment, and the states a question is about last a whole segment. A uniform
policy ``frames=N`` with N >= `SEGMENTS` (the default ``frames=8`` included) or ``fps=F`` with
F >= `SEGMENTS` / `CLIP_SECONDS` (2) and ``max_frames`` >= `SEGMENTS` lands at least one
sampled frame in every segment, so the answer can be read from the sampled frames.

Scenarios: ``clean``, ``corruption`` and ``print_attack`` (`lmmprobe.imaging.scenario`),
drawn once per clip from its own stream and applied to every frame with the same parameters
(a corruption's kind, severity and seed; a print attack's text and placement). A
``direction`` clip's corruption is never rotation or shear, which could turn its motion.

Clips are encoded losslessly (FFV1 in Matroska, ``bgr0`` pixels, one thread, FFmpeg's
``bitexact`` flags), so a decoded frame is exactly the rendered one and the same settings give
byte-identical files with the same PyAV/FFmpeg build. Each clip is rendered and written frame
by frame; only the samples' JSON lines travel back from a worker.
"""

from __future__ import annotations

import json
import multiprocessing
import random
from collections import Counter
from collections.abc import Callable, Generator, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from lmmprobe._optional import require
from lmmprobe._version import __version__
from lmmprobe.imaging import procedural, vocab
from lmmprobe.imaging.corruptions import CORRUPTIONS
from lmmprobe.imaging.scenario import RECIPE_SCENARIOS, apply_scenario, draw_scenario
from lmmprobe.synth import generate

__all__ = [
    "CLIP_SECONDS",
    "FPS",
    "FRAMES_PER_SEGMENT",
    "RULES",
    "SEGMENTS",
    "VIDEO_DIR",
    "Clip",
    "VideoSynthConfig",
    "clip_params",
    "clip_row",
    "frame_image",
    "frame_recipe",
    "make_clip",
    "video_path",
    "write_clip",
    "write_video_dataset",
]

RULES: tuple[str, ...] = ("direction", "order", "color_changes", "what_changed")
"""The question rules, in the order clips cycle through them."""

SEGMENTS = 8
"""Equal parts of a clip; the states a question is about each last at least one part."""
FRAMES_PER_SEGMENT = 4
FPS = 8
FRAMES = SEGMENTS * FRAMES_PER_SEGMENT
CLIP_SECONDS = FRAMES / FPS
"""4 seconds: 32 frames at 8 fps."""

VIDEO_DIR = "videos"
CODEC = {"container": "matroska", "codec": "ffv1", "pix_fmt": "bgr0", "threads": 1}
"""How clips are encoded (lossless, deterministic); recorded in the manifest."""

DIRECTIONS: tuple[str, ...] = ("left", "right", "up", "down")
CHANGES: dict[str, str] = {
    "color": "the color of the shapes",
    "shape": "the kind of shape",
    "count": "the number of shapes",
    "size": "the size of the shapes",  # never the answer: a fourth option
}
"""What may change in a ``what_changed`` clip → its option text."""

_GEOMETRIC = frozenset({"rotation", "shear"})
# Cells for several objects, far enough apart that each is its own blob.
_CELLS: tuple[tuple[float, float], ...] = (
    (0.2, 0.3),
    (0.5, 0.3),
    (0.8, 0.3),
    (0.2, 0.72),
    (0.5, 0.72),
    (0.8, 0.72),
)


@dataclass(frozen=True)
class VideoSynthConfig:
    """Everything that decides a synthetic video set's content (recorded in its manifest).

    Attributes:
        n: Clips per scenario; clip ``i`` asks rule ``rules[i % len(rules)]``.
        seed: Seed of the whole set.
        rules: Question rules clips cycle through (`RULES`).
        scenarios: Scenarios each clip is shown under: clean, corruption, print_attack.
        size: Frame side in pixels.
        severity: Corruption severity (1-5).

    """

    n: int = 100
    seed: int = 0
    rules: tuple[str, ...] = RULES
    scenarios: tuple[str, ...] = ("clean",)
    size: int = 256
    severity: int = 3

    def __post_init__(self) -> None:
        problems = []
        if self.n < 1:  # 0 wrote an empty set and suggested running it (re-test 13 #10)
            problems.append(f"n must be at least 1, got {self.n}")
        if not 32 <= self.size <= 1024:
            problems.append(f"size must be in [32, 1024] for video, got {self.size}")
        if not 1 <= self.severity <= 5:
            problems.append(f"severity must be in [1, 5], got {self.severity}")
        bad = [r for r in self.rules if r not in RULES]
        if bad or not self.rules:
            problems.append(f"unknown video rules {bad} (known: {', '.join(RULES)})")
        bad = [s for s in self.scenarios if s not in RECIPE_SCENARIOS]
        if bad or not self.scenarios:
            problems.append(
                f"unknown video scenarios {bad} (known: {', '.join(RECIPE_SCENARIOS)}; "
                "adversarial is for images only)"
            )
        if problems:
            raise ValueError("; ".join(problems))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready settings (tuples as lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Clip:
    """One clip: its objects per frame come from `timeline`, its question from the rest.

    Attributes:
        index: Position in the set (its stream is ``f"{seed}:video:{index}"``).
        seed: The set's seed.
        rule: The question rule (`RULES`).
        size: Frame side in pixels.
        background: Key of `vocab.BACKGROUNDS`.
        render_seed: The renderer's seed (the same background in every frame).
        timeline: Per segment, the objects drawn (``direction``: the start and end positions).
        question: The question text.
        choices: The options, shuffled.
        answer: Index of the right option.
        facts: The ground truth the answer comes from.

    """

    index: int
    seed: int
    rule: str
    size: int
    background: str
    render_seed: int
    timeline: list[list[dict[str, Any]]]
    question: str
    choices: list[str]
    answer: int
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """Stable clip id, shared by its scenario variants."""
        return f"synthv-{self.seed}-{self.index:06d}"


_Made = tuple[list[list[dict[str, Any]]], str, list[str], int, dict[str, Any]]
"""What a rule makes: the timeline, the question, its options, the answer, the facts."""


def _obj(kind: str, name: str, color: str, x: float, y: float, r: float) -> dict[str, Any]:
    return {
        "kind": kind,
        "name": name,
        "color": color,
        "x": round(x, 4),
        "y": round(y, 4),
        "r": round(r, 4),
    }


def _classes(rng: random.Random, k: int) -> list[str]:
    every = sorted({c for group in vocab.GLYPHS.values() for c in group})
    return rng.sample(every, k)


def _shuffled(rng: random.Random, truth: str, others: list[str]) -> tuple[list[str], int]:
    options = [truth, *others]
    rng.shuffle(options)
    return options, options.index(truth)


def _direction(rng: random.Random) -> _Made:
    (cls,) = _classes(rng, 1)
    color = rng.choice(sorted(vocab.COLORS))
    way = rng.choice(DIRECTIONS)
    lo, hi = 0.2, 0.8
    across = 0.5 + rng.uniform(-0.1, 0.1)
    a, b = (hi, lo) if way in ("left", "up") else (lo, hi)
    start = (a, across) if way in ("left", "right") else (across, a)
    end = (b, across) if way in ("left", "right") else (across, b)
    obj = {**_obj("glyph", cls, color, *start, 0.12), "to": [round(end[0], 4), round(end[1], 4)]}
    options, answer = _shuffled(rng, way, [d for d in DIRECTIONS if d != way])
    timeline = [[obj] for _ in range(SEGMENTS)]
    return (
        timeline,
        f"In which direction does the {cls} move?",
        options,
        answer,
        {"direction": way, "class": cls, "color": color},
    )


def _order(rng: random.Random) -> _Made:
    classes = _classes(rng, 4)
    shown, absent = classes[:3], classes[3]
    colors = rng.sample(sorted(vocab.COLORS), 3)
    xs = [0.2, 0.5, 0.8]
    rng.shuffle(xs)
    # Segment 0 is empty and every object has appeared by the last segment.
    appear = sorted(rng.sample(range(1, SEGMENTS - 1), 3))
    objects = [
        _obj("glyph", c, col, x, 0.5 + rng.uniform(-0.15, 0.15), 0.11)
        for c, col, x in zip(shown, colors, xs, strict=True)
    ]
    timeline = [
        [o for o, at in zip(objects, appear, strict=True) if at <= s] for s in range(SEGMENTS)
    ]
    options, answer = _shuffled(rng, shown[0], [*shown[1:], absent])
    facts = {"order": shown, "appear_segments": appear, "colors": colors, "absent": absent}
    return timeline, "Which object appears first in the video?", options, answer, facts


def _color_changes(rng: random.Random) -> _Made:
    (cls,) = _classes(rng, 1)
    changes = rng.randint(1, 4)
    at = set(rng.sample(range(1, SEGMENTS), changes))
    names = sorted(vocab.COLORS)
    colors = [rng.choice(names)]
    for s in range(1, SEGMENTS):
        colors.append(rng.choice([c for c in names if c != colors[-1]]) if s in at else colors[-1])
    x, y = 0.5 + rng.uniform(-0.05, 0.05), 0.5 + rng.uniform(-0.05, 0.05)
    timeline = [[_obj("glyph", cls, c, x, y, 0.25)] for c in colors]
    truth = str(changes)
    options, answer = _shuffled(rng, truth, [str(k) for k in range(1, 5) if k != changes])
    facts = {"changes": changes, "colors": colors, "class": cls}
    return timeline, f"How many times does the {cls} change color?", options, answer, facts


def _what_changed(rng: random.Random) -> _Made:
    what = rng.choice(["color", "shape", "count"])
    shape = rng.choice(vocab.SHAPES)
    color = rng.choice(sorted(vocab.COLORS))
    n = rng.randint(1, 3)
    cells = list(_CELLS)
    rng.shuffle(cells)
    after_shape, after_color, after_n = shape, color, n
    if what == "shape":
        after_shape = rng.choice([s for s in vocab.SHAPES if s != shape])
    elif what == "color":
        after_color = rng.choice([c for c in sorted(vocab.COLORS) if c != color])
    else:
        after_n = rng.choice([k for k in range(1, 5) if k != n])
    at = rng.randint(2, SEGMENTS - 2)

    def layout(kind: str, col: str, k: int) -> list[dict[str, Any]]:
        return [_obj("shape", kind, col, x, y, 0.1) for x, y in cells[:k]]

    before, after = layout(shape, color, n), layout(after_shape, after_color, after_n)
    timeline = [before if s < at else after for s in range(SEGMENTS)]
    options, answer = _shuffled(rng, CHANGES[what], [t for k, t in CHANGES.items() if k != what])
    facts = {
        "changed": what,
        "segment": at,
        "before": [shape, color, n],
        "after": [after_shape, after_color, after_n],
    }
    return timeline, "What changes partway through the video?", options, answer, facts


_RULE_FNS = {
    "direction": _direction,
    "order": _order,
    "color_changes": _color_changes,
    "what_changed": _what_changed,
}


def make_clip(index: int, seed: int, *, rules: tuple[str, ...] = RULES, size: int = 256) -> Clip:
    """Clip `index` of the set with `seed`: rules cycle, everything else is drawn.

    Clip ``i`` depends only on ``(seed, i, rules, size)``: a worker makes any clip alone.

    Raises:
        ValueError: An unknown rule.

    """
    bad = [r for r in rules if r not in RULES]
    if bad or not rules:
        raise ValueError(f"unknown video rules {bad} (known: {', '.join(RULES)})")
    rng = random.Random(f"{seed}:video:{index}")
    rule = rules[index % len(rules)]
    background = rng.choice(sorted(vocab.BACKGROUNDS))
    render_seed = rng.randrange(2**31)
    timeline, question, choices, answer, facts = _RULE_FNS[rule](rng)
    return Clip(
        index, seed, rule, size, background, render_seed, timeline, question, choices, answer, facts
    )


def frame_recipe(clip: Clip, frame: int) -> dict[str, Any]:
    """The procedural recipe of frame `frame` (0-based) of `clip`."""
    if not 0 <= frame < FRAMES:
        raise ValueError(f"frame must be in [0, {FRAMES}), got {frame}")
    objects = []
    for obj in clip.timeline[frame // FRAMES_PER_SEGMENT]:
        if "to" in obj:  # a moving object: linear from its position to `to` over the clip
            f = frame / (FRAMES - 1)
            x = obj["x"] + (obj["to"][0] - obj["x"]) * f
            y = obj["y"] + (obj["to"][1] - obj["y"]) * f
            obj = {**{k: v for k, v in obj.items() if k != "to"}, "x": x, "y": y}
        objects.append(obj)
    return {
        "size": clip.size,
        "seed": clip.render_seed,
        "background": clip.background,
        "style": "none",
        "objects": objects,
    }


def clip_params(clip: Clip, scenario: str, severity: int) -> dict[str, Any]:
    """The clip's recorded scenario parameters (empty for clean), the same for every frame.

    Raises:
        ValueError: An unknown scenario.

    """
    rng = random.Random(f"{clip.seed}:video:{clip.index}:{scenario}")
    wrong = [c for i, c in enumerate(clip.choices) if i != clip.answer]
    if scenario == "corruption" and clip.rule == "direction":
        # Rotating or shearing every frame alike could turn the motion: "right" seen as "up".
        kind = rng.choice([k for k in CORRUPTIONS if k not in _GEOMETRIC])
        return {
            "type": "corruption",
            "kind": kind,
            "severity": severity,
            "seed": rng.randrange(2**31),
        }
    return draw_scenario(scenario, rng, wrong_options=wrong, size=clip.size, severity=severity)


def frame_image(clip: Clip, frame: int, params: dict[str, Any]) -> Image.Image:
    """Frame `frame` of `clip` as encoded: drawn, then its scenario applied."""
    return apply_scenario(procedural.render(frame_recipe(clip, frame)), params)


def video_path(clip: Clip, scenario: str) -> str:
    """Where a clip under a scenario is written, relative to the dataset folder."""
    return f"{VIDEO_DIR}/{clip.index // 1000:04d}/{clip.id}@{scenario}.mkv"


def write_clip(clip: Clip, params: dict[str, Any], path: Path) -> None:
    """Render and encode `clip` frame by frame into `path` (FFV1 in Matroska, deterministic).

    Raises:
        ImportError: PyAV is not installed, with the command that installs it.

    """
    (av,) = require("av", extra="video", purpose="writing synthetic video clips")
    path.parent.mkdir(parents=True, exist_ok=True)
    # bitexact: no random segment UID and no version strings, so equal frames give equal bytes.
    with av.open(str(path), "w", format="matroska", options={"fflags": "+bitexact"}) as out:
        stream = out.add_stream("ffv1", rate=FPS)
        stream.width = stream.height = clip.size
        stream.pix_fmt = "bgr0"  # lossless RGB: decoded frames are the rendered pixels
        stream.codec_context.thread_count = 1
        stream.codec_context.flags |= av.codec.context.Flags.bitexact
        for frame in range(FRAMES):
            image = frame_image(clip, frame, params)
            for packet in stream.encode(av.VideoFrame.from_image(image)):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)


def clip_row(clip: Clip, rel: str, scenario: str, params: dict[str, Any]) -> dict[str, Any]:
    """The clip's question as a JSONL row with a ``video`` field (`lmmprobe.data.video`)."""
    meta: dict[str, Any] = {
        "task": "synth-video",
        "subtask": clip.rule,
        "item": clip.id,
        "scenario": scenario,
        "style": "none",
        "background": clip.background,
        "question_type": "multiple_choice",
        "facts": clip.facts,
    }
    if params.get("type") == "corruption":
        meta.update(corruption=params["kind"], severity=params["severity"])
    elif params.get("type") == "print_attack":
        meta["print_attack"] = params["attack"]
    return {
        "id": f"{clip.id}@{scenario}",
        "video": rel,
        "question": clip.question,
        "choices": clip.choices,
        "answer": clip.answer,
        "formulation": "single_choice",
        "metadata": meta,
    }


@dataclass
class _Chunk:
    lines: list[str] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)


def _make_chunk(job: tuple[VideoSynthConfig, str, list[int]]) -> _Chunk:
    config, out, indices = job
    root = Path(out)
    result = _Chunk()
    counters: dict[str, Counter[str]] = {k: Counter() for k in generate.SAMPLE_KEYS}
    for index in indices:
        clip = make_clip(index, config.seed, rules=config.rules, size=config.size)
        for name in config.scenarios:
            params = clip_params(clip, name, config.severity)
            rel = video_path(clip, name)
            write_clip(clip, params, root / rel)
            row = clip_row(clip, rel, name, params)
            result.lines.append(json.dumps(row, ensure_ascii=False))
            for key, counter in counters.items():
                counter[str(row["metadata"].get(key, "-"))] += 1
    result.counts = {k: dict(c) for k, c in counters.items()}
    return result


def _run_jobs(
    jobs: Iterator[tuple[VideoSynthConfig, str, list[int]]], workers: int
) -> Generator[_Chunk, None, None]:
    if workers <= 1:
        yield from map(_make_chunk, jobs)
        return
    ctx = multiprocessing.get_context("spawn")  # as `generate`: clean workers everywhere
    with ctx.Pool(workers) as pool:
        yield from pool.imap(_make_chunk, jobs)  # in clip order: files independent of workers


def _encoder() -> str:
    from lmmprobe.schema._video_decode import decoder_version

    return decoder_version()


def write_video_dataset(
    config: VideoSynthConfig,
    out: str | Path,
    *,
    workers: int = 1,
    chunk_size: int = 8,
    overwrite: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Generate the clips and their questions into folder `out`; return its manifest.

    The folder holds ``samples.jsonl`` (rows with a ``video`` path, loadable with
    ``--data synth:DIR``), ``videos/`` (``.mkv`` clips) and ``manifest.json``. It is written
    as `lmmprobe.synth.generate.write_dataset` writes images: into a hidden folder renamed
    once complete, by worker processes taking chunks of clips, in clip order.

    Args:
        config: What to generate.
        out: Output folder (created; must be empty or absent unless `overwrite`).
        workers: Worker processes (1: in this process).
        chunk_size: Clips per chunk handed to a worker.
        overwrite: Replace an existing synthetic-dataset folder.
        on_progress: Called with (clips done, clips total) after each chunk.

    Raises:
        FileExistsError: `out` is not a folder this may write (`generate.out_problem`).
        ImportError: PyAV is not installed.

    """
    require("av", extra="video", purpose="writing synthetic video clips")

    def fill(root: Path) -> dict[str, Any]:
        chunks = generate.chunk_indices(config.n, chunk_size)
        count = generate.worker_count(workers, -(-config.n // chunk_size))
        jobs = ((config, str(root), idx) for idx in chunks)
        totals: dict[str, Counter[str]] = {}
        samples = done = 0
        with (root / generate.SAMPLES_FILE).open("w", encoding="utf-8", newline="\n") as jsonl:
            for chunk in _run_jobs(jobs, count):
                for line in chunk.lines:
                    jsonl.write(line + "\n")
                samples += len(chunk.lines)
                for key, counts in chunk.counts.items():
                    totals.setdefault(key, Counter()).update(counts)
                done = min(config.n, done + chunk_size)
                if on_progress:
                    on_progress(done, config.n)
        manifest = {
            "format": generate.FORMAT,
            "kind": "video",
            "lmmprobe": __version__,
            "config": config.to_dict(),
            "renderer": {
                "name": procedural.RENDERER,
                "version": procedural.RENDERER_VERSION,
                "font": generate.FONT,
            },
            "video": {
                **CODEC,
                "fps": FPS,
                "frames": FRAMES,
                "segments": SEGMENTS,
                "seconds": CLIP_SECONDS,
                "encoder": _encoder(),
            },
            "files": {"samples": generate.SAMPLES_FILE, "videos": f"{VIDEO_DIR}/"},
            "counts": {
                "items": config.n,
                "samples": samples,
                **{f"by_{k}": dict(sorted(v.items())) for k, v in sorted(totals.items())},
            },
            "filters": [],
        }
        text = json.dumps(manifest, indent=2) + "\n"
        (root / generate.MANIFEST_FILE).write_text(text, encoding="utf-8")
        return manifest

    return generate.write_folder(out, overwrite, fill)
