"""The sample browser (``/runs/{run}/samples``) and one sample (``/runs/{run}/samples/{id}``).

The browser lists a run's rows (one per model, sample and repeat) filtered in SQL by model,
verdict, stage, a metadata key (and value), text, and judges (``judge=J``: judged by J;
``judgement=unjudged`` or ``judgement=disagree``: judges disagree, `lmmprobe.store.judged`),
and pages them by keyset: the page after
is ``?after=CURSOR``, the page before ``?before=CURSOR`` (`lmmprobe.store.queries.score_page`),
so the ten-thousandth page costs what the first does. A sample's page shows its images (and a
video's frames the models were given, as strips: `lmmprobe.serve.frames`), the
question, options and gold answer as the run recorded them, and every model's answer: the
exact prompt sent, the raw output, the extracted answer, the verdict and the stage, and under
it each judge's verdict with the judge's own prompt and reply (read by the verdict's key).

The store keeps only the final user message's text of each request (``responses.prompt``). The
page shows the whole request (system prompt, in-context example, dialogue turns, the images'
places and the question) by building it again as the run did, from the run's spec and the
recorded sample (`lmmprobe.formulate.Formulator`), and shows it only when its cache key is the
stored answer's key (`lmmprobe.run.keys.request_key`), so what is shown is what was sent; else
the stored text, with a note saying why.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from lmmprobe.metrics.judged import judge_values, judged_value
from lmmprobe.parse.thinking import Thought, split_answer, tags_for_model
from lmmprobe.report.settings import judged_budget_message
from lmmprobe.schema import Judgement
from lmmprobe.schema.video import policy_text, time_text
from lmmprobe.serve import _pages, frames
from lmmprobe.store import judged, queries, search
from lmmprobe.store.queries import Cursor, RowFilter
from lmmprobe.store.reuse import JUDGED_FROM

__all__ = ["PAGE_SIZES", "router"]

log = logging.getLogger(__name__)

router = APIRouter()

PAGE_SIZES = (25, 50, 100, 200)
"""Rows per page a browser may ask for (default 50)."""

_VERDICTS = ("correct", "wrong")
_STAGES = ("format_hit", "unparsed", "truncated", "error")
_MAX_TEXT = 200  # characters of a search text or metadata filter


def _bad(detail: str) -> HTTPException:
    return HTTPException(status_code=422, detail=detail)


def _cursor(text: str | None, name: str) -> Cursor | None:
    """A page cursor from its query value (JSON ``[sample_id, model, repeat]``)."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # a URL can nest past Python's recursion limit
        value = None
    if (
        isinstance(value, list)
        and len(value) == 3
        and isinstance(value[0], str)
        and isinstance(value[1], str)
        and isinstance(value[2], int)
        and not isinstance(value[2], bool)
    ):
        return (value[0], value[1], value[2])
    raise _bad(f"{name}: not a page cursor (a JSON list [sample_id, model, repeat])")


def _one_of(value: str | None, allowed: tuple[str, ...], name: str) -> Any:
    if value in (None, ""):
        return None
    if value not in allowed:
        raise _bad(f"{name}: {value!r} is not one of {', '.join(allowed)}")
    return value


def _short(value: str | None, name: str) -> str | None:
    if value is None or value == "":
        return None
    if len(value) > _MAX_TEXT:
        raise _bad(f"{name}: at most {_MAX_TEXT} characters")
    return value


