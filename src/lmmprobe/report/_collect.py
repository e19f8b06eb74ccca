"""Gather what a report shows: runs from the store or run folders, their rows, their samples.

A report reads; it never changes the store. Runs are named the way ``lmmprobe show`` and
``lmmprobe export`` name them (a run id, a unique prefix, ``latest``) or by their output folder
(the one holding ``results.json``). An APEx campaign folder (its ``report.json`` lists
``experiments``) is recognised among the same arguments and rendered by its own fragment.

Model cards (HEMM's modeling dimensions, `lmmprobe.holistic.load_model_cards`) can be attached
to the runs' model specs; a card is matched to a spec with `lmmprobe.holistic.card_for`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from lmmprobe._file_kind import not_regular_file
from lmmprobe.data import FINGERPRINT_VERSION, data_fingerprint, load_source
from lmmprobe.data.jsonl import read_json_file
from lmmprobe.registry import RegistryError
from lmmprobe.report.leaderboard import leaderboard_notes
from lmmprobe.report.model import (
    Manifest,
    ModelResults,
    Results,
    ResultsFormatError,
    load_results,
    results_from_dict,
)
from lmmprobe.report.settings import run_notes, setting_label
from lmmprobe.schema import RunSpec, Sample, Score, VideoRef
from lmmprobe.store import DEFAULT_DB, Store, StoreVersionError
from lmmprobe.store.sqlite import score_from_row

if TYPE_CHECKING:
    from lmmprobe.holistic import ModelCard

log = logging.getLogger(__name__)


class ReportError(ValueError):
    """A run reference that names nothing readable, or data a report cannot use."""


@dataclass
class RunInfo:
    """One run as the report sees it: the store row and where it came from."""

    run_id: str
    status: str
    created_at: float | None
    spec: RunSpec
    manifest: Manifest | None
    results: Results | None
    store: Path | None

    @property
    def blind(self) -> bool:
        """Whether the run asked without images (Dysca's blind setting)."""
        return self.spec.formulate.blind

    @property
    def data(self) -> str:
        """The run's data spec."""
        return self.spec.data


@dataclass
class RawAnswer:
    """What a model said for one (sample, repeat), as stored, for the sample browser."""

    text: str | None
    error_message: str | None
    prompt: str | None
    reasoning: str | None = None
    """Thinking the server sent apart from the text (store layout 8)."""
    finish_reason: str | None = None
    """Why generation stopped, when the backend said (``length``: the token limit)."""


@dataclass
class Entry:
    """One model of one run: a row of the leaderboard.

    Attributes:
        label: Unique display name: the model spec, ``[blind]`` for blind runs, and the run id
            when the same model appears in several runs.
        model: The model spec as the run gave it.
        run: The run it belongs to.
        scores: Its scored rows (empty when only ``results.json`` could be read).
        raw: Stored raw answers keyed by (sample id, repeat).

    """

    label: str
    model: str
    run: RunInfo
    scores: list[Score] = field(default_factory=list)
    raw: dict[tuple[str, int], RawAnswer] = field(default_factory=dict)

    @property
    def results(self) -> ModelResults | None:
        """The model's block of the run's ``results.json``, when the run finished."""
        res = self.run.results
        return None if res is None else res.models.get(self.model)


@dataclass
class ReportData:
    """Everything a report is made from.

    Attributes:
        runs: The runs, in the order given.
        entries: One per (run, model), in run order then model order.
        samples: Samples reloaded from each run's data spec, by data spec then sample id;
            a data spec whose source can no longer be read maps to an empty dict.
        apex_dirs: APEx campaign folders among the arguments.
        warnings: Things a reader should know (unreadable data, changed data...).
        cards: Model cards matched to entries, by entry label (only entries with a card).
        cards_source: Where the cards came from (the file), or None when none were given.
        videos: The videos samples ask about as the runs recorded them (with the frames the
            models were shown), by data spec then sample id; one per distinct sampling when
            runs on the same data sampled a clip differently.

    """

    runs: list[RunInfo]
    entries: list[Entry]
    samples: dict[str, dict[str, Sample]]
    apex_dirs: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cards: dict[str, ModelCard] = field(default_factory=dict)
    cards_source: str | None = None
    videos: dict[str, dict[str, list[VideoRef]]] = field(default_factory=dict)


def is_apex_dir(path: Path) -> bool:
    """Whether `path` is an APEx campaign folder: ``report.json`` with an ``experiments`` list.

    ``report.json`` is read as every outside file is (`lmmprobe.data.jsonl.read_json_file`:
    a regular file inside the folder, size-capped, nested at most 100 levels).

    Raises:
        ReportError: The folder holds a ``report.json`` that cannot be read, or has an
            ``experiments`` list but no query or a non-object experiment, and no
            ``results.json`` (so it is no run folder either); one line naming the file and
            the field.

    """
    report = path / "report.json"
    if not path.is_dir() or not os.path.lexists(report):
        return False
    try:
        doc = read_json_file(report, what="an APEx report", within=path)
        if not (isinstance(doc, dict) and isinstance(doc.get("experiments"), list)):
            return False
        _check_campaign(doc, report)
    except ValueError as exc:
        if (path / "results.json").is_file():
            return False  # a run folder with a stray report.json
        raise ReportError(str(exc)) from None
    return True


def _check_campaign(doc: dict[str, Any], report: Path) -> None:
    """Refuse a campaign lacking what every report format reads of it.

    That is its query, and each experiment an object: without them it would be an empty report
    that exits 0. The rest is checked where the HTML section renders it, so a campaign of an
    older layout still lists.
    """
    if not isinstance(doc.get("query"), str):
        raise ValueError(f"{report} is not an APEx report.json: query: a text is required")
    for i, experiment in enumerate(doc["experiments"]):
        if not isinstance(experiment, dict):
            raise ValueError(
                f"{report} is not an APEx report.json: experiments.{i}: an object is required"
            )


def _manifest(doc: Any) -> Manifest | None:
    # The manifest only adds facts (versions, fingerprint); an unreadable one is left out.
    try:
        return Manifest.model_validate(doc) if doc else None
    except ValidationError as exc:
        log.warning("manifest left out: %s", exc.errors()[0]["msg"])
        return None


def _run_from_row(row: dict[str, Any], store_path: Path) -> RunInfo:
    where = f"run {row['id']} in {store_path}"
    try:
        spec = RunSpec.model_validate(row.get("spec") or {})
        results = results_from_dict(row["results"], where) if row.get("results") else None
    except (ValidationError, ResultsFormatError) as exc:
        said = str(exc)  # a ResultsFormatError names the run already
        raise ReportError(
            said if said.startswith(where) else f"{where}: the stored run cannot be read: {said}"
        ) from exc
    return RunInfo(
        run_id=str(row["id"]),
        status=str(row.get("status") or "unknown"),
        created_at=row.get("created_at"),
        spec=spec,
        manifest=_manifest(row.get("manifest")),
        results=results,
        store=store_path,
    )


def _read_rows(store: Store, run: RunInfo) -> dict[str, Entry]:
    entries: dict[str, Entry] = {}
    for model in run.spec.models:
        entries[str(model)] = Entry(label=str(model), model=str(model), run=run)
    seen_prompt: set[str] = set()
    for rec in store.iter_score_rows(run.run_id):
        model = str(rec["model"])
        entry = entries.get(model)
        if entry is None:
            entry = entries[model] = Entry(label=model, model=model, run=run)
        entry.scores.append(score_from_row(rec))
        sid = str(rec["sample_id"])
        # The prompt is only a fallback question for samples whose source cannot be reloaded;
        # one copy per sample is enough.
        prompt = None if sid in seen_prompt else rec["prompt"]
        seen_prompt.add(sid)
        entry.raw[(sid, int(rec["repeat"]))] = RawAnswer(
            text=rec["text"],
            error_message=rec["error_message"],
            prompt=prompt,
            reasoning=rec.get("reasoning"),
            finish_reason=rec.get("finish_reason"),
        )
    return entries


def _add_videos(store: Store, run: RunInfo, videos: dict[str, dict[str, list[VideoRef]]]) -> None:
    """Add the videos `run` recorded (the frames its models were shown) to `videos`."""
    by_sample = videos.setdefault(run.data, {})
    for sid, video in store.recorded_videos(run.run_id).items():
        known = by_sample.setdefault(sid, [])
        if video not in known:  # runs that sampled the clip alike show one strip
            known.append(video)


def _resolve(ref: str, db: Path | None, stores: dict[Path, Store]) -> tuple[RunInfo, Store | None]:
    """A run named by id/prefix/latest (in `db`) or by its output folder."""

    def open_store(path: Path, *, may_write: bool = True) -> Store:
        key = path.resolve()
        if key not in stores:
            try:
                stores[key] = Store(path, read_only=True, may_write=may_write)
            except StoreVersionError as exc:
                raise ReportError(str(exc)) from exc
        return stores[key]

    path = Path(ref)
    if path.is_dir():
        res_file = path / "results.json"
        # A FIFO or a link to a device there is named as what it is, not called missing.
        special = not_regular_file(res_file, "results")
        if special is not None:
            raise ReportError(special)
        if not res_file.is_file():
            raise ReportError(
                f"{ref}: folder holds neither results.json (a run) nor report.json with "
                "experiments (an APEx campaign)"
            )
        try:
            results = load_results(res_file)
        except (OSError, ResultsFormatError) as exc:
            raise ReportError(f"not a readable lmmprobe results.json: {exc}") from exc
        run_id = results.run_id
        store_path = db or (Path(results.store) if results.store else None)
        beside = path.parent / DEFAULT_DB.name
        candidates = [p for p in (store_path, beside) if p is not None]
        for cand in candidates:
            try:
                found = cand.is_file()
            except OSError:  # a name the system refuses (too long): no store there
                found = False
            if not found:
                continue
            try:
                # Opening an older store migrates it, a write. Only a store the user named
                # (--db) or the one beside the run folder (where a run's folder goes by
                # default) is taken to be the run's; one named only by results.json's path,
                # relative to whatever folder the run was started in, may be another run's,
                # and is refused instead, saying which command migrates it.
                store = open_store(cand, may_write=db is not None or _same_file(cand, beside))
            except ReportError as exc:
                if db is not None:
                    raise  # the store the user named with --db
                # The store results.json names is a path as the run's working folder saw it
                # (lmmprobe-runs/lmmprobe.db), so from another folder it can name another
                # store: a newer lmmprobe's, or a file that is none. Not this run's: looked
                # for beside the folder next, else the report is made from results.json.
                log.warning("run %s: not the store its results.json names: %s", run_id, exc)
                continue
            try:
                return _run_from_row(store.get_run(run_id), cand), store
            except KeyError:
                continue
        log.warning("run %s: no store holds it; reporting from results.json only", run_id)
        info = RunInfo(
            run_id=run_id,
            status=results.status,
            created_at=None,
            spec=results.spec,
            manifest=results.manifest,
            results=results,
            store=None,
        )
        return info, None
    store_path = db or DEFAULT_DB
    if not store_path.is_file():
        raise ReportError(
            f"{ref!r} is not a run folder, and there is no store at {store_path} to look it up "
            "in (pass --db PATH, or a run folder holding results.json)"
        )
    store = open_store(store_path)
    try:
        run_id = store.resolve_run(ref)
    except KeyError as exc:
        raise ReportError(str(exc.args[0])) from exc
    return _run_from_row(store.get_run(run_id), store_path), store


def _same_file(a: Path, b: Path) -> bool:
    """Whether `a` and `b` name the same file (False when either cannot be looked at)."""
    try:
        return a.samefile(b)
    except OSError:
        return False


def _label_entries(entries: list[Entry]) -> None:
    """Make labels unique: the model with its run's settings, then ``... @run`` on collisions.

    The settings are those a run changed (``model [blind]``, ``model [likelihood]``), as
    `lmmprobe.report.settings.setting_label` names them.
    """
    for e in entries:
        e.label = setting_label(e.model, e.run.spec)
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.label] = counts.get(e.label, 0) + 1
    for e in entries:
        if counts[e.label] > 1:
            e.label = f"{e.label} @{e.run.run_id}"


