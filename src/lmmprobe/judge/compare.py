"""A judge compares two runs' answers to the same samples (``lmmprobe compare A B --judge J``).

Each (sample, repeat) both sides answered is shown to the judge with lmmprobe's pairwise
protocol (`lmmprobe.judge.pairwise`, ``lmmprobe-pairwise``): the question as side A's model
was asked it, side A's answer and side B's, in both orders; a verdict that flips with the
order is a tie, and an unreadable or failed reply leaves the pair unjudged (counted apart,
never guessed; a failed call is asked again by the next command). The judge's calls go
through the runner's path (`lmmprobe.run.answer_requests`): stored as they arrive, keyed by
the judge's identity, the protocol and its version and the prompt (which quotes both answers),
so the same command again asks nothing it has stored.

The answers are the text after any thinking (as the judging step reads them); an answer
whose request failed, or that has no text (a likelihood run), is left out with its pair.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from lmmprobe._secrets import redact_spec
from lmmprobe.judge.pairwise import (
    PAIRWISE,
    PairwiseJudgement,
    pairwise_request,
    read_pair,
)
from lmmprobe.judge.step import pairs_nothing_read
from lmmprobe.metrics.agreement import position_consistency
from lmmprobe.models.base import AsyncModel, Model
from lmmprobe.parse.thinking import split_answer, tags_for_model
from lmmprobe.run import (
    CostMeter,
    Executor,
    LocalExecutor,
    ModelOutcome,
    NullProgress,
    ProgressSink,
    answer_requests,
)
from lmmprobe.schema import Request
from lmmprobe.store import Store

__all__ = ["JudgedPair", "PairwiseComparison", "judge_pairs"]


@dataclass
class JudgedPair:
    """One sample's two answers and the judge's verdicts on them.

    Attributes:
        sample_id: The sample.
        repeat: The repeat.
        judgement: Both orders' verdicts, in terms of the answers (A: side A's).
        reason: Why the pair has no verdict, when it has none.

    """

    sample_id: str
    repeat: int
    judgement: PairwiseJudgement
    reason: str | None = None


@dataclass
class PairwiseComparison:
    """What `judge_pairs` found: per pair, and the totals by side.

    Attributes:
        judge: The judge's spec.
        side_a: ``(run, model)`` of side A.
        side_b: ``(run, model)`` of side B.
        pairs: Every pair asked, in sample order.
        left_out: Pairs not asked, by why (an answer missing, failed, or without text).
        calls: The judge's requests (cached, called, errors).
        unsent: Judge requests a budget left unsent (stored as ``budget`` errors, counted in
            ``calls.errors`` too): the same command asks them again.
        nothing_read: Why the judge gave no reply that could be read, when it was asked and
            gave none (every call failed, or every reply was unreadable or cut off); None
            when it gave some. The command then fails: no pair was judged.

    """

    judge: str
    side_a: tuple[str, str]
    side_b: tuple[str, str]
    pairs: list[JudgedPair] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)
    calls: ModelOutcome | None = None
    unsent: int = 0
    nothing_read: str | None = None

    def summary(self) -> dict[str, Any]:
        """Wins, losses and ties per side, unjudged pairs (and why), position consistency, calls."""
        verdicts = Counter(p.judgement.verdict for p in self.pairs)
        readable = [p.judgement for p in self.pairs if p.judgement.consistent is not None]
        calls = self.calls
        return {
            # Redacted as the store records it: the summary is printed and saved (-f json).
            "judge": redact_spec(self.judge),
            "protocol": PAIRWISE.name,
            "version": PAIRWISE.version,
            "a": {"run": self.side_a[0], "model": self.side_a[1]},
            "b": {"run": self.side_b[0], "model": self.side_b[1]},
            "pairs": len(self.pairs),
            "a_wins": verdicts["A"],
            "b_wins": verdicts["B"],
            "ties": verdicts["tie"],
            "unjudged": verdicts[None],
            "unjudged_reasons": dict(Counter(p.reason for p in self.pairs if p.reason)),
            "flips": sum(1 for j in readable if not j.consistent),
            "position_consistency": (
                position_consistency([j.first for j in readable], [j.swapped for j in readable])
                if readable
                else None
            ),
            "left_out": dict(self.left_out),
            "nothing_read": self.nothing_read,
            "calls": (
                {
                    "requests": calls.requests,
                    "cached": calls.cached,
                    "called": calls.called,
                    "errors": calls.errors,
                    "unsent": self.unsent,
                }
                if calls is not None
                else None
            ),
        }


def _answers(store: Store, run_id: str, model: str) -> dict[tuple[str, int], dict[str, Any]]:
    """Each (sample, repeat) of one model of a run: its prompt and answer, or why none."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    tags = tags_for_model(model)
    for rec in store.iter_score_rows(run_id):
        if rec["model"] != model:
            continue
        key = (str(rec["sample_id"]), int(rec["repeat"]))
        if rec["error_type"] is not None:
            out[key] = {"why": "an answer's request failed"}
        elif rec["text"] is None:
            out[key] = {"why": "an answer has no text"}
        else:
            thought = split_answer(
                rec["text"],
                reasoning=rec["reasoning"],
                finish_reason=rec["finish_reason"],
                tags=tags,
            )
            out[key] = {"prompt": rec["prompt"] or "", "text": thought.answer.strip()}
    return out


