"""The ``synth`` data source: a generated dataset folder, or a small set made on the fly.

- ``synth:DIR`` reads a folder written by ``lmmprobe synth generate`` (its ``samples.jsonl``,
  validated like any lmmprobe JSONL file).
- ``synth[,n=52,seed=0,size=256,tasks=animal+color,scenario=clean+corruption,severity=3]``
  generates items on the fly with the procedural recipe and renderer (``recipe=procedural``;
  ``recipe=dysca`` needs a diffusion pipeline, so it is refused with the command that makes it); images are lazy recipes drawn only
  when a model looks at them. The default of 52 items asks each of the 13 subtasks 4 times, with
  3 questions per item (multiple choice, true/false, free form).
"""

from __future__ import annotations

from pathlib import Path

from lmmprobe.data.base import DataError, LoadResult, int_option
from lmmprobe.schema import Sample
from lmmprobe.synth.generate import SAMPLES_FILE, SynthConfig, iter_samples
from lmmprobe.synth.metadata import SUBTASKS

__all__ = ["load_synth"]

_OPTIONS = ("n", "seed", "size", "tasks", "scenario", "severity", "recipe")

MAX_ON_THE_FLY = 10_000
"""The most items ``synth,n=`` makes on the fly (30,000 questions under each scenario): they are
held in memory while the run goes; a larger set is written to a folder in chunks
(``lmmprobe synth generate``) and read back as ``synth:DIR``."""


def _list(options: dict[str, str], name: str, default: tuple[str, ...]) -> tuple[str, ...]:
    raw = options.get(name)
    return tuple(s for s in raw.split("+") if s) if raw else default


def load_synth(
    target: str | None, options: dict[str, str], *, strict: bool, limit: int | None
) -> LoadResult:
    """synth[:DIR][,n=52,seed=0,size=256,tasks=a+b,scenario=clean+corruption]  Dysca-style synthetic questions (generated folder, or made on the fly).

    Loads a generated synthetic dataset folder, or generates a small set on the fly. Registered
    as the ``synth`` data source by lmmprobe's entry point in the ``lmmprobe.sources`` group; the
    first docstring line is its summary in ``lmmprobe list sources``.
    """
    from lmmprobe.data.jsonl import load_jsonl

    if target:
        if options:
            raise DataError(f"synth:DIR takes no options (got {sorted(options)})")
        path = Path(target) / SAMPLES_FILE
        if not path.is_file():
            raise DataError(
                f"{target}: not a synthetic dataset folder (no {SAMPLES_FILE}); "
                "make one with `lmmprobe synth generate --out DIR`"
            )
        result = load_jsonl(str(path), {}, strict=strict, limit=limit)
        result.source = f"synth:{target}"
        return result
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise DataError(f"synth source: unknown options {unknown} (known: {', '.join(_OPTIONS)})")
    recipe = options.get("recipe", "procedural")
    if recipe == "dysca":
        # Dysca's items are drawn by a diffusion pipeline, which on-the-fly data does not run.
        raise DataError(
            "synth source: recipe=dysca is not made on the fly (its images come from a "
            "diffusion pipeline): make the set with `lmmprobe synth generate --recipe dysca "
            "--renderer diffusion --diffusion-model PATH_OR_ID --out DIR`, then use synth:DIR"
        )
    if recipe != "procedural":
        raise DataError(f"synth source: unknown recipe {recipe!r} (known: procedural, dysca)")
    n = int_option(options, "n", 4 * len(SUBTASKS), "synth source")
    if n > MAX_ON_THE_FLY:
        raise DataError(
            f"synth source: n={n:,} is more than the {MAX_ON_THE_FLY:,} items made on the fly "
            f"(held in memory); write the set to a folder with `lmmprobe synth generate --n {n} "
            "--out DIR` and use --data synth:DIR"
        )
    try:
        config = SynthConfig(
            n=n,
            seed=int_option(options, "seed", 0, "synth source"),
            size=int_option(options, "size", 256, "synth source"),
            subtasks=_list(options, "tasks", SUBTASKS),
            scenarios=_list(options, "scenario", ("clean",)),
            severity=int_option(options, "severity", 3, "synth source"),
        )
        samples: list[Sample] = []
        for sample in iter_samples(config):
            if limit is not None and len(samples) >= limit:
                break
            samples.append(sample)
    except ValueError as exc:
        raise DataError(f"synth source: {exc}") from exc
    return LoadResult(samples=samples, source="synth")
