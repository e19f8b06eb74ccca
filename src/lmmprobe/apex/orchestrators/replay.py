"""``replay:REPORT.json``: re-run a saved campaign's exact experiments, on other models.

Origin: an lmmprobe addition to APEx (Conti et al.). APEx's campaigns depend on what its LLM
happened to design, so two models evaluated in two campaigns are not compared on the same
experiments. Replay takes the experiments of a saved report.json, in order, and (with the saved
settings: seed, images per answer, abstention, image size) rebuilds identical datasets, so any
set of models can be compared on exactly those experiments. Findings are the statistical ones,
the campaign is sufficient once every saved experiment has run, and conclusions summarize the
verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from lmmprobe._file_kind import not_regular_file
from lmmprobe._mapping_file import MappingFileError, read_mapping
from lmmprobe.apex.evaluation import fallback_conclusions, statistical_findings
from lmmprobe.apex.experiments import (
    Conclusions,
    Discussion,
    Experiment,
    Initialization,
    Report,
    Settings,
    Sufficiency,
)
from lmmprobe.apex.protocol import (
    ORCHESTRATORS,
    Attempt,
    OrchestratorError,
    PlanExhausted,
    PlanningEnv,
    Reply,
    latest_record,
)


class ReplayOrchestrator:
    """Plays back the experiments of a saved report, in order."""

    def __init__(self, saved: Report, source: str = "report") -> None:
        if not saved.experiments:
            raise OrchestratorError(f"{source}: the saved report has no experiments to replay")
        self.saved = saved
        self.source = source
        self.name = f"replay:{source}"
        self.saved_settings: Settings = saved.settings.model_copy(
            update={"max_experiments": len(saved.experiments)}
        )

    @classmethod
    def from_file(cls, path: str | Path) -> ReplayOrchestrator:
        """Read a report.json written by an earlier campaign.

        Raises:
            OrchestratorError: The file is missing or is not an APEx report.

        """
        p = Path(path)
        if not p.is_file():
            unreadable = not_regular_file(p, "a report")
            raise OrchestratorError(f"replay: {unreadable or f'no report file {str(p)!r}'}")
        try:
            # The bounded reader every settings file goes through: a size cap, nesting and
            # keys given twice refused, one line naming the file.
            data, _ = read_mapping(p, what="report fields")
            saved = Report.model_validate(data)
        except MappingFileError as exc:
            raise OrchestratorError(f"replay: {p} is not an APEx report.json: {exc}") from None
        except ValidationError as exc:
            raise OrchestratorError(
                f"replay: {p} is not an APEx report.json: {_first_problem(exc)}"
            ) from None
        # The path as given, folder included: it is recorded as the campaign's orchestrator
        # (``replay:PATH``), which must still name the file (its name alone is report.json).
        return cls(saved, str(path))

    def _experiment(self, report: Report) -> Experiment | None:
        i = len(report.experiments)
        return self.saved.experiments[i].experiment if i < len(self.saved.experiments) else None

    def init(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """The saved campaign's opening questions."""
        n = len(self.saved.experiments)
        note = f"replaying {n} experiments of {self.source} (query: {self.saved.query!r})"
        return Reply(
            Initialization(open_questions=list(self.saved.open_questions)[:10]),
            [("planner", note)],
        )

    def design(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """The next saved experiment, unchanged."""
        exp = self._experiment(report)
        if exp is None:
            raise PlanExhausted("replay: every saved experiment has been run")
        if retries:
            # A saved experiment that no longer validates (a tool changed) cannot be healed by
            # replay; say so rather than substitute another.
            raise OrchestratorError(
                f"replay: saved experiment {len(report.experiments) + 1} no longer validates: "
                f"{retries[-1].error}"
            )
        return Reply(exp, [("planner", exp.model_dump_json())])

    def discuss(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Findings from the numbers."""
        results = latest_record(report).results
        return Reply(Discussion(findings=statistical_findings(results)), [])

    def judge(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Sufficient once every saved experiment has run."""
        done, total = len(report.experiments), len(self.saved.experiments)
        verdict = Sufficiency(
            sufficient=done >= total,
            reason=f"replayed {done} of {total} saved experiments",
        )
        return Reply(verdict, [("planner", verdict.model_dump_json())])

    def conclude(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Per model, the experiments it answered above chance."""
        lines = [
            f"Replay of {self.source} ({self.saved.query!r}) on {', '.join(report.models)}.",
            *fallback_conclusions(report),
        ]
        return Reply(Conclusions(conclusions=lines), [])


def _first_problem(exc: ValidationError) -> str:
    """A validation error in one line: the first field and what is wrong, never its value."""
    errors = exc.errors(include_url=False, include_input=False)
    first = errors[0]
    field = ".".join(str(part) for part in first["loc"]) or "the report"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{field}: {first['msg']}{more}"


@ORCHESTRATORS.register(
    "replay", summary="replay:REPORT.json  re-run a saved campaign's experiments, in order"
)
def replay_orchestrator(target: str | None) -> ReplayOrchestrator:
    """Build the ``replay:REPORT.json`` orchestrator.

    Raises:
        ValueError: No report file named.
        OrchestratorError: The file is missing or is not an APEx report.

    """
    if not target:
        raise ValueError("the replay orchestrator needs a report: replay:REPORT.json")
    return ReplayOrchestrator.from_file(target)
