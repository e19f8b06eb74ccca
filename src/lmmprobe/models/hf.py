r"""Hugging Face transformers backend: ``hf:PATH_OR_ID[,option=value...]``.

Loads a vision-language checkpoint with ``AutoProcessor`` and ``AutoModelForImageTextToText``
(falling back to the class named in the config), renders requests through the processor's chat
template with images as typed content parts, generates in left-padded batches, and ranks
candidate continuations by log-likelihood, encoding image and prompt once per sample and reusing
the prompt's key/value cache for every candidate. The weights load on the first request that
needs them, so a run answered entirely from the store never loads them.

Every turn of a request reaches the model (the cache key covers them all): the system prompt,
the in-context example and the dialogue history. A checkpoint without a chat template gets the
plain layout of `plain_prompt`; a chat template that rejects a turn, or renders the
conversation without one, makes that request fail with ``unsupported_input`` rather than send a
prompt its key does not describe.

Options: ``device`` (auto | cpu | cuda | cuda:N), ``dtype`` (auto | bfloat16 | float16 |
float32), ``device_map`` (passed through, e.g. ``auto`` for several GPUs), ``revision``,
``trust_remote_code`` (false), ``batch_size`` (8), ``max_images`` (images per prompt; default:
unlimited, 1 for architectures known to take one), ``chat_template_kwargs`` (``key=value``
pairs joined by ``;``, values read as JSON scalars, passed to the chat template: e.g.
``chat_template_kwargs=enable_thinking=false`` turns a Qwen3-style model's thinking off, so
thinking on and off are two model specs of one checkpoint, with two identities),
``chat_template_timeout`` (seconds one render of the chat template may take; 10, at least 0.1),
``chat_template_memory`` (MiB its renderer may grow by; 2048) and ``video`` (auto | frames: a
sample's video goes to the processor's video input where the architecture takes one
(`VIDEO_MODEL_TYPES`) and its processor loaded a video processor, else its frames as images;
``frames`` gives the frames as images to every model, so one checkpoint can be asked both ways).

The chat template comes with the checkpoint, so it is rendered as outside text is read: in a
child process of the model's own, bounded in time, memory and length (`_chat_render`); a
render past a bound is that request's ``unsupported_input`` error, and the run goes on.

Each generated answer records why it stopped (`Response.finish_reason`): ``stop`` when it ended
with an end-of-sequence token, ``length`` when it ran to ``max_new_tokens`` without one. When
the chat template opens a think block in the generation prompt (``<think>`` at its end, as
Qwen3-Thinking-style templates do), the model's turn starts inside that block: the stored text
starts with the opening the template wrote (e.g. ``<think>\n``), so the answer is read after
the block ends, and an output that never closes it is read as cut off.

``hf:tiny-llava``, ``hf:tiny-idefics3``, ``hf:tiny-paligemma``, ``hf:tiny-blip2`` and
``hf:small-llava`` name tiny random-weight models built locally (``models/tiny.py``): their
answers are meaningless; they exist to exercise this code offline. ``hf:tiny-llava-think`` is
tiny-llava with a thinking chat template (it opens a think block unless ``enable_thinking`` is
false). ``hf:tiny-qwen2-vl`` and ``hf:tiny-llava-onevision`` take video (they need torchvision).
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import transformers
from PIL import Image
from transformers import AutoConfig, AutoModelForImageTextToText, AutoProcessor
from transformers.utils import logging as hf_logging

from lmmprobe.models._chat_render import (
    ChatTemplateRenderer,
    RenderLimits,
    TemplateFailed,
    TemplateRejected,
    processor_classes,
)
from lmmprobe.models._fingerprint import weights_fingerprint as weights_fingerprint
from lmmprobe.models._hub import cache_only, check_device
from lmmprobe.models._images import image_key, images_problem
from lmmprobe.models.base import Capabilities, ModelIdentity, UnsupportedInputError
from lmmprobe.schema import ErrorInfo, Message, Request, Response, Usage
from lmmprobe.schema.text import lone_surrogate, shown_value
from lmmprobe.spec import OptionScalar, parse_option_map

log = logging.getLogger(__name__)

# Architectures whose processors take exactly one image per prompt.
SINGLE_IMAGE_MODEL_TYPES = frozenset({"blip-2", "paligemma"})
VIDEO_MODEL_TYPES = frozenset(
    {"qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "llava_onevision", "llava_next_video"}
)
"""Architectures whose processor takes a video (``videos=``, a ``{"type": "video"}`` part in
the chat template): a sample's video reaches them as one, where their processor has its
video processor (transformers' video processors need torchvision); other models get the
video's frames as images."""


class _Decoded(list[Image.Image]):
    """A request's pictures in order; the first `video` of them are a video's frames."""

    video: int = 0


_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}
# Arguments `render` gives apply_chat_template itself: chat_template_kwargs may not replace them.
_RESERVED_TEMPLATE_KWARGS = frozenset(
    {"add_generation_prompt", "chat_template", "continue_final_message", "conversation",
     "return_dict", "return_tensors", "tokenize"}
)  # fmt: skip
# The opening of a think block a generation prompt may end with (Qwen3-Thinking style).
_THINK_OPEN = "<think>"


