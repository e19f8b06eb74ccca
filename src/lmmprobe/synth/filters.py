"""Cleaning filters for generated benchmarks, after Dysca (Zhang et al., 2024).

Dysca cleans its generated data in two ways, both reproduced here as pluggable filters whose
settings go into the dataset manifest (`ItemFilter.describe`):

- `ClipScoreFilter`: keep an image only when its CLIP text-image score against the prompt it
  was made from reaches a threshold (Dysca uses CLIP ViT-L/14). Two rules (`CLIP_RULES`):
  ``lmmprobe`` (ours, the default): CLIPScore's (Hessel et al., 2021) cosine similarity × 100,
  clipped at 0, without CLIPScore's 2.5 weight, kept when ≥ the threshold (default 20);
  ``dysca-code``: Dysca's ``image_generate/clean_data.py`` (Benchmark-Dysca/Dysca @ 442ef75):
  the model's ``logits_per_image`` (``logit_scale.exp()`` × cosine, 100 × cosine for CLIP
  ViT-L/14, not clipped), an image dropped when its score is ≤ 25, so kept when > the
  threshold (default 25). Dysca's paper states a threshold in words only; its value is not in
  this project's reference notes and could not be confirmed offline, so it is not offered as a
  preset: pass it with ``--clip-threshold``.
  Any transformers `CLIPModel` folder works; tests use `models.tiny_clip.tiny_clip_path`.
- `ConsensusFilter` / `consensus_failures`: drop the items that every one of K reference models
  answers wrong (Dysca drops what its six best models all miss: such items are more likely
  broken than hard).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from lmmprobe._optional import require
from lmmprobe.schema import Score

if TYPE_CHECKING:
    from PIL import Image

__all__ = [
    "CLIP_RULES",
    "ClipScoreFilter",
    "ConsensusFilter",
    "ItemFilter",
    "consensus_failures",
]

CLIP_RULES: dict[str, float] = {"lmmprobe": 20.0, "dysca-code": 25.0}
"""CLIP-score rules (module docstring) and each one's default threshold."""


@runtime_checkable
class ItemFilter(Protocol):
    """A cleaning step applied to generated items; recorded in the dataset manifest."""

    name: str
    """Short identifier, e.g. ``clip_score`` or ``consensus``."""

    def describe(self) -> dict[str, Any]:
        """Everything needed to redo the filter (name, model identity, thresholds)."""
        ...


# --------------------------------------------------------------------------- CLIP score


