"""Cache keys: a hash of exactly what changes a model's output."""

from __future__ import annotations

import hashlib

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
