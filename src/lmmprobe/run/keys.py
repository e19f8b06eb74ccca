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
    parts = [_field(ident), _field(request.method), _field(len(request.messages))]
    for m in request.messages:
        parts.append(_field(m.role))
        parts.append(_field(len(m.content)))
        for p in m.content:
            parts.append(_field(p.text) if p.type == "text" else f"i{p.image}")
    parts.append(_field(len(request.images)))
    parts.extend(im.content_hash() for im in request.images)
    cands = request.candidates
    parts.append(_field(None if cands is None else len(cands)))
    parts.extend(_field(c) for c in cands or ())
    parts.append(_field(request.response_prefix))
    g = request.gen
    parts.append(_field(f"{g.max_new_tokens}|{g.temperature!r}|{g.top_p!r}|{g.seed}"))
    return hashlib.sha256("".join(parts).encode()).hexdigest()[:32]
