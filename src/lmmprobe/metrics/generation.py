"""Reference-based scores of generated text: BARTScore and BERTScore, as HEMM uses them.

HEMM (Liang et al., 2024, "HEMM: Holistic Evaluation of Multimodal Foundation Models") scores
every text-generating task with BARTScore (Yuan et al., 2021, "BARTScore: Evaluating Generated
Text as Text Generation") computed by bart-large-cnn, and normalizes each dataset by the
identity score BARTScore(r, r) of the references with themselves; BERTScore (Zhang et al.,
2020, "BERTScore: Evaluating Text Generation with BERT") is reported alongside.

BARTScore here is the mean log-likelihood per target token that a seq2seq model assigns to the
target text given the source text, ``(1/|y|) * sum_t log p(y_t | y_<t, x)``: a negative number,
higher is better. The direction implemented by default is HEMM's, candidate -> reference (the
model reads the generated text and scores the reference), so BARTScore(r, r) is the natural
ceiling of a dataset; ``direction="reference_to_candidate"`` gives the other one. Target tokens
include the tokenizer's own boundary tokens, as the original implementation does. Any local
seq2seq checkpoint works (``AutoModelForSeq2SeqLM``); for HEMM's numbers pass a local copy of
facebook/bart-large-cnn.

BERTScore is computed by the ``bert-score`` package from a local model folder
(``model_type=<folder>``), never a hub name, with no baseline rescaling and no IDF weighting.

torch, transformers and bert-score are imported inside the functions, so importing
`lmmprobe.metrics` stays light.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lmmprobe.metrics._checkpoints import local_checkpoint, reference_groups, resolve_device

if TYPE_CHECKING:
    import torch

__all__ = [
    "BertScores",
    "bart_identity_scores",
    "bart_score",
    "bert_score",
]

Direction = Literal["candidate_to_reference", "reference_to_candidate"]

_HF_HINT = "pip install 'lmmprobe[hf]'"
_BERT_SCORE_HINT = "pip install 'lmmprobe[holistic]'"


@functools.lru_cache(maxsize=2)
def _load_seq2seq(path: str, device: str) -> tuple[Any, Any]:
    try:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"BARTScore needs transformers ({exc}); run: {_HF_HINT}") from exc
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSeq2SeqLM.from_pretrained(path)
    model.to(device)
    model.eval()
    return tokenizer, model


def _max_length(tokenizer: Any, model: Any) -> int:
    # Tokenizers of some checkpoints report a huge sentinel; the model's positions bound it.
    limit = int(getattr(tokenizer, "model_max_length", 1024) or 1024)
    positions = getattr(model.config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        limit = min(limit, positions)
    return min(limit, 1024)


def bart_score(
    candidates: Sequence[str],
    references: Sequence[str],
    model_path: str | Path,
    *,
    batch_size: int = 8,
    device: str | None = None,
    direction: Direction = "candidate_to_reference",
) -> list[float]:
    """BARTScore of each candidate against its reference (mean target-token log-likelihood).

    Args:
        candidates: Generated texts.
        references: One reference text per candidate.
        model_path: Local seq2seq checkpoint folder (e.g. a copy of facebook/bart-large-cnn).
        batch_size: Pairs scored per forward pass.
        device: Torch device; defaults to CUDA when available, else CPU.
        direction: ``"candidate_to_reference"`` (HEMM's use: log p(reference | candidate)) or
            ``"reference_to_candidate"`` (log p(candidate | reference)).

    Returns:
        One score per pair: the mean log-probability per target token (<= 0, higher is
        better). Texts longer than the model's context are truncated.

    Raises:
        ValueError: The lists differ in length, `batch_size` < 1 or `direction` is unknown.
        FileNotFoundError: `model_path` is not a local checkpoint folder.
        ImportError: torch or transformers is missing.

    """
    if len(candidates) != len(references):
        raise ValueError(
            f"bart_score needs one reference per candidate, got {len(candidates)} candidates "
            f"and {len(references)} references"
        )
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if direction == "candidate_to_reference":
        sources, targets = candidates, references
    elif direction == "reference_to_candidate":
        sources, targets = references, candidates
    else:
        raise ValueError(
            f"unknown direction {direction!r}; use 'candidate_to_reference' or "
            "'reference_to_candidate'"
        )
    if not candidates:
        return []
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"BARTScore needs torch ({exc}); run: {_HF_HINT}") from exc
    dev = resolve_device(device)
    tokenizer, model = _load_seq2seq(
        local_checkpoint(model_path, "model", caller="bart_score"), dev
    )
    max_length = _max_length(tokenizer, model)
    scores: list[float] = []
    with torch.no_grad():
        for start in range(0, len(sources), batch_size):
            src = [str(s) for s in sources[start : start + batch_size]]
            tgt = [str(t) for t in targets[start : start + batch_size]]
            scores.extend(_score_batch(tokenizer, model, src, tgt, max_length, dev))
    return scores


def _score_batch(
    tokenizer: Any, model: Any, src: list[str], tgt: list[str], max_length: int, device: str
) -> list[float]:
    import torch

    enc = tokenizer(
        src, max_length=max_length, truncation=True, padding=True, return_tensors="pt"
    ).to(device)
    dec = tokenizer(
        tgt, max_length=max_length, truncation=True, padding=True, return_tensors="pt"
    ).to(device)
    target: torch.Tensor = dec["input_ids"]
    mask = dec["attention_mask"].to(torch.float64)
    # -100 marks padding: the model builds its (right-shifted) decoder inputs from the labels
    # and treats -100 as padding there too.
    labels = target.masked_fill(dec["attention_mask"] == 0, -100)
    out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], labels=labels)
    logprobs = torch.log_softmax(out.logits.to(torch.float64), dim=-1)
    token_lp = logprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    per_pair = (token_lp * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
    return [float(x) for x in per_pair.cpu()]


def bart_identity_scores(
    references: Sequence[str],
    model_path: str | Path,
    *,
    batch_size: int = 8,
    device: str | None = None,
) -> list[float]:
    """BARTScore(r, r) of each reference with itself: HEMM's per-dataset ceiling.

    HEMM normalizes a dataset's BARTScores by min-max with the maximum set to the identity
    score; a dataset's score is a mean over its samples, so its maximum is the mean of these
    values (pass it to `lmmprobe.holistic.normalize_scores` as that dataset's maximum).

    Args:
        references: Reference texts.
        model_path: Local seq2seq checkpoint folder.
        batch_size: Texts scored per forward pass.
        device: Torch device; defaults to CUDA when available, else CPU.

    Returns:
        One identity score per reference.

    """
    return bart_score(references, references, model_path, batch_size=batch_size, device=device)


@dataclass(frozen=True, slots=True)
class BertScores:
    """Per-pair BERTScore precision, recall and F1.

    Attributes:
        precision: Mean over candidate tokens of the best cosine similarity to a reference token.
        recall: Mean over reference tokens of the best cosine similarity to a candidate token.
        f1: Harmonic mean of the two (the number usually reported).

    """

    precision: list[float]
    recall: list[float]
    f1: list[float]


@functools.lru_cache(maxsize=2)
def _bert_scorer(path: str, num_layers: int, device: str, batch_size: int) -> Any:
    try:
        import bert_score as bs  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ImportError(
            f"BERTScore needs the bert-score package ({exc}); run: {_BERT_SCORE_HINT}"
        ) from exc
    return bs.BERTScorer(
        model_type=path, num_layers=num_layers, device=device, batch_size=batch_size
    )


def bert_score(
    candidates: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]],
    model_path: str | Path,
    num_layers: int,
    *,
    batch_size: int = 64,
    device: str | None = None,
) -> BertScores:
    """BERTScore of each candidate against its reference(s), through the bert-score package.

    Args:
        candidates: Generated texts.
        references: One reference per candidate, or one non-empty list of references per
            candidate (the best-matching reference counts, as bert-score does).
        model_path: Local encoder checkpoint folder (BERT, RoBERTa, DeBERTa...) loadable by
            ``AutoModel`` and ``AutoTokenizer``.
        num_layers: Which hidden layer's token states to compare (bert-score's ``num_layers``;
            e.g. 17 for roberta-large, the package default for English).
        batch_size: Texts embedded per forward pass.
        device: Torch device; defaults to CUDA when available, else CPU.

    Returns:
        Per-pair precision, recall and F1 (no baseline rescaling, no IDF weighting).

    Raises:
        ValueError: The lists differ in length, a reference list is empty, or
            `num_layers` < 1.
        FileNotFoundError: `model_path` is not a local checkpoint folder.
        ImportError: bert-score (or torch/transformers) is missing.

    """
    if len(candidates) != len(references):
        raise ValueError(
            f"bert_score needs one reference (or list of references) per candidate, got "
            f"{len(candidates)} candidates and {len(references)} references"
        )
    if num_layers < 1:
        raise ValueError(f"num_layers must be >= 1, got {num_layers}")
    if not candidates:
        return BertScores([], [], [])
    groups = reference_groups(references)
    path = local_checkpoint(model_path, "model", caller="bert_score")
    # bert-score gives an empty text raw scores of 0 (its only tokens, CLS and SEP, carry no
    # weight), but its empty-text path calls a tokenizer method transformers 5 removed; so
    # empty texts are settled here with the same result and never reach it.
    kept: list[int] = []
    cands: list[str] = []
    refs: list[list[str]] = []
    for i, (cand, group) in enumerate(zip(candidates, groups, strict=True)):
        nonempty = [g for g in group if g.strip()]
        if str(cand).strip() and nonempty:
            kept.append(i)
            cands.append(str(cand))
            refs.append(nonempty)
    precision = [0.0] * len(candidates)
    recall = [0.0] * len(candidates)
    f1 = [0.0] * len(candidates)
    if kept:
        scorer = _bert_scorer(path, num_layers, resolve_device(device), batch_size)
        single = all(len(g) == 1 for g in refs)
        scored_p, scored_r, scored_f = (
            _floats(t) for t in scorer.score(cands, [g[0] for g in refs] if single else refs)
        )
        for j, i in enumerate(kept):
            precision[i], recall[i], f1[i] = scored_p[j], scored_r[j], scored_f[j]
    return BertScores(precision, recall, f1)


def _floats(t: torch.Tensor) -> list[float]:
    return [float(x) for x in t.cpu().tolist()]
