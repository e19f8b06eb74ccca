"""An experiment's balanced dataset: N images per answer, seeded, cached by content.

Origin: APEx (Conti et al.). Each answer's tools (one select call, then transforms) make N
images, and the ground truth of an image is the answer whose tools made it; every image is asked
the experiment's question with all answers as options (plus "Unknown" when abstention is
offered).

Image *j* of every answer is composed with the same seed, derived from the campaign seed and
*j* only, so answers that share a select call start from the same picture and differ only by
their transforms (a paired design), and so the same experiment under the same seed gives the
same images in any campaign (what replay relies on). Composed images are stored as PNG under a
content key — the validated calls, seed, renderer, collection and image size — so a repeated
experiment reads them back instead of composing them again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from lmmprobe._version import __version__
from lmmprobe.apex.experiments import DatasetInfo, Experiment
from lmmprobe.data.base import data_fingerprint
from lmmprobe.data.jsonl import read_json_file
from lmmprobe.schema import ImageRef, Sample
from lmmprobe.tools.compose import ToolCall, compose, validate_call
from lmmprobe.tools.select import SelectContext

UNKNOWN = "Unknown"
"""The abstention option's text (lmmprobe's scoring recognizes it as "unknown")."""

_META_CAP = 1 << 20
"""The largest provenance file of the image cache read (1 MiB; lmmprobe writes a few hundred
bytes): the cache folder is outside the store, and anything may have been put there."""


def default_cache_dir() -> Path:
    """``$LMMPROBE_CACHE/apex-images``, else ``~/.cache/lmmprobe/apex-images``."""
    root = os.environ.get("LMMPROBE_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "lmmprobe") / "apex-images"


def image_seed(seed: int, j: int) -> int:
    """The composition seed of image `j` of every answer under campaign seed `seed`."""
    digest = hashlib.sha256(f"lmmprobe.apex:{seed}:{j}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


class ImageCache:
    """Composed images on disk, keyed by everything that decides their pixels."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()

    def key(
        self, select: ToolCall, transforms: Sequence[ToolCall], seed: int, context: SelectContext
    ) -> str:
        """Content key of one composition (hex SHA-256)."""
        parts: dict[str, Any] = {
            "lmmprobe": __version__,
            "select": select.model_dump(mode="json"),
            "transforms": [t.model_dump(mode="json") for t in transforms],
            "seed": seed,
            "renderer": context.renderer_name,
            "collection": context.collection.source if context.collection else None,
            "size": context.size,
        }
        if context.collection is not None:
            # The files as they are now: a collection changed at the same path is a new source,
            # and what was composed from the old one is not shown again. (Only with one: the
            # keys of campaigns without a collection stay as they were.)
            parts["collection_files"] = context.collection.fingerprint()
        blob = json.dumps(parts, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()

    def path(self, key: str) -> Path:
        """Where the PNG of `key` lives (two-level fan-out)."""
        return self.root / key[:2] / f"{key}.png"

    def get(self, key: str) -> tuple[Path, dict[str, Any]] | None:
        """The cached PNG and its provenance, or None."""
        png = self.path(key)
        meta = png.with_suffix(".json")
        if not (png.is_file() and meta.is_file()):
            return None
        try:
            provenance = read_json_file(meta, what="a cached image's provenance", cap=_META_CAP)
        except ValueError:
            return None  # a half-written (or damaged) entry is recomposed
        return (png, provenance) if isinstance(provenance, dict) else None

    def put(self, key: str, image: Image.Image, provenance: dict[str, Any]) -> Path:
        """Store an image and its provenance atomically; returns the PNG path."""
        png = self.path(key)
        png.parent.mkdir(parents=True, exist_ok=True)
        tmp = png.with_suffix(f".{os.getpid()}.tmp")
        image.save(tmp, format="PNG")
        os.replace(tmp, png)
        meta_tmp = png.with_suffix(f".{os.getpid()}.jtmp")
        meta_tmp.write_text(json.dumps(provenance, sort_keys=True), encoding="utf-8")
        os.replace(meta_tmp, png.with_suffix(".json"))
        return png


@dataclass
class ExperimentDataset:
    """The samples of one experiment and how they were made."""

    samples: list[Sample]
    info: DatasetInfo
    images: dict[str, list[ImageRef]] = field(default_factory=dict)
    provenance: list[dict[str, Any]] = field(default_factory=list)


def validated_calls(experiment: Experiment) -> list[tuple[ToolCall, list[ToolCall]]]:
    """Each answer's select and transform calls, validated (defaults filled in).

    Raises:
        ToolCallError: A call names an unknown tool or gives arguments its schema rejects;
            the message names the answer.

    """
    from lmmprobe.tools.registry import ToolCallError

    out = []
    for i, answer in enumerate(experiment.answers):
        where = f"answers[{i}] ({answer.text!r})"
        try:
            select = validate_call(answer.select, "select")
            transforms = [validate_call(t, "transform") for t in answer.transforms]
        except ToolCallError as exc:
            raise ToolCallError(f"{where}: {exc}") from exc
        out.append((select, transforms))
    return out


def build_dataset(
    experiment: Experiment,
    *,
    index: int,
    images_per_answer: int,
    seed: int,
    context: SelectContext,
    cache: ImageCache | None = None,
    unknown_option: bool = False,
) -> ExperimentDataset:
    """Compose the experiment's balanced dataset and turn it into lmmprobe samples.

    Args:
        experiment: A validated experiment.
        index: The experiment's 1-based position (part of sample ids).
        images_per_answer: N, images made per answer.
        seed: Campaign seed; image *j* of every answer uses ``image_seed(seed, j)``.
        context: Renderer, retrieval collection and image size.
        cache: Where composed images are kept; None keeps them in memory only.
        unknown_option: Offer an "Unknown" option for abstention.

    Returns:
        Samples in answer-major order, with the dataset's description.

    Raises:
        ToolCallError: A call is invalid or a tool cannot serve it (the message names the
            answer); the orchestrator can heal this.

    """
    from lmmprobe.tools.registry import ToolCallError

    if images_per_answer < 1:
        raise ValueError(f"images_per_answer must be at least 1, got {images_per_answer}")
    calls = validated_calls(experiment)
    choices = [a.text for a in experiment.answers] + ([UNKNOWN] if unknown_option else [])
    samples: list[Sample] = []
    by_answer: dict[str, list[ImageRef]] = {}
    provenance: list[dict[str, Any]] = []
    notes: list[str] = []
    cached = made = 0
    for i, (answer, (select, transforms)) in enumerate(zip(experiment.answers, calls, strict=True)):
        refs: list[ImageRef] = []
        for j in range(images_per_answer):
            s = image_seed(seed, j)
            hit = None
            key = ""
            if cache is not None:
                key = cache.key(select, transforms, s, context)
                hit = cache.get(key)
            if hit is not None:
                path, prov = hit
                ref = ImageRef.from_path(path)
                cached += 1
            else:
                try:
                    composed = compose(select, transforms, seed=s, context=context)
                except ToolCallError as exc:
                    raise ToolCallError(f"answers[{i}] ({answer.text!r}): {exc}") from exc
                prov = composed.provenance
                made += 1
                if cache is not None:
                    ref = ImageRef.from_path(cache.put(key, composed.image, prov))
                else:
                    ref = ImageRef.from_pil(composed.image)
            note = prov.get("select", {}).get("note")
            if note and note not in notes:
                notes.append(note)
            refs.append(ref)
            provenance.append({"answer": answer.text, "image": j, **prov})
            samples.append(
                Sample(
                    id=f"apex{index}-a{i}-{j}",
                    images=[ref],
                    question=experiment.question,
                    choices=choices,
                    answer=i,
                    formulation="single_choice",
                    metadata={
                        "apex_experiment": index,
                        "apex_answer": answer.text,
                        "class_name": prov.get("select", {}).get("class_name"),
                        "image_seed": s,
                    },
                )
            )
        by_answer[answer.text] = refs
    info = DatasetInfo(
        images_per_answer=images_per_answer,
        seed=seed,
        fingerprint=data_fingerprint(samples),
        image_hashes=[s.images[0].content_hash() for s in samples],
        answers=[a.text for a in experiment.answers],
        unknown_option=unknown_option,
        cached=cached,
        made=made,
        notes=notes[:20],
    )
    return ExperimentDataset(samples, info, by_answer, provenance)