def _browse(request: Request, run_id: str) -> dict[str, Any]:
    q = request.query_params
    flt = RowFilter(
        model=_short(q.get("model"), "model"),
        verdict=_one_of(q.get("verdict"), _VERDICTS, "verdict"),
        stage=_one_of(q.get("stage"), _STAGES, "stage"),
        meta_key=_short(q.get("key"), "key"),
        meta_value=_short(q.get("value"), "value"),
        text=_short(q.get("q"), "q"),
        judge=_short(q.get("judge"), "judge"),
        judgement=_one_of(q.get("judgement"), judged.JUDGE_FILTERS, "judgement"),
    )
    try:
        limit = int(q.get("limit") or 50)
    except ValueError:
        limit = -1
    if limit not in PAGE_SIZES:
        raise _bad(f"limit: one of {', '.join(map(str, PAGE_SIZES))}")
    after, before = _cursor(q.get("after"), "after"), _cursor(q.get("before"), "before")
    with _pages.connection(request) as conn:
        found = queries.get_run(conn, run_id)
        if found is None:
            raise _pages.not_found(f"no run {run_id!r} in this store")
        run, _ = found
        page = queries.score_page(conn, run_id, flt, after=after, before=before, limit=limit)
        models = queries.run_models(conn, run_id) or run.models
        keys = queries.metadata_keys(conn, run_id)
        judges = judged.run_judges(conn, run_id)
        note = _search_note(request, conn, run, flt) if page.search == "scan" else None
    params = {
        "model": flt.model,
        "verdict": flt.verdict,
        "stage": flt.stage,
        "key": flt.meta_key,
        "value": flt.meta_value,
        "q": flt.text,
        "judge": flt.judge,
        "judgement": flt.judgement,
        "limit": None if limit == 50 else limit,
    }
    return {
        "run": run,
        "page": page,
        "filter": flt,
        "params": params,
        "models": models,
        "meta_keys": keys,
        "judges": judges,
        "limit": limit,
        "page_sizes": PAGE_SIZES,
        "next": None if page.next is None else json.dumps(list(page.next)),
        "prev": None if page.prev is None else json.dumps(list(page.prev)),
        "first": after is None and before is None,
        "search_note": note,
    }


def _search_note(
    request: Request, conn: sqlite3.Connection, run: queries.RunRow, flt: RowFilter
) -> str:
    """Why a text search read the run's rows instead of its search index (shown on the page)."""
    slow = (
        "this search reads the run's rows instead (slow for a rare text on a big run; "
        f"stopped after {request.app.state.readers.time_limit_s:g} s)"
    )
    if not search.searchable(flt.text):
        return f"Texts under {search.MIN_CHARS} characters are not in the search index: {slow}."
    if run.status == "running":
        return f"This run is still running; its search index is built when it ends: {slow}."
    indexer: search.SearchIndexer | None = getattr(request.app.state, "search_indexer", None)
    if indexer is not None:
        if indexer.error and search.index_progress(conn, run.id) is None:
            return f"The search index cannot be built ({indexer.error}): {slow}."
        indexer.prioritise(run.id)
    state = search.index_progress(conn, run.id)
    if state is not None and state[0] == "failed":
        return f"The search index of this run could not be built: {slow}."
    done = f" ({state[1]:,} rows so far)" if state is not None and state[0] == "building" else ""
    return f"The search index of this run is being built{done}: {slow}."


@router.get("/runs/{run_id}/samples", response_class=HTMLResponse, include_in_schema=False)
def samples_page(request: Request, run_id: str) -> HTMLResponse:
    """A run's rows, filtered and paged (see the module docstring for the parameters)."""
    return _pages.render(request, "samples.html", _browse(request, run_id))


@router.get("/api/runs/{run_id}/samples")
def api_samples(request: Request, run_id: str) -> dict[str, Any]:
    """A page of a run's rows as JSON, with the cursors of the pages before and after.

    Query parameters: ``model``, ``verdict`` (correct, wrong), ``stage`` (format_hit,
    unparsed, error), ``key`` and ``value`` (metadata), ``q`` (text), ``limit``, ``after`` /
    ``before`` (a cursor from a previous page). With ``q``, ``search`` says whether the run's
    search index answered (``index``) or its rows were read (``scan``, and ``search_note``
    says why: index being built, run still running, text under 3 characters).
    """
    view = _browse(request, run_id)
    page: queries.ScorePage = view["page"]
    return {
        "run_id": run_id,
        "rows": [asdict(r) for r in page.rows],
        "next": view["next"],
        "prev": view["prev"],
        "total": page.total,
        "capped": page.capped,
        "search": page.search,
        "search_note": view["search_note"],
    }