class ClipScoreFilter:
    """Keep images whose CLIP similarity to their text reaches a threshold.

    Attributes:
        name: ``"clip_score"``.
        model_path: The CLIP checkpoint folder.
        threshold: Minimum score to keep an item, on the 0-100 scale of `scores`.

    """

    name = "clip_score"

    def __init__(
        self,
        model_path: str | Path,
        threshold: float,
        *,
        device: str | None = None,
        batch_size: int = 16,
        rule: str = "lmmprobe",
    ) -> None:
        """Load a transformers CLIP model and its processor from a local folder.

        Args:
            model_path: Folder holding a `CLIPModel` checkpoint and its `CLIPProcessor`.
            threshold: Minimum score (0-100) for `keep`.
            device: ``cpu``, ``cuda`` or ``cuda:N``; default: CUDA when available.
            batch_size: Image-text pairs embedded per forward pass.
            rule: ``lmmprobe`` or ``dysca-code`` (`CLIP_RULES`, module docstring).

        Raises:
            ValueError: The threshold is outside [0, 100], the batch size is below 1, the
                rule is unknown, or the folder does not hold a CLIP checkpoint.
            FileNotFoundError: The folder does not exist.
            ImportError: torch or transformers is missing (``pip install 'lmmprobe[hf]'``).

        """
        if not 0.0 <= threshold <= 100.0:
            raise ValueError(f"threshold must lie in [0, 100] (CLIP score scale), got {threshold}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if rule not in CLIP_RULES:
            raise ValueError(f"unknown CLIP rule {rule!r} (known: {', '.join(CLIP_RULES)})")
        self.rule = rule
        path = Path(model_path)
        if not path.is_dir():
            raise FileNotFoundError(f"CLIP checkpoint folder not found: {path}")
        require("torch", "transformers", extra="hf", purpose="the CLIP score filter")
        import torch
        from transformers import CLIPModel, CLIPProcessor

        from lmmprobe.models.hf import weights_fingerprint

        try:
            # Any: transformers' loaders are loosely typed, and mypy would narrow to them.
            self._model: Any = cast(Any, CLIPModel.from_pretrained(path))
            self._processor: Any = cast(Any, CLIPProcessor.from_pretrained(path))
        except (OSError, ValueError) as exc:
            raise ValueError(
                f"{path} does not hold a CLIP checkpoint and processor: {exc}"
            ) from exc
        self._device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self._model.to(self._device)
        self._model.eval()
        self.model_path = path
        self.threshold = float(threshold)
        self.batch_size = batch_size
        self._fingerprint = weights_fingerprint(path)

    def __repr__(self) -> str:
        return (
            f"ClipScoreFilter({str(self.model_path)!r}, threshold={self.threshold}, "
            f"rule={self.rule!r})"
        )

    def scores(self, images: Sequence[Image.Image], texts: Sequence[str]) -> list[float]:
        """CLIP score of each (image, text) pair under the filter's rule.

        ``lmmprobe``: 100 × max(cosine similarity, 0). ``dysca-code``: the model's
        ``logits_per_image`` for the pair, ``logit_scale.exp()`` × cosine similarity.

        Texts longer than the model's context are truncated (CLIP's own practice).

        Args:
            images: Pictures, any mode (converted to RGB).
            texts: One text per image, e.g. the prompt the image was generated from.

        Returns:
            One score in [0, 100] per pair, in order.

        Raises:
            ValueError: `images` and `texts` differ in length.

        """
        import torch

        if len(images) != len(texts):
            raise ValueError(f"got {len(images)} images but {len(texts)} texts; pass one per image")
        out: list[float] = []
        for start in range(0, len(images), self.batch_size):
            batch_images = [im.convert("RGB") for im in images[start : start + self.batch_size]]
            batch_texts = list(texts[start : start + self.batch_size])
            enc = self._processor(
                text=batch_texts,
                images=batch_images,
                return_tensors="pt",
                padding=True,
                truncation=True,
            ).to(self._device)
            with torch.inference_mode():
                result = self._model(**enc)
            # Normalize again: the forward already does, but the score must not depend on it.
            img = torch.nn.functional.normalize(result.image_embeds.float(), dim=-1)
            txt = torch.nn.functional.normalize(result.text_embeds.float(), dim=-1)
            cos = (img * txt).sum(dim=-1)
            if self.rule == "dysca-code":
                # Dysca reads outputs.logits_per_image[0][0] with one pair per call.
                scale = self._model.logit_scale.detach().exp().float()
                out.extend(float(x) for x in (scale * cos).cpu())
            else:
                out.extend(float(x) for x in (100.0 * cos.clamp(min=0.0)).cpu())
        return out

    def keep(self, images: Sequence[Image.Image], texts: Sequence[str]) -> list[bool]:
        """Whether each pair is kept under the rule.

        ``lmmprobe``: score ≥ threshold; ``dysca-code``: score > threshold (Dysca's code drops a
        score ≤ 25).
        """
        if self.rule == "dysca-code":
            return [s > self.threshold for s in self.scores(images, texts)]
        return [s >= self.threshold for s in self.scores(images, texts)]

    def describe(self) -> dict[str, Any]:
        """Manifest record: filter name, CLIP folder and weights fingerprint, threshold."""
        return {
            "name": self.name,
            "model": str(self.model_path),
            "fingerprint": self._fingerprint,
            "threshold": self.threshold,
            "rule": self.rule,
            "score": (
                "logit_scale.exp() * cos(clip_image, clip_text), kept when > threshold"
                if self.rule == "dysca-code"
                else "100 * max(cos(clip_image, clip_text), 0)"
            ),
        }


# --------------------------------------------------------------------------- consensus


def _answered(row: Score) -> bool:
    # An error is not an answer (DESIGN: errors are never scored as wrong), and a row judged
    # only as part of a corpus (correct None) is neither right nor wrong.
    return row.stage != "error" and row.error_type is None and row.correct is not None


def consensus_failures(scores_by_model: Mapping[str, Sequence[Score]]) -> set[str]:
    """Sample ids that every reference model answered wrong.

    A model answered a sample wrong when it has at least one answered row for it and every
    answered row is wrong (``correct is False``); with repeats, one right answer spares the
    item. Rows that errored (``stage == "error"`` or ``error_type`` set) or carry no verdict
    (``correct is None``) are not answers: an item is dropped only when all K models answered
    it, so a model's error or missing row keeps the item.

    Args:
        scores_by_model: Each reference model's score rows, keyed by model name.

    Returns:
        The ids to drop.

    Raises:
        ValueError: No reference model is given.

    """
    if not scores_by_model:
        raise ValueError("consensus_failures needs the scores of at least one reference model")
    verdicts: list[dict[str, bool]] = []  # per model: sample id -> answered wrong every time
    for rows in scores_by_model.values():
        wrong: dict[str, bool] = {}
        for row in rows:
            if _answered(row):
                wrong[row.sample_id] = wrong.get(row.sample_id, True) and row.correct is False
        verdicts.append(wrong)
    first, *rest = verdicts
    return {
        sid
        for sid, is_wrong in first.items()
        if is_wrong and all(other.get(sid, False) for other in rest)
    }


@dataclass(frozen=True)
class ConsensusFilter:
    """Drop the items every one of K reference models answers wrong (Dysca's model filter).

    Attributes:
        reference_models: Model specs whose answers decide (Dysca uses its six best models).
        formulation: How the reference models were asked (e.g. ``generate``), for the record.
        name: ``"consensus"``.

    """

    reference_models: list[str]
    formulation: str = "generate"
    name: str = field(default="consensus", init=False)

    def __post_init__(self) -> None:
        if not self.reference_models:
            raise ValueError("ConsensusFilter needs at least one reference model")
        if len(set(self.reference_models)) != len(self.reference_models):
            raise ValueError(f"reference_models repeat a model: {self.reference_models}")

    def failures(self, scores_by_model: Mapping[str, Sequence[Score]]) -> set[str]:
        """The ids to drop, from the score rows of exactly this filter's reference models.

        Raises:
            ValueError: A reference model's scores are missing, or scores of another model
                are given.

        """
        given, wanted = set(scores_by_model), set(self.reference_models)
        if given != wanted:
            raise ValueError(
                f"consensus filter: scores given for {sorted(given)} but the reference models "
                f"are {sorted(wanted)}"
            )
        return consensus_failures(scores_by_model)

    def describe(self) -> dict[str, Any]:
        """Manifest record: filter name, reference models, formulation, rule."""
        return {
            "name": self.name,
            "reference_models": list(self.reference_models),
            "formulation": self.formulation,
            "rule": "drop items every reference model answered wrong; errors are not answers",
        }