def _reload_samples(run: RunInfo, warnings: list[str]) -> dict[str, Sample]:
    spec = run.data
    try:
        load = load_source(spec, limit=run.spec.limit)
    except (RegistryError, OSError, ValueError) as exc:  # DataError is a ValueError
        warnings.append(
            f"data {spec!r} of run {run.run_id} could not be reloaded ({exc}); the sample "
            "browser shows the stored prompts without images"
        )
        return {}
    recorded = run.manifest.data if run.manifest is not None else None
    fingerprint = recorded.fingerprint if recorded is not None else None
    # Manifests before fingerprint_version existed hold version 1 fingerprints.
    if recorded is not None and fingerprint and recorded.fingerprint_version != FINGERPRINT_VERSION:
        warnings.append(
            f"data {spec!r} of run {run.run_id} was fingerprinted by an older lmmprobe, so "
            "whether it changed since cannot be checked: the sample browser shows today's "
            "images and questions"
        )
    elif fingerprint:
        try:
            same = data_fingerprint(load.samples) == fingerprint
        except (OSError, ValueError):
            same = False
        if not same:
            warnings.append(
                f"data {spec!r} changed since run {run.run_id}: the sample browser shows "
                "today's images and questions"
            )
    return {s.id: s for s in load.samples}


def _read_cards(cards: str | Path | Mapping[str, ModelCard]) -> tuple[dict[str, ModelCard], str]:
    """Cards by model spec and where they came from; a bad card file is a `ReportError`."""
    from lmmprobe.holistic import TaxonomyError, load_model_cards

    if not isinstance(cards, str | Path):
        return dict(cards), "the given cards"
    try:
        return load_model_cards(cards), str(cards)
    except TaxonomyError as exc:
        # The message already names the file, line, model and field.
        raise ReportError(f"model cards: {exc}") from exc