def _choices_view(sample: dict[str, Any]) -> list[dict[str, Any]]:
    choices = sample.get("choices")
    if not isinstance(choices, list):
        return []
    answer = sample.get("answer")
    return [
        {"text": str(c), "gold": isinstance(answer, int) and answer == i}
        for i, c in enumerate(choices)
    ]


def _image_files(sample: dict[str, Any] | None) -> list[tuple[str | None, str | None]]:
    """Per recorded image: its file's content hash now, and why it is not the run's picture.

    The hash is None for an image that is no file, or a file that cannot be read now (read
    as the image route reads it: `lmmprobe.serve.images.file_hash`); the reason is
    ``"changed"`` (the content is not the one the run recorded), ``"unreadable"``, or None.
    """
    from lmmprobe.serve.images import file_hash

    refs = (sample or {}).get("images")
    out: list[tuple[str | None, str | None]] = []
    for ref in refs if isinstance(refs, list) else []:
        path = ref.get("path") if isinstance(ref, dict) else None
        if not isinstance(path, str):
            out.append((None, None))
            continue
        try:
            now = file_hash(path)
        except OSError as exc:
            log.info("image %s cannot be read: %s", path, exc)
            out.append((None, "unreadable"))
            continue
        recorded = ref.get("sha256")
        out.append((now, "changed" if isinstance(recorded, str) and recorded != now else None))
    return out


def _recorded_images(refs: Sequence[Any], hashes: Sequence[str | None]) -> list[Any]:
    """`ImageRef`s of recorded references, hashing as the run's images did (for their keys).

    A file's hash is `hashes`' (read once, as the image route reads files): the reference
    never opens the file itself (a FIFO would hold the page forever).
    """
    from lmmprobe.schema import ImageRef

    out = []
    for ref, now in zip(refs, hashes, strict=True):
        if not isinstance(ref, dict):
            raise ValueError("a recorded image reference is not an object")
        if isinstance(ref.get("image"), str):
            # Bytes the store keeps by the content hash the run computed: a reference that
            # names that hash (ImageRef remembers a content hash in its __dict__).
            kept = ImageRef()
            kept.__dict__["_content_hash"] = ref["image"]
            out.append(kept)
        else:
            image = ImageRef.model_validate(ref)
            if now is not None:
                image.__dict__["_content_hash"] = now
            out.append(image)
    return out


def _token_limit(spec: dict[str, Any] | None) -> int | None:
    """The run's ``--max-new-tokens`` as its spec recorded it (None: not recorded)."""
    gen = (spec or {}).get("gen")
    limit = gen.get("max_new_tokens") if isinstance(gen, dict) else None
    return limit if isinstance(limit, int) and not isinstance(limit, bool) else None


_UNREBUILT = "the request cannot be rebuilt now (an image moved, or a renderer is missing)"


