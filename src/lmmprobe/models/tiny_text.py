"""Tiny random-weight text checkpoints (BART, BERT), built locally for tests of text metrics.

HEMM (Liang et al., 2024, "HEMM: Holistic Evaluation of Multimodal Foundation Models") scores
generated text with BARTScore (Yuan et al., 2021, "BARTScore: Evaluating Generated Text as
Text Generation"), which needs a seq2seq model such as bart-large-cnn, and with BERTScore
(Zhang et al., 2020, "BERTScore: Evaluating Text Generation with BERT"), which needs an encoder.
Real weights cannot be downloaded here, so this module builds genuine transformers checkpoints
with random weights: their scores are meaningless, but every loading, tokenizing and scoring
path is the real one.

- `tiny_bart_path`: a `BartForConditionalGeneration` (hidden 32, 2 encoder and 2 decoder layers)
  with the project's locally trained byte-level BPE fast tokenizer; encoding wraps text as
  ``<s> ... </s>``, as BART's own tokenizer does. At most 128 positions.
- `tiny_bert_path`: a `BertModel` (hidden 32, 2 layers) with the same kind of tokenizer, whose
  ``<s>`` / ``</s>`` also serve as CLS / SEP, so the ``bert-score`` package can load it from a
  local path (``model_type=str(path), num_layers=2``). At most 128 positions.

Both folders live beside the tiny vision-language models (see `lmmprobe.models.tiny`), are built
once in a temporary folder and renamed into place, and are seeded and deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lmmprobe._optional import require
from lmmprobe.models.tiny import _wrapping_tokenizer, build_once, seeded

__all__ = ["TINY_BERT_LAYERS", "TINY_TEXT_CONTEXT", "tiny_bart_path", "tiny_bert_path"]

TINY_TEXT_CONTEXT = 128
"""Token positions of the tiny BART and BERT models (tokenizers truncate to this)."""

TINY_BERT_LAYERS = 2
"""Hidden layers of the tiny BERT; the largest ``num_layers`` bert-score may use with it."""

_SEED = 0
_HIDDEN = 32


def tiny_bart_path(cache_dir: str | Path | None = None) -> Path:
    """Build (once, then reuse) a tiny random-weight BART checkpoint and return its folder.

    Args:
        cache_dir: Root of the cache; defaults to ``$LMMPROBE_CACHE`` or ``~/.cache/lmmprobe``.

    Returns:
        A folder that `BartForConditionalGeneration.from_pretrained` and
        `AutoTokenizer.from_pretrained` load offline.

    Raises:
        ImportError: torch, transformers or tokenizers is missing
            (``pip install 'lmmprobe[hf]'``).

    """
    return _cached("bart-tiny", _build_bart, cache_dir)


def tiny_bert_path(cache_dir: str | Path | None = None) -> Path:
    """Build (once, then reuse) a tiny random-weight BERT checkpoint and return its folder.

    Args:
        cache_dir: Root of the cache; defaults to ``$LMMPROBE_CACHE`` or ``~/.cache/lmmprobe``.

    Returns:
        A folder that `AutoModel.from_pretrained` and `AutoTokenizer.from_pretrained` load
        offline, and that ``bert_score.score(..., model_type=str(path), num_layers=2)``
        accepts.

    Raises:
        ImportError: torch, transformers or tokenizers is missing
            (``pip install 'lmmprobe[hf]'``).

    """
    return _cached("bert-tiny", _build_bert, cache_dir)


def _cached(name: str, build: Callable[[Path], None], cache_dir: str | Path | None) -> Path:
    require("torch", "transformers", "tokenizers", extra="hf", purpose="the tiny text models")
    return build_once(name, build, cache_dir)


def _build_bart(folder: Path) -> None:
    from transformers import BartConfig, BartForConditionalGeneration

    tok = _wrapping_tokenizer(TINY_TEXT_CONTEXT)
    config = BartConfig(
        vocab_size=len(tok),
        d_model=_HIDDEN,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=_HIDDEN * 2,
        decoder_ffn_dim=_HIDDEN * 2,
        max_position_embeddings=TINY_TEXT_CONTEXT,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        # BART starts decoding from </s>: labels are shifted right behind it.
        decoder_start_token_id=tok.eos_token_id,
        forced_eos_token_id=tok.eos_token_id,
    )
    with seeded(_SEED):
        model = BartForConditionalGeneration(config)
    tok.save_pretrained(folder)
    model.save_pretrained(folder)


def _build_bert(folder: Path) -> None:
    from transformers import BertConfig, BertModel

    # bert-score zeroes the IDF weight of the CLS and SEP ids, so they must be set.
    tok = _wrapping_tokenizer(TINY_TEXT_CONTEXT, cls_token="<s>", sep_token="</s>")
    config = BertConfig(
        vocab_size=len(tok),
        hidden_size=_HIDDEN,
        num_hidden_layers=TINY_BERT_LAYERS,
        num_attention_heads=4,
        intermediate_size=_HIDDEN * 2,
        max_position_embeddings=TINY_TEXT_CONTEXT,
        pad_token_id=tok.pad_token_id,
    )
    with seeded(_SEED):
        model = BertModel(config)
    tok.save_pretrained(folder)
    model.save_pretrained(folder)