def judge_pairs(
    store: Store,
    side_a: tuple[str, str],
    side_b: tuple[str, str],
    judge_spec: str,
    judge: Model | AsyncModel,
    *,
    executor: Executor | None = None,
    progress: ProgressSink | None = None,
    meter: CostMeter | None = None,
) -> PairwiseComparison:
    """Have `judge` compare side A's and side B's answers to every sample both answered.

    Args:
        store: The (writable) store holding both runs; the judge's replies are stored in it.
        side_a: ``(run id, model spec)`` of side A.
        side_b: ``(run id, model spec)`` of side B.
        judge_spec: The judge's spec as given (stored with its responses).
        judge: The loaded judge model.
        executor: Where judge requests run (the local executor by default).
        progress: Progress sink (none by default).
        meter: What the judge's calls cost, and their budget (``--max-cost``): once it is
            spent the rest are stored as ``budget`` errors, unsent (`answer_requests`).

    Returns:
        Per-pair verdicts and the totals (`PairwiseComparison.summary`).

    """
    result = PairwiseComparison(judge=judge_spec, side_a=side_a, side_b=side_b)
    answers_a, answers_b = _answers(store, *side_a), _answers(store, *side_b)
    ident = judge.identity.cache_id()
    asked: list[tuple[tuple[str, int], str, str]] = []
    unique: dict[str, Request] = {}
    for key in sorted(answers_a.keys() & answers_b.keys()):
        a, b = answers_a[key], answers_b[key]
        if "why" in a or "why" in b:
            result.left_out[a.get("why") or b["why"]] += 1
            continue
        first = pairwise_request(
            ident, PAIRWISE.prompt(a["prompt"], a["text"], b["text"], image=False)
        )
        swapped = pairwise_request(
            ident, PAIRWISE.prompt(a["prompt"], b["text"], a["text"], image=False)
        )
        unique.setdefault(first.key, first)
        unique.setdefault(swapped.key, swapped)
        asked.append((key, first.key, swapped.key))
    missing = len(answers_a.keys() ^ answers_b.keys())
    if missing:
        result.left_out["answered by one side only"] += missing
    calls = ModelOutcome(spec=judge_spec, identity=judge.identity, scores=[])
    responses = answer_requests(
        judge_spec,
        judge,
        unique,
        store,
        executor=executor or LocalExecutor(),
        progress=progress or NullProgress(),
        outcome=calls,
        meter=meter,
    )
    result.calls = calls
    result.unsent = sum(1 for r in responses.values() if r.error and r.error.type == "budget")
    for (sample_id, repeat), k_first, k_swapped in asked:
        judgement, reason = read_pair(judge_spec, responses.get(k_first), responses.get(k_swapped))
        result.pairs.append(JudgedPair(sample_id, repeat, judgement, reason))
    result.nothing_read = pairs_nothing_read(
        judge_spec, [p.judgement for p in result.pairs], responses.values()
    )
    return result