def _sent_turns(
    spec: dict[str, Any] | None,
    manifest: dict[str, Any] | None,
    sample: dict[str, Any] | None,
    answers: Sequence[queries.Answer],
    files: Sequence[tuple[str | None, str | None]],
) -> list[dict[str, Any]]:
    """Per answer, the request as sent (every turn) when rebuilding it gives the stored key.

    Each item is ``{"turns": [{"role", "parts": [{"text"} | {"image"}]}], "candidates",
    "prefix", "media"}`` when the rebuilt request is the one answered (``media`` names each
    picture: ``frame 1, t=0.25 s`` or ``image 1``), else ``{"turns": None, "note": why}``.
    `files` is `_image_files` of the sample.
    """
    if sample is None:
        why = "the run recorded no copy of this sample"
        return [{"turns": None, "note": why} for _ in answers]
    changed = [str(i + 1) for i, (_, why) in enumerate(files) if why == "changed"]
    if changed:
        why = (
            f"the image file changed since the run (image {', '.join(changed)}): the request "
            "as sent cannot be rebuilt, and the picture the model saw is not shown"
        )
        return [{"turns": None, "note": why} for _ in answers]
    if any(why == "unreadable" for _, why in files):
        return [{"turns": None, "note": _UNREBUILT} for _ in answers]
    # A run recorded before image files kept their hash cannot tell a changed file apart.
    unchecked = any(
        isinstance(ref, dict) and isinstance(ref.get("path"), str) and "sha256" not in ref
        for ref in sample.get("images") or []
    )
    from pydantic import ValidationError

    from lmmprobe.formulate.prompt import Formulator
    from lmmprobe.models import ModelIdentity
    from lmmprobe.run.keys import request_key, sample_key
    from lmmprobe.schema import RunSpec, Sample
    from lmmprobe.serve.images import register_renderers

    identities = (manifest or {}).get("models")
    identities = identities if isinstance(identities, dict) else {}
    try:
        run_spec = RunSpec.model_validate(spec or {})
        register_renderers()  # a recipe's hash names its renderer's version
        rebuilt = Sample.model_validate(
            {
                **sample,
                "images": _recorded_images(sample.get("images") or [], [h for h, _ in files]),
            }
        )
        formulator = Formulator(run_spec.formulate, run_spec.gen, run_spec.seed, run_spec.repeats)
    except (ValidationError, ValueError, KeyError) as exc:
        log.info("cannot rebuild the requests of sample %s: %s", sample.get("id"), exc)
        why = "the run's spec or recorded sample cannot be read by this lmmprobe"
        return [{"turns": None, "note": why} for _ in answers]
    out: list[dict[str, Any]] = []
    for a in answers:
        try:
            asked, repeat = _as_asked(rebuilt, a, run_spec.repeats)
            req = formulator.ask(asked, repeat).to_request()
            ident = identities.get(a.model)
            if isinstance(ident, dict):
                key = request_key(ModelIdentity.model_validate(ident).cache_id(), req)
                # An imported answer's key is its sample's own (`run.keys.sample_key`).
                same = a.key in (key, sample_key(key, rebuilt.id))
            else:  # no identity recorded: the question text is all that can be compared
                same = a.prompt is not None and req.prompt == a.prompt
        except (ValidationError, ValueError, KeyError, OSError) as exc:
            # An image file moved away cannot be hashed: the stored text is still shown.
            log.info("cannot rebuild the request of %s for %s: %s", a.key, a.model, exc)
            out.append({"turns": None, "note": _UNREBUILT})
            continue
        if not same:
            maybe = "an image file changed since the run, " if unchecked else ""
            out.append(
                {
                    "turns": None,
                    "note": "the request rebuilt from the run's recorded settings differs "
                    f"from the one answered ({maybe}the program that asked it set it "
                    "otherwise, as APEx does, or another lmmprobe version built it)",
                }
            )
            continue
        turns = [
            {
                "role": m.role,
                "parts": [
                    {"image": p.image} if p.type == "image" else {"text": p.text or ""}
                    for p in m.content
                ],
            }
            for m in req.messages
        ]
        out.append(
            {
                "turns": turns,
                "candidates": req.candidates,
                "prefix": req.response_prefix,
                # What each picture of the request is: a video frame (with its time) or an image.
                "media": [_media_label(asked, k) for k in range(len(req.images))],
            }
        )
    return out


def _as_asked(sample: Any, answer: queries.Answer, repeats: int) -> tuple[Any, int]:
    """The sample and repeat `answer` was asked with.

    Under a sweep of frame policies (``--frames 8,16``) its row names the policy, whose frames
    it was shown, and its repeat is ``policy * repeats + r`` for the run's repeat r
    (`lmmprobe.run.runner`).

    Raises:
        KeyError: The recorded video holds no frames under the row's policy.

    """
    from lmmprobe.schema.spec import FRAME_POLICY_KEY

    metadata = answer.metadata if isinstance(answer.metadata, dict) else {}
    policy = metadata.get(FRAME_POLICY_KEY)
    if sample.video is None or not isinstance(policy, str):
        return sample, answer.repeat
    update = {"metadata": {**sample.metadata, FRAME_POLICY_KEY: policy}}
    asked = sample.model_copy(update={**update, "video": sample.video.under(policy)})
    return asked, answer.repeat % max(1, repeats)


