"""A judge votes on the arena's battles, and how far it agrees with the people who voted.

``lmmprobe arena judge --judge SPEC`` asks a judge model (any spec lmmprobe runs) about the
same battles people voted on in ``lmmprobe serve``'s arena (`lmmprobe.store.battles`): the
prompt the models were asked and the two answers as the raters saw them, with the sample's
image(s) when ``--judge-sees-image`` is given. Each battle is asked in both orders with
lmmprobe's pairwise protocol (`lmmprobe.judge.pairwise`); a verdict that flips with the order
is a tie, an unreadable or failed reply leaves the battle unjudged (counted apart, asked again
on the next run); a judge that gave no reply that could be read at all (a misspelt model, a
server not there) judged nothing, and the command fails saying why, as ``compare --judge``
does. The judge's votes are kept in the store's ``judge_votes`` table
(`lmmprobe.store.battles.put_judge_votes`). Judge calls go through the runner's path: stored
in the store as they arrive, keyed by the judge's identity, the protocol and its version, the prompt (which quotes
both answers) and any image, so a second run asks only what is missing.

Reported:

- judge-human agreement per battle (each human vote against the judge's verdict on that
  battle), with ties as HEMM counts them: ``tie`` and ``both_bad`` are both a tie
  (`lmmprobe.store.battles.WINNER_OF_VOTE`), so there are three outcomes (A wins, B wins,
  tie); percent agreement and Cohen's kappa over the three, and percent agreement over the
  battles where both the human and the judge named a winner ("decided", ties left out);
- the judge's position consistency (`lmmprobe.metrics.agreement.position_consistency`);
- Elo of the models from the human votes and from the judge's verdicts, both with HEMM's
  settings (`lmmprobe.metrics.elo.elo_ratings`: K = 4, start 1000, 1,000 shuffles, median),
  over the same battles (those the judge judged), and Spearman's rho and Kendall's tau
  between the two ratings (`lmmprobe.metrics.ranking.rank_correlation`, 3 models or more).
"""

from __future__ import annotations

import base64
import sqlite3
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from lmmprobe._secrets import redact_spec, shown_spec
from lmmprobe.judge.pairwise import (
    PAIRWISE,
    PairwiseJudgement,
    Verdict,
    pairwise_request,
    read_pair,
)
from lmmprobe.judge.step import pairs_nothing_read
from lmmprobe.metrics.agreement import cohen_kappa, percent_agreement, position_consistency
from lmmprobe.metrics.elo import Battle, check_elo_size, elo_ratings
from lmmprobe.metrics.ranking import rank_correlation
from lmmprobe.models.base import AsyncModel, Model
from lmmprobe.run.cost import CostMeter
from lmmprobe.run.executor import Executor, LocalExecutor
from lmmprobe.run.progress import NullProgress, ProgressSink
from lmmprobe.run.runner import ModelOutcome, answer_requests
from lmmprobe.schema import ImageRef, Request
from lmmprobe.store import Store, queries
from lmmprobe.store.battles import (
    BattleVote,
    JudgeVote,
    battle_texts,
    list_votes,
    put_judge_votes,
)
from lmmprobe.store.sqlite import recorded_file

__all__ = ["ArenaJudgeResult", "JudgedBattle", "judge_battles", "verdict_of_vote"]

Winner = Literal["a", "b", "tie"]

_WINNER_OF_VERDICT: dict[Verdict, Winner] = {"A": "a", "B": "b", "tie": "tie"}


def verdict_of_vote(vote: BattleVote) -> Winner:
    """The human vote as a battle winner, ties as HEMM counts them (``both_bad`` is a tie)."""
    return vote.winner


