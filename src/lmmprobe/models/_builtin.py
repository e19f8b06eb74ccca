"""The built-in model backends, registered when `MODELS` is first used.

The baselines (``random``, ``first``) are registered by importing their module; the optional
backends (``hf``, ``openai``) are registered lazily, so their dependencies are imported only when
a spec names them, and a missing one fails with the ``pip install`` to run.

The ``hf`` entry goes through `load_hf`, which checks the target before transformers sees it: a
misspelt tiny alias (``hf:tiny-lava``) or a missing local folder fails at once with one line
naming what exists, instead of minutes of hub retries and a transformers traceback.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING

import lmmprobe.models.baselines  # noqa: F401  (registers random and first)
from lmmprobe.models.base import MODELS

# The alias table is tiny.py's own: one source of truth for what `hf:` can build locally.
from lmmprobe.models.tiny import TINY_ALIASES

if TYPE_CHECKING:
    from lmmprobe.models.hf import HFModel

_TARGETS = "a local checkpoint folder, a hub id (org/name) or a tiny test model ({})"


def _targets() -> str:
    return _TARGETS.format(", ".join(f"hf:{a}" for a in TINY_ALIASES))


def check_hf_target(target: str | None) -> None:
    """Refuse an ``hf:`` target that cannot name a checkpoint, before anything is loaded.

    Raises:
        ValueError: A ``tiny-``/``small-`` name that is no tiny alias (with the closest alias),
            or a path-like target (``./x``, ``/x``, ``~/x``, ``a/b/c``) that does not exist.

    """
    if not target or Path(target).expanduser().exists():
        return  # a missing target is parse_options' message; an existing folder is loadable
    # Aliases have no "/": "tiny-org/model" is a hub id whose organisation starts with tiny-.
    if target.startswith(("tiny-", "small-")) and "/" not in target and target not in TINY_ALIASES:
        close = difflib.get_close_matches(target, TINY_ALIASES, n=1)
        hint = f"did you mean hf:{close[0]}? " if close else ""
        raise ValueError(
            f"unknown tiny model hf:{target}; {hint}"
            f"tiny models: {', '.join(TINY_ALIASES)} (see `lmmprobe list models`)"
        )
    if target.startswith((".", "/", "~")) or target.count("/") > 1:
        raise ValueError(f"hf:{target}: no such folder; an hf target is {_targets()}")


def load_hf(target: str | None, options: dict[str, str]) -> HFModel:
    """Registry factory for ``hf:``: check the target, then load it with `lmmprobe.models.hf`.

    Raises:
        ValueError: The target cannot be a checkpoint, an option is wrong, or loading failed
            (transformers' ``OSError``: a misspelt hub id, no network and not cached, a folder
            without a config), in one line saying what to check.

    """
    check_hf_target(target)
    from lmmprobe.models import hf

    try:
        return hf.load(target, options)
    except OSError as exc:
        # transformers' messages span several lines; the first sentence or two say what failed.
        reason = " ".join(str(exc).split())[:300]
        raise ValueError(
            f"cannot load hf:{target}: {reason} Check the spelling; an hf target is "
            f"{_targets()}; a hub model needs the network or the Hugging Face cache."
        ) from exc


MODELS.register_lazy(
    "hf",
    "lmmprobe.models._builtin:load_hf",
    requires=("torch", "transformers"),
    extra="hf",
    summary="hf:PATH_OR_ID  Hugging Face transformers checkpoint (local path or hub id); "
    f"tiny random-weight test models: {', '.join(f'hf:{a}' for a in TINY_ALIASES)}",
)
MODELS.register_lazy(
    "openai",
    "lmmprobe.models.openai_api:load",
    requires=("openai",),
    extra="api",
    summary="openai:MODEL[@BASE_URL]  any OpenAI-compatible chat server",
)
# The served backends' option → flag mapping is served.py's SERVER_FLAGS, written out here so
# that listing the backends imports neither them nor openai.
_SERVED = (
    "starts a local {name} server on a free loopback port for the run, asks it as openai: does "
    "and stops it at the end (its log in the run folder). Options tensor_parallel_size, "
    "max_model_len, reasoning_parser, gpu_memory_utilization, max_num_seqs, dtype, revision, "
    "trust_remote_code=true become {flags}; args='...' adds server arguments as written; "
    "command=CMD (or ${var}) replaces `{command}`; max_concurrency (default max_num_seqs, else "
    "64), startup_timeout (1800 s) and the openai: options apply"
)
MODELS.register_lazy(
    "vllm",
    "lmmprobe.models.served:load_vllm",
    requires=("openai",),
    extra="api",
    summary="vllm:PATH_OR_ID  "
    + _SERVED.format(
        name="vLLM",
        flags="--tensor-parallel-size, --max-model-len, --reasoning-parser, "
        "--gpu-memory-utilization, --max-num-seqs, --dtype, --revision, --trust-remote-code",
        var="LMMPROBE_VLLM_COMMAND",
        command="vllm serve",
    ),
)
MODELS.register_lazy(
    "sglang",
    "lmmprobe.models.served:load_sglang",
    requires=("openai",),
    extra="api",
    summary="sglang:PATH_OR_ID  "
    + _SERVED.format(
        name="SGLang",
        flags="--tp-size, --context-length, --reasoning-parser, --mem-fraction-static, "
        "--max-running-requests, --dtype, --revision, --trust-remote-code",
        var="LMMPROBE_SGLANG_COMMAND",
        command="python -m sglang.launch_server",
    ),
)