def _frame_policy(answer: queries.Answer) -> str | None:
    """The frame policy a sweep asked `answer` under, as a page names it (None: no sweep)."""
    from lmmprobe.schema.spec import FRAME_POLICY_KEY

    policy = answer.metadata.get(FRAME_POLICY_KEY) if isinstance(answer.metadata, dict) else None
    return policy_text(policy) if isinstance(policy, str) else None


def _media_label(sample: Any, index: int) -> str:
    """How the prompt's `index`-th picture is named: a video frame with its time, or an image."""
    frames = (sample.video.frames or []) if sample.video is not None else []
    if index < len(frames):
        return f"frame {index + 1}, {time_text(frames[index].time)}"
    return f"image {index - len(frames) + 1}"


def _with_benchmark(metadata: dict[str, Any], tag: Any) -> dict[str, Any]:
    # A recorded benchmark sample keeps its tag as a typed field; the page shows its keys
    # (benchmark, split, metric) among the metadata, as the sample's rows record them.
    from pydantic import ValidationError

    from lmmprobe.schema import BenchmarkTag

    if not isinstance(tag, dict):
        return metadata
    try:
        keys = BenchmarkTag.model_validate(tag).row_metadata()
    except ValidationError:
        return metadata
    return {**metadata, **{k: v for k, v in keys.items() if k not in metadata}}


def _thought(answer: queries.Answer) -> Thought | None:
    """The answer's output split as scoring reads it, when it has thinking (else None).

    A model spec whose ``think=`` value cannot be read (a run stored by hand) shows its raw
    output only: the page never fails on it, and the run itself says what is wrong.
    """
    if answer.raw is None and answer.reasoning is None:
        return None
    try:
        tags = tags_for_model(answer.model)
    except ValueError:
        return None
    thought = split_answer(
        answer.raw, reasoning=answer.reasoning, finish_reason=answer.finish_reason, tags=tags
    )
    return thought if thought.reasoning is not None or thought.truncated else None


def _judged_budget(answers: list[queries.Answer], docs: dict[str, Any]) -> list[queries.Answer]:
    """`answers` with a judged run's budget errors told as its source run's (re-test 20 #18).

    A run made by ``lmmprobe judge`` holds its source's stored rows: their budget errors say
    ``spent by this run; re-run to continue``, words of the run that spent the money.
    """
    manifest = docs.get("manifest")
    source = manifest.get(JUDGED_FROM) if isinstance(manifest, dict) else None
    if not isinstance(source, str):
        return answers
    return [
        replace(a, error_message=judged_budget_message(a.error_message, source))
        if a.error_type == "budget" and a.error_message
        else a
        for a in answers
    ]


def _sample_view(request: Request, run_id: str, sample_id: str) -> dict[str, Any]:
    with _pages.connection(request) as conn:
        found = queries.get_run(conn, run_id)
        if found is None:
            raise _pages.not_found(f"no run {run_id!r} in this store")
        run, docs = found
        sample = queries.get_sample(conn, run_id, sample_id)
        answers = _judged_budget(queries.sample_answers(conn, run_id, sample_id), docs)
        verdicts = judged.sample_verdicts(conn, run_id, sample_id)
        if sample is None and not answers:
            raise _pages.not_found(f"no sample {sample_id!r} in run {run_id}")
        prev_id, next_id = queries.neighbour_samples(conn, run_id, sample_id)
    files = _image_files(sample)
    images = sample.get("images") if sample else None
    n_images = len(images) if isinstance(images, list) else 0
    answer = sample.get("answer") if sample else None
    gold_texts = (
        [str(a) for a in answer]
        if isinstance(answer, list)
        else [answers[0].gold_text]
        if answers
        else []
    )
    if isinstance(answer, int):
        gold_texts = [c["text"] for c in _choices_view(sample or {}) if c["gold"]]
    metadata = (sample or {}).get("metadata")
    if not isinstance(metadata, dict):
        metadata = answers[0].metadata if answers else {}
    else:
        metadata = _with_benchmark(metadata, (sample or {}).get("benchmark"))
    return {
        "run": run,
        "sample_id": sample_id,
        "sample": sample,
        "question": (sample or {}).get("question"),
        "context": (sample or {}).get("context"),
        "history": (sample or {}).get("history") or [],
        "formulation": (sample or {}).get("formulation"),
        "choices": _choices_view(sample or {}),
        "gold": gold_texts,
        "metadata": metadata,
        "n_images": n_images,
        "answers": answers,
        "sent": _sent_turns(docs["spec"], docs["manifest"], sample, answers, files),
        "image_notes": [why for _, why in files],
        "thoughts": [_thought(a) for a in answers],
        "policies": [_frame_policy(a) for a in answers],
        "token_limit": _token_limit(docs["spec"]),
        "verdicts": [verdicts.get((a.model, a.repeat), []) for a in answers],
        "judged": [judged_summary(verdicts.get((a.model, a.repeat), [])) for a in answers],
        "prev_id": prev_id,
        "next_id": next_id,
        "origin": _origin(docs["manifest"]),
        "strips": frames.strips(
            sample, f"/frames/{_pages.quote_segment(run_id)}/{_pages.quote_segment(sample_id)}"
        ),
    }