@dataclass
class JudgedBattle:
    """One human vote and the judge's verdicts on the same battle.

    Attributes:
        vote: The stored human vote (models in the order shown to the rater).
        human: Its winner: ``a``, ``b`` or ``tie`` (``both_bad`` -> ``tie``).
        judgement: The judge's two verdicts (first order, swapped order mapped back); None
            when the battle could not be asked (an answer is no longer stored).
        keys: Store keys of the judge's two responses (first order, swapped order).
        reason: Why the battle has no verdict, when it has none.

    """

    vote: BattleVote
    human: Winner
    judgement: PairwiseJudgement | None = None
    keys: tuple[str, str] | None = None
    reason: str | None = None

    @property
    def judge(self) -> Winner | None:
        """The judge's combined verdict as a battle winner; None when unjudged."""
        if self.judgement is None or self.judgement.verdict is None:
            return None
        return _WINNER_OF_VERDICT[self.judgement.verdict]

    def row(self) -> dict[str, Any]:
        """The battle as a JSON-able row (``--out``): the battle file fields, both votes."""
        v = self.vote
        first = self.judgement.first if self.judgement else None
        swapped = self.judgement.swapped if self.judgement else None
        return {
            "model_a": v.model_a,
            "model_b": v.model_b,
            "winner": self.judge,
            "human": self.human,
            "vote": v.vote,
            "rater": v.rater,
            "battle_id": v.id,
            "run_id": v.run_id,
            "sample_id": v.sample_id,
            "repeat": v.repeat,
            "judge_first": first,
            "judge_swapped": swapped,
            "judge_keys": list(self.keys) if self.keys else None,
            "reason": self.reason,
        }


@dataclass
class ArenaJudgeResult:
    """What `judge_battles` found: per-battle verdicts and the agreement figures.

    Figures are None where they are undefined (no battle judged; fewer than 3 models for the
    rank correlation, with `correlation_note` saying why). `nothing_read` says why the judge
    gave no reply that could be read, when it was asked and gave none (every call failed, or
    every reply was unreadable or cut off; `pairs_nothing_read`): no battle was judged, and
    ``arena judge`` fails.
    """

    judge: str
    protocol: str
    version: str
    sees_image: bool
    battles: list[JudgedBattle]
    requests: int = 0
    cached: int = 0
    called: int = 0
    errors: int = 0
    unsent: int = 0
    """Judge requests a budget left unsent (``budget`` errors, in `errors` too)."""
    percent_agreement: float | None = None
    cohen_kappa: float | None = None
    decided: int = 0
    decided_agreement: float | None = None
    position_consistency: float | None = None
    consistency_n: int = 0
    human_elo: dict[str, float] = field(default_factory=dict)
    judge_elo: dict[str, float] = field(default_factory=dict)
    correlation: dict[str, Any] | None = None
    correlation_note: str | None = None
    nothing_read: str | None = None

    @property
    def judged(self) -> list[JudgedBattle]:
        """The battles with a verdict."""
        return [b for b in self.battles if b.judge is not None]

    @property
    def unjudged(self) -> int:
        """Battles without a verdict (failed or unreadable replies, missing answers)."""
        return len(self.battles) - len(self.judged)

    def summary(self) -> dict[str, Any]:
        """The figures as JSON (``--format json``)."""
        return {
            # Redacted as the store records it: the summary is printed and saved (-f json).
            "judge": redact_spec(self.judge),
            "protocol": self.protocol,
            "protocol_version": self.version,
            "judge_sees_image": self.sees_image,
            "battles": len(self.battles),
            "judged": len(self.judged),
            "unjudged": self.unjudged,
            "coverage": len(self.judged) / len(self.battles) if self.battles else None,
            "judge_calls": {
                "requests": self.requests,
                "cached": self.cached,
                "called": self.called,
                "errors": self.errors,
                "unsent": self.unsent,
            },
            "ties": "HEMM: tie and both_bad are ties",
            "percent_agreement": self.percent_agreement,
            "cohen_kappa": self.cohen_kappa,
            "decided_battles": self.decided,
            "decided_agreement": self.decided_agreement,
            "position_consistency": self.position_consistency,
            "position_consistency_n": self.consistency_n,
            "elo": {
                m: {"human": self.human_elo.get(m), "judge": self.judge_elo.get(m)}
                for m in sorted(set(self.human_elo) | set(self.judge_elo))
            },
            "rank_correlation": self.correlation,
            "rank_correlation_note": self.correlation_note,
        }