@dataclass(frozen=True)
class HFOptions:
    """Parsed backend options (see the module docstring)."""

    path: str
    device: str = "auto"
    dtype: str = "auto"
    device_map: str | None = None
    revision: str | None = None
    trust_remote_code: bool = False
    batch_size: int = 8
    max_images: int | None = None
    chat_template_kwargs: Mapping[str, OptionScalar] | None = None
    render_limits: RenderLimits = field(default_factory=RenderLimits)
    video: str = "auto"


def parse_options(target: str | None, options: dict[str, str]) -> HFOptions:
    """Validate the spec's options.

    Raises:
        ValueError: Missing target, unknown option or bad value.

    """
    if not target:
        raise ValueError("the hf backend needs a checkpoint: hf:PATH_OR_HUB_ID")
    known = {
        "device",
        "dtype",
        "device_map",
        "revision",
        "trust_remote_code",
        "batch_size",
        "max_images",
        "chat_template_kwargs",
        "chat_template_timeout",
        "chat_template_memory",
        "video",
    }
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(f"hf backend: unknown option(s) {unknown}; known: {sorted(known)}")
    dtype = options.get("dtype", "auto")
    if dtype != "auto" and dtype not in _DTYPES:
        raise ValueError(f"hf backend: dtype must be auto or one of {sorted(_DTYPES)}")
    device = options.get("device", "auto")
    if device not in ("auto", "cpu", "cuda") and not (
        device.startswith("cuda:") and device[5:].isdigit()
    ):
        raise ValueError(f"hf backend: device={device}: must be auto, cpu, cuda or cuda:N")
    try:
        batch = int(options.get("batch_size", 8))
        max_images = int(options["max_images"]) if "max_images" in options else None
    except ValueError as exc:
        raise ValueError("hf backend: batch_size and max_images must be integers") from exc
    # Re-test 8 #5: 0 or less was taken silently (a batch of 1; no image in any prompt).
    if batch < 1 or (max_images is not None and max_images < 1):
        raise ValueError("hf backend: batch_size and max_images must be at least 1")
    video = options.get("video", "auto")
    if video not in ("auto", "frames"):
        raise ValueError(f"hf backend: video={shown_value(video)}: must be auto or frames")
    template_kwargs = None
    if "chat_template_kwargs" in options:
        try:
            template_kwargs = parse_option_map(
                options["chat_template_kwargs"], "chat_template_kwargs"
            )
        except ValueError as exc:
            raise ValueError(f"hf backend: {exc}") from exc
        reserved = sorted(_RESERVED_TEMPLATE_KWARGS & set(template_kwargs))
        if reserved:
            raise ValueError(
                f"hf backend: chat_template_kwargs may not set {', '.join(reserved)} (the "
                "backend sets them itself)"
            )
    return HFOptions(
        render_limits=_render_limits(options),
        path=target,
        device=device,
        dtype=dtype,
        device_map=options.get("device_map"),
        revision=options.get("revision"),
        trust_remote_code=options.get("trust_remote_code", "false").lower() in ("1", "true", "yes"),
        batch_size=batch,
        max_images=max_images,
        chat_template_kwargs=template_kwargs,
        video=video,
    )


MIN_TIMEOUT_S = 0.1
"""The shortest ``chat_template_timeout`` taken (a real template renders in milliseconds)."""


def _render_limits(options: Mapping[str, str]) -> RenderLimits:
    """The chat template's bounds from ``chat_template_timeout`` and ``chat_template_memory``."""
    defaults = RenderLimits()
    try:
        timeout = float(options.get("chat_template_timeout", defaults.timeout_s))
        memory = int(options.get("chat_template_memory", defaults.memory_mib))
    except ValueError as exc:
        raise ValueError(
            "hf backend: chat_template_timeout must be a number of seconds and "
            "chat_template_memory a whole number of MiB"
        ) from exc
    # A bound of nothing (or NaN, or past a day) is not a bound a run can keep; one below
    # 0.1 s (1e-300) fails every render, and each failure restarts the renderer (seconds).
    if not MIN_TIMEOUT_S <= timeout <= 86_400 or not 64 <= memory <= 1 << 20:
        raise ValueError(
            f"hf backend: chat_template_timeout must be from {MIN_TIMEOUT_S:g} to 86400 s, "
            "chat_template_memory from 64 to 1048576 MiB"
        )
    return RenderLimits(timeout_s=timeout, memory_mib=memory, max_chars=defaults.max_chars)


def resolve_path(path: str) -> str:
    """Map tiny-model aliases to their built folders; other paths and hub ids pass through."""
    if path.startswith(("tiny-", "small-")):
        from lmmprobe.models.tiny import tiny_alias

        built = tiny_alias(path)
        if built is not None:
            return str(built)
    return path


def _pick_device(opt: str) -> torch.device:
    if opt == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(opt)


def _pick_dtype(opt: str, device: torch.device) -> torch.dtype:
    if opt != "auto":
        return _DTYPES[opt]
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