def judged_summary(verdicts: Sequence[judged.JudgeVerdict]) -> dict[str, Any] | None:
    """One answer's judged verdict as the run's judged figures count it (None: not judged).

    The figure is `lmmprobe.metrics.judged.judged_value` of the answer's verdicts (a rule's,
    else the judges' majority or mean grade), so the page says what ``judge_score`` counted.
    ``label``: ``correct`` or ``wrong`` (a figure of 1 or 0), ``graded`` (a grade on a scale),
    ``tie`` (judges split evenly: no figure) or ``unjudged`` (no judge decided); ``decided_by``:
    ``rule``, ``judge`` or ``unjudged``; ``judges``: how many judges gave a figure.
    """
    if not verdicts:
        return None
    marks = [
        Judgement(
            judge=v.judge,
            protocol=v.protocol,
            version=v.version,
            decided_by=v.decided_by,
            attempt=v.attempt,
            value=v.value,
            reading=v.reading,
        )
        for v in verdicts
    ]
    by = {m.decided_by for m in marks}
    decided_by = "rule" if "rule" in by else "judge" if "judge" in by else "unjudged"
    value = judged_value(marks)
    if value is None:
        label = "tie" if decided_by == "judge" else "unjudged"
    else:
        label = "correct" if value == 1.0 else "wrong" if value == 0.0 else "graded"
    return {
        "label": label,
        "value": value,
        "decided_by": decided_by,
        "judges": len(judge_values(marks)),
    }


def _origin(manifest: Any) -> dict[str, Any] | None:
    """The ``origin`` an imported run's manifest records (tool, file, hash), else None."""
    origin = manifest.get("origin") if isinstance(manifest, dict) else None
    return origin if isinstance(origin, dict) else None


@router.get(
    "/runs/{run_id}/samples/{sample_id:path}",
    response_class=HTMLResponse,
    include_in_schema=False,
)
def sample_page(request: Request, run_id: str, sample_id: str) -> HTMLResponse:
    """One sample of a run: images, question, gold, and every model's answer in full."""
    return _pages.render(request, "sample.html", _sample_view(request, run_id, sample_id))


@router.get("/api/runs/{run_id}/samples/{sample_id:path}")
def api_sample(request: Request, run_id: str, sample_id: str) -> dict[str, Any]:
    """One sample as JSON: the recorded sample (images as URLs) and every model's answer."""
    view = _sample_view(request, run_id, sample_id)
    base = f"/images/{_pages.quote_segment(run_id)}/{_pages.quote_segment(sample_id)}"
    sample = dict(view["sample"] or {})
    sample.pop("images", None)
    return {
        "run_id": run_id,
        "sample_id": sample_id,
        "sample": sample or None,
        "images": [f"{base}/{i}" for i in range(view["n_images"])],
        "frames": view["strips"],
        "answers": [
            {
                **asdict(a),
                "sent": sent,
                "judgements": [asdict(v) for v in verdicts],
                "judged": summary,
            }
            for a, sent, verdicts, summary in zip(
                view["answers"], view["sent"], view["verdicts"], view["judged"], strict=True
            )
        ],
    }