def _register_renderers() -> None:
    # A recorded recipe names its renderer; the renderers register themselves on import
    # (as serve's image route does), so a generated picture is drawn again for the judge.
    import lmmprobe.imaging.procedural
    import lmmprobe.imaging.shapes
    import lmmprobe.synth.scenarios  # noqa: F401


def _image_ref(conn: sqlite3.Connection, ref: Any) -> ImageRef:
    """A recorded image reference (samples table) as an `ImageRef` a backend can send."""
    if not isinstance(ref, dict):
        raise ValueError(f"the recorded image reference {ref!r} is not an object")
    digest = ref.get("image")
    if isinstance(digest, str):
        data = queries.image_data(conn, digest)
        if data is None:
            raise ValueError(f"the store keeps no bytes for image {digest}")
        return ImageRef.from_base64(base64.b64encode(data).decode("ascii"))
    if isinstance(ref.get("path"), str):
        # The file as the run recorded it (its sha256): one changed since, or unreadable, is
        # not the picture the model saw, and is never sent as that one.
        image, why = recorded_file(ref)
        if why is not None:
            raise ValueError(why)
        return image
    return ImageRef.model_validate(ref)


def judge_battles(
    store: Store,
    judge_spec: str,
    judge: Model | AsyncModel,
    *,
    sees_image: bool = False,
    runs: Collection[str] | None = None,
    executor: Executor | None = None,
    progress: ProgressSink | None = None,
    shuffles: int = 1000,
    seed: int = 0,
    meter: CostMeter | None = None,
) -> ArenaJudgeResult:
    """Have `judge` vote on every human battle in `store`, in both orders, and compare.

    Args:
        store: The store holding the arena's votes and the answers they compare.
        judge_spec: The judge's spec as given (stored with its responses, named in the result).
        judge: The loaded judge model.
        sees_image: Send each battle's sample image(s) with the prompt.
        runs: Only votes on these runs' answers (every vote by default).
        executor: Where judge requests run (the local executor by default).
        progress: Progress sink (none by default).
        shuffles: Elo shuffles (HEMM: 1,000).
        seed: Seed of the Elo shuffles.
        meter: What the judge's calls cost, and their budget (``--max-cost``): once it is
            spent the rest are stored as ``budget`` errors, unsent (`answer_requests`).

    Returns:
        Per-battle verdicts and the agreement figures.

    Raises:
        EloTooLargeError: The votes are too many to rate over `shuffles`
            (`lmmprobe.metrics.elo.check_elo_size`), checked before any judge call.
        ValueError: ``sees_image`` with a judge that takes no images.

    """
    if sees_image and judge.capabilities.max_images == 0:
        raise ValueError(f"--judge-sees-image: the judge {shown_spec(judge_spec)} takes no images")
    if sees_image:
        _register_renderers()
    ident = judge.identity.cache_id()
    votes = list_votes(store, runs=runs)
    if votes:  # too many to rate: refused before the judge is paid for any of them
        check_elo_size(
            len(votes), len({m for v in votes for m in (v.model_a, v.model_b)}), shuffles
        )
    battles: list[JudgedBattle] = []
    unique: dict[str, Request] = {}
    for vote in votes:
        battle = JudgedBattle(vote=vote, human=verdict_of_vote(vote))
        battles.append(battle)
        texts = battle_texts(store, vote.key_a, vote.key_b)
        a, b = texts.get(vote.key_a), texts.get(vote.key_b)
        if a is None or b is None:
            battle.reason = "an answer of this battle is no longer stored"
            continue
        images: list[ImageRef] = []
        if sees_image:
            recorded = queries.get_sample(store.conn, vote.run_id, vote.sample_id) or {}
            try:
                images = [_image_ref(store.conn, r) for r in recorded.get("images") or []]
            except ValueError as exc:
                battle.reason = f"image: {exc}"
                continue
        keys = []
        for shown_a, shown_b in ((a["text"], b["text"]), (b["text"], a["text"])):
            prompt = PAIRWISE.prompt(a["prompt"], shown_a, shown_b, image=bool(images))
            req = pairwise_request(ident, prompt, images)
            unique.setdefault(req.key, req)
            keys.append(req.key)
        battle.keys = (keys[0], keys[1])
    outcome = ModelOutcome(spec=judge_spec, identity=judge.identity, scores=[])
    responses = answer_requests(
        judge_spec,
        judge,
        unique,
        store,
        executor=executor or LocalExecutor(),
        progress=progress or NullProgress(),
        outcome=outcome,
        meter=meter,
    )
    for battle in battles:
        if battle.keys is None:
            continue
        got_first, got_swapped = (responses.get(k) for k in battle.keys)
        battle.judgement, reason = read_pair(judge_spec, got_first, got_swapped)
        if battle.judge is None:
            battle.reason = reason
    put_judge_votes(
        store,
        [
            JudgeVote(
                battle_id=b.vote.id,
                judge=judge_spec,
                protocol=PAIRWISE.name,
                version=PAIRWISE.version,
                sees_image=sees_image,
                key_first=b.keys[0] if b.keys else None,
                key_swapped=b.keys[1] if b.keys else None,
                first=b.judgement.first if b.judgement else None,
                swapped=b.judgement.swapped if b.judgement else None,
                winner=b.judge,
                reason=b.reason,
            )
            for b in battles
        ],
    )
    result = ArenaJudgeResult(
        judge=judge_spec,
        protocol=PAIRWISE.name,
        version=PAIRWISE.version,
        sees_image=sees_image,
        battles=battles,
        requests=outcome.requests,
        cached=outcome.cached,
        called=outcome.called,
        errors=outcome.errors,
        unsent=sum(1 for r in responses.values() if r.error and r.error.type == "budget"),
        nothing_read=pairs_nothing_read(
            judge_spec, [b.judgement for b in battles], responses.values()
        ),
    )
    _figures(result, shuffles=shuffles, seed=seed)
    return result