@contextmanager
def _no_transformers_bars() -> Iterator[None]:
    """Turn transformers' (and the hub's) progress bars off inside; the caller's setting after."""
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def _is_oom(exc: BaseException) -> bool:
    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


class HFModel:
    """A transformers vision-language model behind the lmmprobe model protocol."""

    def __init__(self, opts: HFOptions) -> None:
        self.opts = opts
        check_device(opts.device)  # before anything is built or loaded
        path = resolve_path(opts.path)
        common: dict[str, Any] = {"trust_remote_code": opts.trust_remote_code}
        if opts.revision:
            common["revision"] = opts.revision
        # A hub id while the Hub is unreachable: the cache alone, or a refusal with the fetch
        # command, instead of minutes of the hub client's retries.
        if not Path(path).expanduser().exists() and cache_only(path, opts.revision):
            common["local_files_only"] = True
        self.processor = AutoProcessor.from_pretrained(path, **common)  # type: ignore[no-untyped-call]
        config = AutoConfig.from_pretrained(path, **common)
        self.device = _pick_device(opts.device)
        self.dtype = _pick_dtype(opts.dtype, self.device)
        kwargs: dict[str, Any] = {**common, "dtype": self.dtype, "low_cpu_mem_usage": True}
        if opts.device_map:
            kwargs["device_map"] = opts.device_map
        # The weights wait for the first request that needs them (`model`): a run answered
        # entirely from the store never loads them. Everything the cache keys and the runner
        # need (identity, capabilities) comes from the config and the files' fingerprint.
        self._weights_args = (path, config, kwargs)
        self._model: Any = None
        self._weights_lock = threading.Lock()
        # A load that failed is not tried again batch after batch: the rest of the run fails
        # fast with the first reason (each request stored as an error, retried next run).
        self._load_error: BaseException | None = None
        self.model_type = str(getattr(config, "model_type", ""))
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        # The chat template renders in a child process of its own, started on the first render
        # (a run answered from the store starts none), loading this processor as above.
        # Where this processor is transformers' own, the child loads it without torch (seconds
        # less to start) and checks it loaded the same classes (`_chat_render`).
        self.renderer = ChatTemplateRenderer(
            path, common, opts.render_limits, classes=processor_classes(self.processor)
        )
        max_images = opts.max_images
        if max_images is None and self.model_type in SINGLE_IMAGE_MODEL_TYPES:
            max_images = 1
        local = Path(path)
        # "prompt": the turn-rendering version. Version 2 sends the system prompt, example
        # turn and history that version 1 dropped for template-less checkpoints, so answers
        # stored under version 1 keys are not served for the prompts sent now.
        identity: dict[str, Any] = {"dtype": str(self.dtype).removeprefix("torch."), "prompt": 2}
        if opts.chat_template_kwargs:
            # They change the prompt (thinking on or off); only when set, so identities (and
            # stored answers) of specs without them stay as they were.
            identity["chat_template_kwargs"] = dict(sorted(opts.chat_template_kwargs.items()))
        # A video as a video where the architecture takes one and its processor loaded its
        # video processor; else its frames as images. The identity says which (only then, so
        # the identities of other models stay as they were).
        self._video = (
            opts.video == "auto"
            and self.model_type in VIDEO_MODEL_TYPES
            and getattr(self.processor, "video_processor", None) is not None
        )
        if self._video:
            identity["video"] = "processor"
        self.identity = ModelIdentity(
            backend="hf",
            name=opts.path,
            revision=opts.revision or getattr(config, "_commit_hash", None),
            fingerprint=weights_fingerprint(local) if local.is_dir() else None,
            options=identity,
        )
        self.capabilities = Capabilities(
            video=self._video,
            likelihood=True,
            multi_image=max_images != 1,
            max_images=max_images,
            max_batch_size=opts.batch_size,
        )
        self._batch = opts.batch_size

    @property
    def weights_loaded(self) -> bool:
        """Whether the weights are in memory (they load on the first request to compute)."""
        return self._model is not None

    @property
    def model(self) -> Any:
        """The transformers model, its weights loaded on first use (once, thread-safely)."""
        if self._model is None:
            with self._weights_lock:
                if self._load_error is not None:
                    raise RuntimeError(
                        f"the weights of {self.opts.path} failed to load earlier in this run: "
                        f"{self._load_error}"
                    ) from self._load_error
                if self._model is None:
                    try:
                        self._model = self._load_weights()
                    except Exception as exc:
                        self._load_error = exc
                        raise
        return self._model

    @model.setter
    def model(self, value: Any) -> None:
        self._model = value

    def _load_weights(self) -> Any:
        path, config, kwargs = self._weights_args
        log.info("loading the weights of %s (%s, %s)", self.opts.path, self.device, self.dtype)
        # Loading now happens inside a run, under its progress display (or its -q silence):
        # transformers' own bars would tear through it. Restored afterwards.
        with _no_transformers_bars():
            model = self._load(path, config, kwargs)
        if not self.opts.device_map:
            model.to(self.device)
        model.eval()
        model.requires_grad_(False)
        return model

    @staticmethod
    def _load(path: str, config: Any, kwargs: dict[str, Any]) -> Any:
        try:
            return AutoModelForImageTextToText.from_pretrained(path, **kwargs)
        except ValueError as exc:
            # The auto class does not map every architecture; the config names its own class.
            names = getattr(config, "architectures", None) or []
            cls = getattr(transformers, names[0], None) if names else None
            if cls is None:
                raise ValueError(f"cannot load {path}: {exc}") from exc
            return cls.from_pretrained(path, **kwargs)

    def __repr__(self) -> str:
        return f"HFModel({self.opts.path!r}, device={self.device}, dtype={self.dtype})"

    def close(self) -> None:
        """End the chat template's renderer (also done when the model is collected, or at exit).

        The model stays usable: a later render starts a renderer again.
        """
        self.renderer.close()

    def __enter__(self) -> HFModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- prompts --------------------------------------------------------------------------

    def render(self, request: Request) -> str:
        """The prompt text for a request, with every message the cache key covers.

        Through the chat template when the checkpoint has one (images as typed parts);
        otherwise in the plain layout of `plain_prompt`, with the processor's image
        placeholders first (none for BLIP-2, whose processor inserts its query tokens itself).

        Raises:
            ChatTemplateError: The chat template rejects the conversation (e.g. a system
                turn or two user turns in a row), renders it without the text of a system,
                example or history turn, or fails another way: an error of its own, past its
                time or memory bound, or longer than a prompt may be (`_chat_render`).
            RuntimeError: The chat template's renderer could not start.

        """
        template = self.chat_template
        if template:
            try:
                # What `processor.apply_chat_template(..., tokenize=False)` renders, rendered
                # in the renderer's child under its bounds.
                text = self.renderer.render(
                    self.conversation(request), **self.template_arguments(template)
                )
            except TemplateRejected as exc:
                raise ChatTemplateError(
                    request,
                    f"sample {request.sample_id}: the chat template of {self.opts.path} rejects "
                    f"this conversation ({exc}); {_PREAMBLE_ADVICE}",
                ) from exc
            except TemplateFailed as exc:
                raise ChatTemplateError(
                    request,
                    f"sample {request.sample_id}: the chat template of {self.opts.path} {exc}",
                ) from exc
            # Jinja spells "\ud800" as a lone surrogate, which no tokenizer encodes: left in,
            # it failed the whole batch's encoding as an internal error naming nothing.
            where = lone_surrogate(text)
            if where is not None:
                raise ChatTemplateError(
                    request,
                    f"sample {request.sample_id}: the chat template of {self.opts.path} rendered "
                    f"a lone surrogate ({where}), which is not text a tokenizer encodes",
                )
            self._check_rendered(request, text)
            return text + _prefix(request.response_prefix)
        # No template (e.g. original BLIP-2 and PaliGemma checkpoints).
        image_token = getattr(self.processor, "image_token", None)
        n_images = len(request.images)
        images = (
            (str(image_token) * n_images) if image_token and self.model_type != "blip-2" else ""
        )
        return plain_prompt(
            request.messages, images=images, response_prefix=request.response_prefix
        )

    @property
    def chat_template(self) -> str | None:
        """The chat template prompts are rendered with; None when the checkpoint has none."""
        # Some processors (BLIP-2 in transformers 5) drop their template on load while the
        # tokenizer keeps it, so whichever exists is passed explicitly.
        template = getattr(self.processor, "chat_template", None) or getattr(
            self.tokenizer, "chat_template", None
        )
        return template or None

    def template_arguments(self, template: str) -> dict[str, Any]:
        """The arguments `render` gives ``apply_chat_template`` besides the conversation.

        ``tokenize=False`` aside, which the renderer adds.
        """
        return {
            "chat_template": template,
            "add_generation_prompt": True,
            **dict(self.opts.chat_template_kwargs or {}),
        }

    def _video_frames(self, request: Request) -> int:
        """How many of the request's first images go to the processor as one video (0: none).

        Its video's frames where the model takes a video, unless texts stand between them
        (`Request.frames_interleaved`): those frames go as images, each in its place.
        """
        if not self._video or request.frames_interleaved:
            return 0
        return request.video_frames

    def conversation(self, request: Request) -> list[dict[str, Any]]:
        """A request's messages as the chat template takes them: typed parts, images in place.

        A video's frames (where the model takes a video and no text stands between them) are
        one ``video`` part where its first frame stands.
        """
        conversation = []
        frames = self._video_frames(request)
        for m in request.messages:
            parts: list[dict[str, Any]] = []
            for p in m.content:
                if p.type == "image" and p.image is not None and p.image < frames:
                    if p.image == 0:  # the video's frames are one video part, in their place
                        parts.append({"type": "video"})
                    continue
                parts.append(
                    {"type": "image"}
                    if p.type == "image"
                    else {"type": "text", "text": p.text or ""}
                )
            conversation.append({"role": m.role, "content": parts})
        return conversation

    def _check_rendered(self, request: Request, text: str) -> None:
        """Refuse a rendering that lost the text of a turn before the question.

        Templates written for one conversation shape may skip what they do not expect (a
        system turn, a second user turn) without an error. Each earlier turn's text must appear
        in order; the question itself is always rendered, and is not checked, so templates that
        rewrite it slightly (whitespace) are not refused.
        """
        pos = 0
        for i, message in enumerate(request.messages[:-1]):
            wanted = message.text.strip()
            if not wanted:
                continue
            found = text.find(wanted, pos)
            if found < 0:
                raise ChatTemplateError(
                    request,
                    f"sample {request.sample_id}: the chat template of {self.opts.path} drops "
                    f"message {i} ({message.role}: {wanted[:60]!r}), so the prompt would not "
                    f"be what the cache key describes; {_PREAMBLE_ADVICE}",
                )
            pos = found + len(wanted)

    def prompt_inputs(self, request: Request) -> Any:
        """The processor's encoding of a request's prompt and images, as the model gets it.

        Likelihood scoring encodes exactly this before the candidates; generation encodes the
        same text and images in left-padded batches.

        Raises:
            UnsupportedInputError: As `render`, or the request has more images than the
                checkpoint takes.

        """
        return self._prefix_inputs(self.render(request), [self._images(request)])

    def _images(self, request: Request) -> list[Image.Image]:
        limit = self.capabilities.max_images
        if limit is not None and len(request.images) > limit:
            raise UnsupportedInputError(
                f"sample {request.sample_id} has {len(request.images)} images; "
                f"{self.opts.path} takes at most {limit}"
            )
        problem = images_problem(request.images)
        if problem:
            raise UnsupportedInputError(f"sample {request.sample_id}: {problem}")
        # A picture listed again is decoded once: the same image is given again.
        decoded: dict[str, Image.Image] = {}
        for ref in request.images:
            key = image_key(ref)
            if key not in decoded:
                decoded[key] = ref.load().convert("RGB")
        out = _Decoded(decoded[image_key(ref)] for ref in request.images)
        out.video = self._video_frames(request)
        return out

    def _encode(self, texts: list[str], images: list[list[Image.Image]], **extra: Any) -> Any:
        kwargs: dict[str, Any] = {"text": texts, "return_tensors": "pt", "padding": True, **extra}
        # A video's frames go to the processor's video input (one video per prompt that has
        # one, in prompt order, as the template's video parts are); the rest as images.
        videos = [list(p[: p.video]) for p in images if isinstance(p, _Decoded) and p.video]
        if videos:
            images = [list(p[p.video :]) if isinstance(p, _Decoded) else p for p in images]
            # The frames are the ones sampled: the processor must not sample them again.
            kwargs["videos"] = videos
            kwargs["do_sample_frames"] = False
        if any(images):
            kwargs["images"] = images
        batch = self.processor(**kwargs)
        batch.pop("labels", None)  # PaliGemma returns labels; they would only add a loss pass
        return batch.to(self.device)

    # -- generation -----------------------------------------------------------------------

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Generate greedily (or sample when temperature > 0) in left-padded batches.

        Requests with different decoding settings (e.g. per-repeat sampling seeds) never share
        a `generate` call, nor, where the model takes a video, do videos of different frame
        counts (LLaVA-OneVision's video processor stacks a batch's videos into one tensor);
        results come back in request order.
        """
        groups: dict[Any, list[int]] = {}
        for i, r in enumerate(requests):
            groups.setdefault((r.gen, self._video_frames(r)), []).append(i)
        out: list[Response | None] = [None] * len(requests)
        for idx in groups.values():
            for i, resp in zip(
                idx, self._run([requests[i] for i in idx], self._generate_batch), strict=True
            ):
                out[i] = resp
        return [r for r in out if r is not None]

    def _generate_batch(self, requests: Sequence[Request]) -> list[Response]:
        texts = [self.render(r) for r in requests]
        images = [self._images(r) for r in requests]
        self.tokenizer.padding_side = "left"  # new tokens must follow every prompt directly
        inputs = self._encode(texts, images)
        g = requests[0].gen
        sample = g.temperature > 0
        kwargs: dict[str, Any] = {"max_new_tokens": g.max_new_tokens, "do_sample": sample}
        if sample:
            kwargs.update(temperature=g.temperature, top_p=g.top_p)
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        with torch.inference_mode(), torch.random.fork_rng(devices=self._rng_devices()):
            if sample and g.seed is not None:
                torch.manual_seed(g.seed)  # inside fork_rng: the global generator is restored
            out = self.model.generate(**inputs, pad_token_id=pad, **kwargs)
        new = out[:, inputs["input_ids"].shape[1] :]
        decoded = self.tokenizer.batch_decode(new, skip_special_tokens=True)
        eos = self._eos_ids()
        return [
            Response(
                key=r.key,
                text=opened_think_block(prompt) + t.strip(),
                finish_reason=_finish_reason(new[i], eos, g.max_new_tokens),
                usage=_usage(inputs, i, new, pad),
            )
            for i, (r, t, prompt) in enumerate(zip(requests, decoded, texts, strict=True))
        ]

    def _eos_ids(self) -> set[int]:
        """Every token id that ends a sequence: the generation config's and the tokenizer's."""
        ids: set[int] = set()
        config = getattr(self.model, "generation_config", None)
        for value in (getattr(config, "eos_token_id", None), self.tokenizer.eos_token_id):
            if isinstance(value, int):
                ids.add(value)
            elif isinstance(value, list | tuple):
                ids.update(v for v in value if isinstance(v, int))
        return ids

    def _rng_devices(self) -> list[int]:
        return [self.device.index or 0] if self.device.type == "cuda" else []

    # -- likelihood -----------------------------------------------------------------------

    def loglikelihood(self, requests: Sequence[Request]) -> list[Response]:
        """Summed log-probability of each candidate; one prompt encoding per sample."""
        return self._run(requests, lambda batch: [self._rank_one(r) for r in batch])

    @property
    def _suffix_style(self) -> bool:
        # PaliGemma's processor closes the prefix with "\n" and takes the answer as `suffix`
        # (token type 1): a candidate is tokenized on its own, as the processor would.
        return self.model_type == "paligemma"

    def continuation_ids(self, prompt: str, candidate: str) -> list[int]:
        """Token ids of `candidate` as it continues `prompt` (tokenized in context)."""
        if self._suffix_style:
            return list(self.tokenizer(candidate, add_special_tokens=False)["input_ids"])
        joiner = "" if not prompt or prompt[-1].isspace() else " "
        full = self.tokenizer(prompt + joiner + candidate, add_special_tokens=False)["input_ids"]
        head = self.tokenizer(prompt, add_special_tokens=False)["input_ids"]
        if full[: len(head)] == head and len(full) > len(head):
            return list(full[len(head) :])
        return list(self.tokenizer(joiner + candidate, add_special_tokens=False)["input_ids"])

    def _rank_one(self, request: Request) -> Response:
        cands = request.candidates or []
        if not cands:
            raise UnsupportedInputError(f"request {request.key} has no candidates")
        prompt = self.render(request)
        images = [self._images(request)]
        ids = [self.continuation_ids(prompt, c) for c in cands]
        with torch.inference_mode():
            scores = self._score_with_cache(prompt, images, ids)
        return Response(key=request.key, loglikelihoods=scores, token_counts=[len(x) for x in ids])

    def _prefix_inputs(self, prompt: str, images: list[list[Image.Image]]) -> Any:
        self.tokenizer.padding_side = "right"
        return self._encode([prompt], images)

    def _score_with_cache(
        self, prompt: str, images: list[list[Image.Image]], ids: list[list[int]]
    ) -> list[float]:
        inputs = self._prefix_inputs(prompt, images)
        # M-RoPE models (the Qwen-VL family) keep the offset their image or video grid left in
        # the positions (`rope_deltas`) from one forward pass to the next: cleared, so this
        # prompt's pass sets its own and no earlier request's is applied to it.
        mrope = self._mrope_state()
        if mrope is not None:
            mrope.rope_deltas = None
        extra: dict[str, Any] = {}
        if self._accepts_logits_to_keep:
            extra["logits_to_keep"] = 1  # only the last position predicts a candidate token
        out = self.model(**inputs, use_cache=True, **extra)
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        scores = [float(first[x[0]]) for x in ids]
        # Single-token candidates are fully scored by the prompt's last position; only longer
        # ones need a second pass over the cached prompt.
        longer = [i for i, x in enumerate(ids) if len(x) > 1]
        if not longer:
            return scores
        rest = [ids[i][1:] for i in longer]
        n, width = len(longer), max(len(ids[i]) for i in longer)
        pad = self.tokenizer.pad_token_id or 0
        cand = torch.full((n, width), pad, dtype=torch.long, device=self.device)
        mask = torch.zeros((n, width), dtype=torch.long, device=self.device)
        for row, i in enumerate(longer):
            cand[row, : len(ids[i])] = torch.tensor(ids[i], device=self.device)
            mask[row, : len(ids[i])] = 1
        cache = _output_cache(out)
        cache.batch_repeat_interleave(n)  # one copy of the prompt's keys/values per candidate
        prefix_mask = inputs["attention_mask"].expand(n, -1)
        # PaliGemma: candidate tokens are output (type 1), not prefix.
        extra = {"token_type_ids": torch.ones_like(cand)} if "token_type_ids" in inputs else {}
        model = self._continuation_model()
        extra[_cache_argument(model)] = cache
        attention: torch.Tensor | None = torch.cat([prefix_mask, mask], dim=1)
        if mrope is not None and mrope.rope_deltas is not None:
            # Given a mask, transformers' M-RoPE positions span the whole mask (prompt and
            # candidates), not the new tokens; without one they continue from the cache's
            # length plus the grid's offset. No mask is needed: the one prompt has no
            # padding, and a candidate's padding follows every token whose score is read.
            attention = None
        cont = model(input_ids=cand, attention_mask=attention, use_cache=True, **extra)
        logp = torch.log_softmax(cont.logits.float(), dim=-1)
        for row, i in enumerate(longer):
            targets = torch.tensor(rest[row], device=self.device)
            scores[i] += float(logp[row, : len(rest[row])].gather(1, targets[:, None]).sum())
        return scores

    def _mrope_state(self) -> Any:
        """The inner model holding M-RoPE's ``rope_deltas`` (Qwen-VL family); else None."""
        inner = getattr(self.model, "model", None)
        return inner if inner is not None and hasattr(inner, "rope_deltas") else None

    @functools.cached_property
    def _accepts_logits_to_keep(self) -> bool:
        return "logits_to_keep" in inspect.signature(self.model.forward).parameters

    def _continuation_model(self) -> Callable[..., Any]:
        # Continuing from a cache needs no new images. Most image-text models accept input_ids
        # alone; BLIP-2 insists on pixel_values, so its causal language model continues instead.
        lm = getattr(self.model, "language_model", None)
        if (
            lm is not None
            and hasattr(lm, "get_output_embeddings")
            and lm.get_output_embeddings() is not None
        ):
            return lm  # type: ignore[no-any-return]
        return self.model  # type: ignore[no-any-return]

    def continuation_inputs(
        self, prompt: str, images: list[list[Image.Image]], candidate: str
    ) -> tuple[Any, int, list[int]]:
        """Processor inputs of `prompt` continued by `candidate`, for one full forward pass.

        The candidate is joined to the prompt as `loglikelihood` scores it (PaliGemma: as the
        processor's `suffix`), so ``logits[start - 1 : start + len(ids) - 1]`` predict its
        tokens. Used by `naive_scores` and by gradient-based attacks that need the image in
        the same pass as the answer.

        Args:
            prompt: The rendered prompt (`render`).
            images: The prompt's pictures, one list per prompt (``[[image, ...]]``).
            candidate: The continuation.

        Returns:
            The encoded batch on the model's device, the position of the candidate's first
            token, and the candidate's token ids.

        Raises:
            RuntimeError: The candidate's tokens differ inside the full text.

        """
        ids = self.continuation_ids(prompt, candidate)
        n = len(ids)
        if self._suffix_style:
            self.tokenizer.padding_side = "right"
            inputs = self._encode([prompt], images, suffix=[candidate])
            start = int(inputs["token_type_ids"][0].tolist().index(1))
        else:
            joiner = "" if not prompt or prompt[-1].isspace() else " "
            inputs = self._prefix_inputs(prompt + joiner + candidate, images)
            start = int(inputs["input_ids"].shape[1]) - n
        got = inputs["input_ids"][0, start : start + n].tolist()
        if got != ids:
            raise RuntimeError(f"continuation tokens differ in context: {got} != {ids}")
        return inputs, start, ids

    def naive_scores(self, request: Request) -> list[float]:
        """Reference scoring: one full forward (image included) per candidate.

        This is what ReForm-Eval and APEx do; kept for tests and benchmarks.
        """
        prompt = self.render(request)
        images = [self._images(request)]
        out = []
        with torch.inference_mode():
            for cand in request.candidates or []:
                inputs, start, ids = self.continuation_inputs(prompt, images, cand)
                n = len(ids)
                logits = self.model(**inputs).logits[0].float()
                logp = torch.log_softmax(logits[start - 1 : start + n - 1], dim=-1)
                target = torch.tensor(ids, device=logp.device)
                out.append(float(logp.gather(1, target[:, None]).sum()))
        return out

    # -- batching with out-of-memory back-off ---------------------------------------------

    def _run(
        self, requests: Sequence[Request], fn: Callable[[Sequence[Request]], list[Response]]
    ) -> list[Response]:
        out: list[Response] = []
        i = 0
        while i < len(requests):
            batch = requests[i : i + self._batch]
            try:
                out.extend(fn(batch))
            except UnsupportedInputError as exc:
                at = _position(batch, exc)
                if len(batch) == 1:
                    out.append(Response(key=batch[0].key, error=exc.to_info()))
                elif at is not None:
                    # The request whose chat template failed is known: its error, once (a
                    # render past its time bound is not paid again), and the others run.
                    out.extend(self._run(batch[:at], fn))
                    out.append(Response(key=batch[at].key, error=exc.to_info()))
                    out.extend(self._run(batch[at + 1 :], fn))
                else:  # isolate the offending request; the others still run
                    out.extend(self._run(batch[:1], fn) + self._run(batch[1:], fn))
            except RuntimeError as exc:
                if not _is_oom(exc):
                    raise
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                if self._batch == 1:
                    info = ErrorInfo(type="out_of_memory", message=str(exc)[:300], retryable=True)
                    out.extend(Response(key=r.key, error=info) for r in batch)
                else:
                    self._batch = max(1, self._batch // 2)
                    log.warning("out of memory: batch size lowered to %d", self._batch)
                    continue
            i += len(batch)
        return out


class ChatTemplateError(UnsupportedInputError):
    """The chat template failed on one request (rejected it, dropped a turn, ran past a bound)."""

    def __init__(self, request: Request, message: str) -> None:
        super().__init__(message)
        self.request = request

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (across processes) as the plain error it is: the request stays behind.
        return UnsupportedInputError, (str(self),)


def _position(batch: Sequence[Request], exc: UnsupportedInputError) -> int | None:
    """Where in `batch` the request a `ChatTemplateError` names is; None for other errors."""
    if isinstance(exc, ChatTemplateError):
        for i, request in enumerate(batch):
            if request is exc.request:
                return i
    return None


_PREAMBLE_ADVICE = (
    "run this model without those turns (unset formulate.system_prompt, set "
    "formulate.in_context_example to false, or use samples without history), or use a "
    "checkpoint whose chat template renders them"
)

# Labels of the plain layout: BLIP-2's "Question: ... Answer:" prompt for visual questions,
# extended to the turns before the question.
_PLAIN_LABELS = {"system": "System:", "user": "Question:", "assistant": "Answer:"}


def plain_prompt(
    messages: Sequence[Message], *, images: str = "", response_prefix: str | None = None
) -> str:
    """The prompt for a checkpoint without a chat template: every turn, labelled, as text.

    The layout, for a system prompt, an in-context example (or history) and the question::

        <image placeholders>System: <system prompt>
        Question: <example question> Answer: <example answer>
        Question: <question> Answer: <response prefix>

    Each turn starts a line with its label (``System:``, ``Question:``, ``Answer:``), except
    that an answer continues the line of the question it answers; the prompt ends with the
    label of the answer to give. A lone question gives ``Question: <question> Answer:``, the
    prompt BLIP-2's model card uses for visual questions. Image parts are not rendered where they stand: the
    placeholders (`images`) go first, where BLIP-2 and PaliGemma expect them.

    Args:
        messages: The request's messages; the last is the question.
        images: The processor's placeholder text for the request's images.
        response_prefix: Text the answer is made to start with.

    Returns:
        The prompt text.

    """
    lines: list[str] = []
    previous: str | None = None
    for message in messages:
        turn = f"{_PLAIN_LABELS[message.role]} {message.text}"
        if message.role == "assistant" and previous == "user":
            lines[-1] += f" {turn}"
        else:
            lines.append(turn)
        previous = message.role
    answer = _PLAIN_LABELS["assistant"]
    return images + "\n".join(lines) + f" {answer}{_prefix(response_prefix)}"


def _output_cache(out: Any) -> Any:
    """The prompt's key/value cache in a forward pass's output.

    transformers 5 renamed the output field ``past_key_values`` to ``cache``; reading the old
    name logs a deprecation warning on every pass, so the new one is looked up first and the
    old one only where the new one is absent (earlier 5.x releases). BLIP-2 nests its language
    model's outputs.
    """
    for holder in (out, getattr(out, "language_model_outputs", None)):
        if holder is None:
            continue
        for name in ("cache", "past_key_values"):
            if name in holder and holder[name] is not None:
                return holder[name]
    raise RuntimeError(f"the forward pass returned no key/value cache ({type(out).__name__})")


def _cache_argument(model: Callable[..., Any]) -> str:
    """The keyword a model's forward takes its key/value cache by: ``cache`` or the older name.

    Passing ``past_key_values`` where ``cache`` exists raises a FutureWarning on every call
    (transformers 5.x, removal announced for 5.40).
    """
    forward = getattr(model, "forward", model)
    return "cache" if "cache" in inspect.signature(forward).parameters else "past_key_values"


def _prefix(response_prefix: str | None) -> str:
    """The response prefix as it follows the generation prompt (one space before it)."""
    return f" {response_prefix}" if response_prefix else ""


def opened_think_block(prompt: str) -> str:
    r"""The think block a prompt leaves open for the model, as the template wrote it, or ``""``.

    A generation prompt that ends with ``<think>`` (and whitespace) makes the model start inside
    its thinking; the block's opening is part of the model's turn, so it is kept with the text.
    A response prefix after it (``<think>\n The answer is``) does not count: the prompt must
    end with the opening.
    """
    at = prompt.rfind(_THINK_OPEN)
    if at < 0 or prompt[at + len(_THINK_OPEN) :].strip():
        return ""
    return prompt[at:]


def _finish_reason(row: torch.Tensor, eos: set[int], max_new_tokens: int) -> str:
    """Why a generated row stopped: ``stop`` (it holds an end-of-sequence token) or ``length``.

    ``length`` when it ran to `max_new_tokens` without an end-of-sequence token; ``stop``
    otherwise (another stopping rule ended it).
    """
    if any(int(t) in eos for t in row.tolist()):
        return "stop"
    return "length" if row.numel() >= max_new_tokens else "stop"


def _usage(inputs: Any, row: int, new: torch.Tensor, pad: int | None) -> Usage:
    """Prompt tokens (padding excluded) and generated tokens (padding after the end excluded)."""
    prompt = int(inputs["attention_mask"][row].sum())
    generated = new[row] if pad is None else new[row][new[row] != pad]
    return Usage(prompt_tokens=prompt, completion_tokens=int(generated.numel()))


def load(target: str | None, options: dict[str, str]) -> HFModel:
    """Registry factory for ``hf:PATH_OR_ID[,option=value...]``."""
    return HFModel(parse_options(target, options))
