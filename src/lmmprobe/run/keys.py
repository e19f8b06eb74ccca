"""Cache keys: a hash of exactly what changes a model's output."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from lmmprobe.formulate.ask import Ask
from lmmprobe.models.base import ModelIdentity
from lmmprobe.schema import Request

# The method as key text. Likelihood requests were called "loglikelihood" when the key format
# was fixed; keys keep that spelling, so stored answers stay valid and baselines that draw
# their answer from the key (random) give the same numbers.
_METHOD_IN_KEY = {"likelihood": "loglikelihood"}


def _field(value: object) -> str:
    # Length-prefixed, so no text (whatever characters it holds) can shift into the next field.
    # None is written as a one-character NUL text: the format of every key stored so far (and
    # the random baseline draws its answer from the key), so it stays.
    text = "\x00" if value is None else str(value)
    return f"{len(text)}:{text}"


def request_key(identity: ModelIdentity | str, request: Request) -> str:
    """Hex key of (model identity, method, messages, image content hashes, candidates, decoding).

    A request about a video adds the frame policy and the sampled frames' times (the frames'
    pixel hashes are among the image hashes).

    Every text goes in length-prefixed and every list with its length first, so two requests
    that send different things never share a key. Images are named by their content hash (a
    fixed-length hex digest), so a key never depends on where an image lives. The sample id,
    the repeat index and the scorer's fields (options, marks, order) are deliberately left
    out: two requests that send the same thing to the same model share one stored response.

    Args:
        identity: The model, or its `ModelIdentity.cache_id` text.
        request: The request as it will be sent.

    Returns:
        32 hex characters.

    """
    messages = [
        (m.role, [_field(p.text) if p.type == "text" else f"i{p.image}" for p in m.content])
        for m in request.messages
    ]
    return _key(identity, request.method, messages, request, request.candidates)


def ask_key(identity: ModelIdentity | str, ask: Ask) -> str:
    """`request_key` of ``ask.to_request()``, without building and validating that request.

    The runner keys every planned ask, and most asks of a re-run are answered from the store
    and never sent; assembling each one's validated `Request` only to hash it was the largest
    single cost of planning. The turns come from `Ask.layout`, the one place they are laid
    out (`Ask.to_request` builds its messages from it too), and both keys go through one
    serializer, so the two cannot disagree (tests/run/test_keys.py checks them against each
    other on every configuration).

    Args:
        identity: The model, or its `ModelIdentity.cache_id` text.
        ask: The planned ask.

    Returns:
        32 hex characters, equal to ``request_key(identity, ask.to_request())``.

    """
    messages = [
        (role, [f"i{p}" if isinstance(p, int) else _field(p) for p in parts])
        for role, parts in ask.layout()
    ]
    return _key(identity, ask.method, messages, ask, ask.candidates)


def _key(
    identity: ModelIdentity | str,
    method: str,
    messages: Sequence[tuple[str, list[str]]],
    rest: Request | Ask,
    candidates: list[str] | None,
) -> str:
    # The one serializer of keys: `messages` holds each turn's role and its parts already
    # written as key text; `rest` gives the images, the prefix and the decoding settings.
    ident = identity if isinstance(identity, str) else identity.cache_id()
    method = _METHOD_IN_KEY.get(method, method)
    parts = [_field(ident), _field(method), _field(len(messages))]
    for role, content in messages:
        parts += [_field(role), _field(len(content)), *content]
    parts.append(_field(len(rest.images)))
    parts += [image.content_hash() for image in rest.images]
    parts.append(_field(None if candidates is None else len(candidates)))
    parts += [_field(c) for c in candidates or ()]
    parts.append(_field(rest.response_prefix))
    if rest.video is not None:
        # Only where a video is asked (keys without one are as they always were): the policy
        # and the frames' times, beside the frames' pixel hashes among the images above. Its
        # path or URL is not: a key never depends on where media lives.
        video = rest.video
        times = [repr(f.time) for f in video.frames or ()]
        parts += [_field("video"), _field(video.sampled_with), _field(len(times))]
        parts += [_field(t) for t in times]
    g = rest.gen
    parts.append(_field(f"{g.max_new_tokens}|{g.temperature!r}|{g.top_p!r}|{g.seed}"))
    # surrogatepass: text read from JSON may hold lone surrogates, which strict UTF-8 rejects;
    # any other text encodes exactly as before.
    return hashlib.sha256("".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def sample_key(key: str, sample_id: str) -> str:
    """An answer's key made its sample's own: `key` (a `request_key`) with the sample's id.

    A run asks requests that send the same thing once and shares the answer; an import's
    rows were each answered by the other tool on its own, so two samples asking the same
    question (same text, options and image) must keep their own answers, stored, read back
    and judged apart.

    Args:
        key: The request's key (`request_key` or `ask_key`).
        sample_id: The sample the answer is to.

    Returns:
        32 hex characters.

    """
    text = _field("sample") + _field(key) + _field(sample_id)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def judge_key(
    identity: ModelIdentity | str,
    protocol: str,
    version: str,
    request: Request,
    attempt: int = 0,
) -> str:
    """Hex key of a judge's request: `request_key` of what is sent, plus the protocol.

    The request holds the judge's identity (through `identity`), the rendered judge prompt
    (which quotes the judged answer), any image sent and the decoding settings; the protocol's
    name and version are added on top, so a changed prompt template or reading re-judges even
    where the rendered text happens to be the same. Model requests keep `request_key`
    unchanged (their stored answers stay valid).

    Args:
        identity: The judge model, or its `ModelIdentity.cache_id` text.
        protocol: The judge protocol's registry name.
        version: The protocol's version.
        request: The judge request as it will be sent.
        attempt: The repeat of a protocol that asks the judge several times about one answer
            (MM-Vet): each repeat is its own call; the first keeps the plain key.

    Returns:
        32 hex characters.

    """
    inner = request_key(identity, request)
    text = _field("judge") + _field(protocol) + _field(version) + _field(inner)
    if attempt:
        text += _field(f"attempt {attempt}")
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