def _match_cards(
    by_spec: dict[str, ModelCard], source: str, entries: list[Entry], warnings: list[str]
) -> dict[str, ModelCard]:
    """Each entry's card by label; models without a card and unused cards become warnings."""
    from lmmprobe.holistic import TaxonomyError, card_for

    matched: dict[str, ModelCard] = {}
    missing: dict[str, None] = {}
    for e in entries:
        try:
            card = card_for(e.model, by_spec)
        except TaxonomyError as exc:  # several loose matches that disagree
            raise ReportError(f"model cards {source}: {exc}") from exc
        if card is None:
            missing[e.model] = None
        else:
            matched[e.label] = card
    if missing:
        warnings.append(f"no model card in {source} for: {', '.join(missing)}")
    # A card no model uses is most likely a typo in its key: say so rather than drop it.
    unused = [
        key
        for key, card in by_spec.items()
        if not any(card_for(e.model, {key: card}) is not None for e in entries)
    ]
    if unused and entries:
        warnings.append(
            f"model card(s) in {source} match no model of these runs: {', '.join(unused)}"
        )
    return matched


def load_report_data(
    refs: Sequence[str | Path],
    *,
    db: str | Path | None = None,
    samples: bool = True,
    cards: str | Path | Mapping[str, ModelCard] | None = None,
) -> ReportData:
    """Read runs (and APEx campaigns) for a report.

    Args:
        refs: Run ids, unique prefixes, ``latest``, run folders (holding ``results.json``) or
            APEx campaign folders (holding ``report.json`` with ``experiments``).
        db: Store to look run ids up in (default ``./lmmprobe-runs/lmmprobe.db``); for run
            folders it overrides the store named in ``results.json``.
        samples: Reload each run's data to show images and questions in the sample browser.
        cards: Model cards: a YAML/JSON card file (`lmmprobe.holistic.load_model_cards`) or
            cards by model spec. Each entry's model spec is matched with
            `lmmprobe.holistic.card_for`.

    Returns:
        The runs, one entry per (run, model), the reloaded samples, matched cards and any
        warnings.

    Raises:
        ReportError: A reference names no run or campaign, nothing was given at all, or the
            card file is invalid (the message names the file, line, model and field).

    """
    if not refs:
        raise ReportError("name at least one run (a run id, 'latest', or a run folder)")
    by_spec, source = _read_cards(cards) if cards is not None else ({}, None)
    db_path = Path(db) if db is not None else None
    stores: dict[Path, Store] = {}
    runs: list[RunInfo] = []
    entries: list[Entry] = []
    apex_dirs: list[Path] = []
    warnings: list[str] = []
    videos: dict[str, dict[str, list[VideoRef]]] = {}
    seen: set[tuple[str, Path | None]] = set()
    try:
        for ref in refs:
            path = Path(ref)
            try:
                apex = is_apex_dir(path)
            except ReportError as exc:
                if len(refs) == 1:  # nothing else to report
                    raise
                # Named on the terminal and in the report's notes, one line each.
                log.warning("left out: %s", exc)
                warnings.append(f"left out: {exc}")
                continue
            if apex:
                apex_dirs.append(path)
                continue
            run, store = _resolve(str(ref), db_path, stores)
            ident = (run.run_id, run.store.resolve() if run.store else None)
            if ident in seen:
                continue  # the same run named twice (id and folder): report it once
            seen.add(ident)
            runs.append(run)
            if store is not None:
                entries.extend(_read_rows(store, run).values())
                if samples:
                    _add_videos(store, run, videos)
            else:
                for model in run.results.models if run.results is not None else {}:
                    entries.append(Entry(label=str(model), model=str(model), run=run))
                warnings.append(f"run {run.run_id}: no store found; only its results.json is shown")
            if run.status not in ("complete", "complete_with_errors"):
                warnings.append(f"run {run.run_id} is {run.status}: its numbers may be partial")
            models = dict.fromkeys(e.model for e in entries if e.run is run)
            warnings += [f"run {run.run_id}: {n}" for n in run_notes(run.spec, models)]
            if run.results is not None:
                board = leaderboard_notes(run.spec, run.results.models)
                warnings += [f"run {run.run_id}: {n}" for n in board]

            # A headline a judge decided in part is named as judged (results.md gives the
            # rules' own figures beside it).
            warnings += [
                f"run {run.run_id}: {m}: {r.judged_headline.sentence()}"
                for m, r in (run.results.models.items() if run.results is not None else ())
                if m in models and r.judged_headline is not None
            ]
    finally:
        for store in stores.values():
            store.close()
    _label_entries(entries)
    matched = _match_cards(by_spec, source, entries, warnings) if source is not None else {}
    reloaded: dict[str, dict[str, Sample]] = {}
    if samples:
        for run in runs:
            if run.data not in reloaded and any(e.run is run and e.scores for e in entries):
                reloaded[run.data] = _reload_samples(run, warnings)
    return ReportData(runs, entries, reloaded, apex_dirs, warnings, matched, source, videos)