def _elo(rows: Iterable[tuple[str, str, Winner]], shuffles: int, seed: int) -> dict[str, float]:
    return elo_ratings([Battle(a, b, w) for a, b, w in rows], shuffles=shuffles, seed=seed)


def _figures(result: ArenaJudgeResult, *, shuffles: int, seed: int) -> None:
    judged = result.judged
    if not judged:
        return
    humans = [b.human for b in judged]
    verdicts = [b.judge for b in judged]
    result.percent_agreement = percent_agreement(humans, verdicts)
    result.cohen_kappa = cohen_kappa(humans, verdicts)
    decided = [(h, j) for h, j in zip(humans, verdicts, strict=True) if "tie" not in (h, j)]
    result.decided = len(decided)
    if decided:
        result.decided_agreement = sum(h == j for h, j in decided) / len(decided)
    both = [
        b.judgement
        for b in result.battles
        if b.judgement is not None and b.judgement.consistent is not None
    ]
    result.consistency_n = len(both)
    if both:
        result.position_consistency = position_consistency(
            [j.first for j in both], [j.swapped for j in both]
        )
    result.human_elo = _elo(
        ((b.vote.model_a, b.vote.model_b, b.human) for b in judged), shuffles, seed
    )
    result.judge_elo = _elo(
        ((b.vote.model_a, b.vote.model_b, b.judge) for b in judged if b.judge), shuffles, seed
    )
    try:
        result.correlation = rank_correlation(result.human_elo, result.judge_elo)
    except ValueError as exc:
        result.correlation_note = str(exc)
