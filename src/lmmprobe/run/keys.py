"""Cache keys: a hash of exactly what changes a model's output."""

from __future__ import annotations

import hashlib

from lmmprobe.formulate.ask import Ask
from lmmprobe.models.base import ModelIdentity
from lmmprobe.schema import GenerationParams, Request


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

    The runner keys every planned request of a run this way (through `AskKeys`, which
    remembers the parts that repeat across asks) and builds full requests only for those the
    store cannot answer. A test checks the two keys agree across formulations and configs.
    """
    return AskKeys(identity)(ask)


class AskKeys:
    """`ask_key` for one model identity, remembering what repeats from ask to ask.

    The hashed text is the one `request_key` writes for ``ask.to_request()``: the preamble's
    turns each hold one text part; the question holds one part per image, then its text.
    Within a run the head (identity, method, preamble) and the tail (response prefix and
    decoding settings) take a handful of values, so each is written once.
    """

    _MEMO_LIMIT = 4096

    def __init__(self, identity: str) -> None:
        """Key asks for the model whose `ModelIdentity.cache_id` is `identity`."""
        self._ident = f"{len(identity)}:{identity}"
        self._heads: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}
        # Keyed by the settings object's id; the object is kept so the id stays its own.
        self._tails: dict[tuple[str | None, int], tuple[GenerationParams, str]] = {}
        self._users: dict[int, tuple[str, str]] = {}

    def _head(self, method: str, preamble: tuple[tuple[str, str], ...]) -> str:
        memo = (method, preamble)
        known = self._heads.get(memo)
        if known is None:
            if len(self._heads) >= self._MEMO_LIMIT:  # distinct dialogue histories
                self._heads.clear()
            turns = "".join(f"{len(r)}:{r}1:1{len(t)}:{t}" for r, t in preamble)
            known = f"{self._ident}{len(method)}:{method}{_field(len(preamble) + 1)}{turns}"
            self._heads[memo] = known
        return known

    def _tail(self, prefix: str | None, gen: GenerationParams) -> str:
        known = self._tails.get((prefix, id(gen)))
        if known is None or known[0] is not gen:
            if len(self._tails) >= self._MEMO_LIMIT:
                self._tails.clear()
            g = f"{gen.max_new_tokens}|{gen.temperature!r}|{gen.top_p!r}|{gen.seed}"
            known = self._tails[(prefix, id(gen))] = (gen, _field(prefix) + _field(g))
        return known[1]

    def _user(self, n_images: int) -> tuple[str, str]:
        # The question's role and part count with its image parts, and the image count field.
        known = self._users.get(n_images)
        if known is None:
            n_parts = str(n_images + 1)
            head = f"4:user{len(n_parts)}:{n_parts}" + "".join(f"i{i}" for i in range(n_images))
            known = self._users[n_images] = (head, _field(n_images))
        return known

    def __call__(self, ask: Ask) -> str:
        """The ask's key."""
        images = ask.images
        n_images = len(images)
        # The memos are read inline (a method call per part costs as much as the lookup).
        user = self._users.get(n_images) or self._user(n_images)
        head = self._heads.get((ask.method, ask.preamble)) or self._head(ask.method, ask.preamble)
        tail = self._tails.get((ask.response_prefix, id(ask.gen)))
        if tail is None or tail[0] is not ask.gen:
            tail = (ask.gen, self._tail(ask.response_prefix, ask.gen))
        prompt = ask.prompt
        cands = ask.candidates
        if cands is None:
            cand_text = _NONE
        else:
            cand_text = _field(len(cands)) + "".join([_field(c) for c in cands])
        hashes = (
            images[0].content_hash()
            if n_images == 1
            else "".join([im.content_hash() for im in images])
        )
        text = f"{head}{user[0]}{len(prompt)}:{prompt}{user[1]}{hashes}{cand_text}{tail[1]}"
        return hashlib.sha256(text.encode()).hexdigest()[:32]


_NONE = _field(None)
