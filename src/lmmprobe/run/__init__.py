"""The runner: expand, batch, schedule, resume through the store, score.

`RayExecutor` (`lmmprobe.run.ray_executor`) imports Ray only when it runs: Ray is an extra.
"""

from lmmprobe.run.cost import CostMeter
from lmmprobe.run.executor import (
    AbortPolicy,
    AuthenticationFailed,
    BatchResult,
    Executor,
    LocalExecutor,
    RunAborted,
    ServerUnhealthy,
    ServerUnreachable,
    SessionExecutor,
    SpecExecutor,
    StopSending,
    call_batch,
    model_session,
    plan_batches,
)
from lmmprobe.run.keys import judge_key, request_key
from lmmprobe.run.manifest import build_manifest, git_commit, library_versions
from lmmprobe.run.progress import NullProgress, ProgressSink, RichProgress
from lmmprobe.run.ray_executor import RayExecutor, ReplicasLost
from lmmprobe.run.runner import (
    InputErrors,
    ModelOutcome,
    RunOutcome,
    answer_requests,
    connect_ray_executor,
    execute_run,
    new_run_id,
    plan_requests,
    run_model,
)
from lmmprobe.run.scoring import UNKNOWN_OPTIONS, normalize_text, score_response, unknown_option

__all__ = [
    "UNKNOWN_OPTIONS",
    "AbortPolicy",
    "AuthenticationFailed",
    "BatchResult",
    "CostMeter",
    "Executor",
    "InputErrors",
    "LocalExecutor",
    "ModelOutcome",
    "NullProgress",
    "ProgressSink",
    "RayExecutor",
    "ReplicasLost",
    "RichProgress",
    "RunAborted",
    "RunOutcome",
    "ServerUnhealthy",
    "ServerUnreachable",
    "SessionExecutor",
    "SpecExecutor",
    "StopSending",
    "answer_requests",
    "build_manifest",
    "call_batch",
    "connect_ray_executor",
    "execute_run",
    "git_commit",
    "judge_key",
    "library_versions",
    "model_session",
    "new_run_id",
    "normalize_text",
    "plan_batches",
    "plan_requests",
    "request_key",
    "run_model",
    "score_response",
    "unknown_option",
]
