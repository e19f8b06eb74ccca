"""Cache keys: a hash of exactly what changes a model's output."""

from __future__ import annotations

import hashlib

from lmmprobe.formulate.ask import Ask
from lmmprobe.models.base import ModelIdentity
from lmmprobe.schema import Request


def _field(value: object) -> str:
    # Length-prefixed, so no text (whatever characters it holds) can shift one field into the next.
    text = "\x00" if value is None else str(value)
    return f"{len(text)}:{text}"


def request_key(identity: ModelIdentity | str, request: Request) -> str:
    """Hex key of (model identity, method, messages, image content hashes, candidates, decoding).

    The sample id and repeat index are deliberately left out: two requests that send the same
    thing to the same model share one stored response.
    """
    ident = identity if isinstance(identity, str) else identity.cache_id()
    method = request.method
    messages = request.messages
    # The same length-prefixed fields as `_field` gives, written inline: this runs for every
    # request of every run, and the function calls were most of its cost.
    parts = [f"{len(ident)}:{ident}{len(method)}:{method}{_field(len(messages))}"]
    for m in messages:
        content = m.content
        parts.append(f"{len(m.role)}:{m.role}{_field(len(content))}")
        for p in content:
            if p.type == "text":
                text = p.text
                parts.append("1:\x00" if text is None else f"{len(text)}:{text}")
            else:
                parts.append(f"i{p.image}")
    images = request.images
    parts.append(_field(len(images)))
    parts += [im.content_hash() for im in images]
    cands = request.candidates
    parts.append(_field(None if cands is None else len(cands)))
    if cands:
        parts += [_field(c) for c in cands]
    parts.append(_field(request.response_prefix))
    g = request.gen
    parts.append(_field(f"{g.max_new_tokens}|{g.temperature!r}|{g.top_p!r}|{g.seed}"))
    return hashlib.sha256("".join(parts).encode()).hexdigest()[:32]


def ask_key(identity: str, ask: Ask) -> str:
    """`request_key` of ``ask.to_request()``, computed without building the request.

    The runner keys every planned request of a run this way and builds full requests only for
    those the store cannot answer. The text hashed is the one `request_key` writes: the
    preamble's turns each hold one text part; the question holds one part per image, then its
    text. A test checks the two agree across formulations and configs.
    """
    method = ask.method
    preamble = ask.preamble
    images = ask.images
    n_parts = str(len(images) + 1)
    parts = [
        f"{len(identity)}:{identity}{len(method)}:{method}{_field(len(preamble) + 1)}",
        *[f"{len(role)}:{role}1:1{len(text)}:{text}" for role, text in preamble],
        f"4:user{len(n_parts)}:{n_parts}",
        *[f"i{i}" for i in range(len(images))],
        f"{len(ask.prompt)}:{ask.prompt}",
        _field(len(images)),
        *[im.content_hash() for im in images],
    ]
    cands = ask.candidates
    parts.append(_field(None if cands is None else len(cands)))
    if cands:
        parts += [_field(c) for c in cands]
    parts.append(_field(ask.response_prefix))
    g = ask.gen
    parts.append(_field(f"{g.max_new_tokens}|{g.temperature!r}|{g.top_p!r}|{g.seed}"))
    return hashlib.sha256("".join(parts).encode()).hexdigest()[:32]
