"""``rules``: an offline, deterministic APEx orchestrator for the query families APEx evaluates.

Origin: APEx (Conti et al.) plans experiments with an LLM; this planner covers the query families
of its evaluation without one, so campaigns run offline and reproducibly. It joins three parts:
`lmmprobe.apex.query` reads the question (data types, transformation groups, classes, "under"
conditions), `lmmprobe.apex.ladders` holds each family's ladder of experiments from easy to hard
(as data), and `lmmprobe.apex.plans` fills a ladder in for the query; this class walks the plan
and decides when to stop.

Stopping is statistical, per model, on the 95% accuracy interval against chance: a model is
resolved when it stayed at chance on the last two experiments, when it was above chance earlier
and no longer is (its limit is found), or when it is above chance on the hardest rung; the report
is sufficient when every model is resolved or the ladder is done.
"""

from __future__ import annotations

from collections.abc import Sequence

from lmmprobe.apex.evaluation import statistical_findings
from lmmprobe.apex.experiments import (
    Conclusions,
    Discussion,
    Initialization,
    Report,
    Sufficiency,
)
from lmmprobe.apex.plans import Plan, plan_query
from lmmprobe.apex.protocol import ORCHESTRATORS, Attempt, PlanningEnv, Reply, latest_record


def _model_history(report: Report, model: str) -> list[str]:
    return [r.verdict for rec in report.experiments for r in rec.results.models if r.model == model]


def resolution(history: Sequence[str], exhausted: bool) -> str | None:
    """Why a model needs no more experiments, or None (the statistical stopping rule)."""
    if not history:
        return None
    above = [v == "above_chance" for v in history]
    if len(history) >= 2 and not any(above):
        return "never above chance, and not in the last two experiments"
    if any(above[:-1]) and not above[-1]:
        return "above chance earlier but not in the latest, harder experiment (limit found)"
    if above[-1] and exhausted:
        return "above chance on the hardest planned experiment"
    return None


class RulesOrchestrator:
    """The offline planner (see the module docstring)."""

    name = "rules"

    def __init__(self) -> None:
        self.plan: Plan | None = None

    def _plan(self, report: Report, env: PlanningEnv) -> Plan:
        if self.plan is None:
            self.plan = plan_query(report.query, env, report.settings.seed)
        return self.plan

    def init(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Read the query into a plan; open questions are the ladder's rungs.

        Raises:
            QueryError: The query fits no supported form.

        """
        plan = self._plan(report, env)
        lines = [f"family: {plan.family}; task: {plan.task}", "ladder:"]
        lines += [f"  {i + 1}. [{r.difficulty}] {r.title}" for i, r in enumerate(plan.rungs)]
        lines += [f"note: {n}" for n in plan.notes]
        return Reply(
            Initialization(open_questions=[r.title for r in plan.rungs][:10]),
            [("planner", "\n".join(lines))],
        )

    def design(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """The next rung of the ladder (after a rejection, the one after it).

        Raises:
            PlanExhausted: No rung is left.

        """
        plan = self._plan(report, env)
        rung, exp = plan.next(report)
        if retries:
            exp = exp.model_copy(
                update={
                    "rationale": f"{exp.rationale} (The previous design was rejected: "
                    f"{retries[-1].error[:200]})"
                }
            )
        return Reply(
            exp, [("planner", f"rung {plan.position}: {rung.title}\n{exp.model_dump_json()}")]
        )

    def discuss(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Statistical findings; open questions are the rungs still ahead."""
        plan = self._plan(report, env)
        ahead = [r.title for r in plan.rungs[plan.position :]][:10]
        findings = statistical_findings(latest_record(report).results)
        disc = Discussion(findings=findings, open_questions=ahead)
        return Reply(disc, [("planner", disc.model_dump_json())])

    def judge(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """The statistical stopping rule, per model."""
        plan = self._plan(report, env)
        reasons = {m: resolution(_model_history(report, m), plan.exhausted) for m in report.models}
        open_models = [m for m, why in reasons.items() if why is None]
        if plan.exhausted:
            verdict = Sufficiency(
                sufficient=True,
                reason=f"the plan's {len(plan.rungs)} experiments have run; "
                + "; ".join(f"{m}: {why or 'not resolved'}" for m, why in reasons.items()),
            )
        elif not open_models:
            verdict = Sufficiency(
                sufficient=True,
                reason="every model is resolved: "
                + "; ".join(f"{m}: {why}" for m, why in reasons.items()),
            )
        else:
            coming = plan.peek(report)
            # Announced as the loop will print it when it runs (question and answers).
            upcoming = (
                f"experiment {len(report.experiments) + 1} ({coming.difficulty}): "
                f"{coming.question} [{' | '.join(a.text for a in coming.answers)}]"
                if coming is not None
                else "no experiment left to build"
            )
            verdict = Sufficiency(
                sufficient=False,
                reason=f"not yet resolved: {', '.join(open_models)}; next: {upcoming}",
            )
        return Reply(verdict, [("planner", verdict.model_dump_json())])

    def conclude(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Per model, what it could do and where it stopped."""
        plan = self._plan(report, env)
        lines = []
        for m in report.models:
            rows = [
                (rec, r) for rec in report.experiments for r in rec.results.models if r.model == m
            ]
            above = [rec for rec, r in rows if r.verdict == "above_chance"]
            if not rows:
                continue
            if len(above) == len(rows):
                hardest = rows[-1][0]
                lines.append(
                    f"{m} can {plan.task}: above chance in all {len(rows)} experiments, the "
                    f"last being E{hardest.index} ({hardest.experiment.difficulty})."
                )
            elif not above:
                lines.append(
                    f"{m} cannot {plan.task} reliably: not above chance in any of "
                    f"{len(rows)} experiments."
                )
            else:
                fails = [rec for rec, r in rows if r.verdict != "above_chance"]
                lines.append(
                    f"{m} can {plan.task} only partly: above chance in "
                    f"{', '.join(f'E{x.index}' for x in above)}; not in "
                    f"{', '.join(f'E{x.index} ({x.experiment.difficulty})' for x in fails)}."
                )
        lines += [f"Note: {n}" for n in plan.notes]
        n_img = report.settings.images_per_answer
        lines.append(
            f"Evidence: {len(report.experiments)} experiments, {n_img} images per answer, "
            "95% cluster-bootstrap intervals against chance."
        )
        return Reply(Conclusions(conclusions=lines[:20]), [("planner", "\n".join(lines))])


@ORCHESTRATORS.register(
    "rules", summary="rules  offline, deterministic planner for APEx's query families"
)
def rules_orchestrator(target: str | None) -> RulesOrchestrator:
    """Build the ``rules`` orchestrator (``rules``; it takes no target).

    Raises:
        ValueError: A target was given (``rules:x``).

    """
    if target:
        raise ValueError(f"the rules orchestrator takes no target (got rules:{target}); use rules")
    return RulesOrchestrator()
