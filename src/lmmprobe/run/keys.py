"""Cache keys: a hash of exactly what changes a model's output."""

from __future__ import annotations

import hashlib
import json

from lmmprobe.models.base import ModelIdentity
from lmmprobe.schema import Request


def request_key(identity: ModelIdentity | str, request: Request) -> str:
    """Hex key of (model identity, method, messages, image content hashes, candidates, decoding).

    The sample id and repeat index are deliberately left out: two requests that send the same
    thing to the same model share one stored response.
    """
    ident = identity if isinstance(identity, str) else identity.cache_id()
    payload = [
        ident,
        request.method,
        [[m.role, [[p.type, p.text, p.image] for p in m.content]] for m in request.messages],
        [im.content_hash() for im in request.images],
        request.candidates,
        [request.gen.max_new_tokens, request.gen.temperature, request.gen.top_p, request.gen.seed],
    ]
    blob = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()[:32]
