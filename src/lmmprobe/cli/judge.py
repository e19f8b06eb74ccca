"""The judge options of ``lmmprobe run`` and ``lmmprobe judge``, and the lines they print."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lmmprobe._secrets import shown_spec
from lmmprobe.schema import JudgeConfig

if TYPE_CHECKING:
    from lmmprobe.report.model import JudgeResults, ModelResults

__all__ = [
    "JudgeOption",
    "JudgePromptOption",
    "JudgeProtocolOption",
    "JudgeScaleOption",
    "JudgeSeesImageOption",
    "JudgeWhenOption",
    "judge_config",
    "judge_lines",
    "judged_headline_lines",
]

JudgeOption = Annotated[
    list[str] | None,
    typer.Option(
        "--judge",
        metavar="SPEC",
        help="A judge model (any model spec: openai:MODEL@URL, hf:PATH, vllm:...); repeat it "
        "for several judges (majority verdict, mean grade, and their agreement).",
    ),
]
JudgeProtocolOption = Annotated[
    str | None,
    typer.Option(
        "--judge-protocol",
        help="Judge protocol for every row (lmmprobe list judge-protocols) [default: a "
        "benchmark's official one, else lmmprobe-choice / lmmprobe-open].",
    ),
]
JudgeWhenOption = Annotated[
    str | None,
    typer.Option(
        "--judge-when",
        help="miss: rules first, the judge only where they cannot read the answer; always: "
        "every answer [default: the protocol's first allowed mode].",
    ),
]
JudgeSeesImageOption = Annotated[
    bool,
    typer.Option("--judge-sees-image", help="Send the sample's images to the judge too."),
]
JudgePromptOption = Annotated[
    Path | None,
    typer.Option(
        "--judge-prompt",
        help="Your own judge prompt template for lmmprobe-open ({question}, {answer}, "
        "{reference}, {rubric}, {instruction}); checked before the run.",
    ),
]
JudgeScaleOption = Annotated[
    str,
    typer.Option("--judge-scale", help="Scale of lmmprobe-open: binary, 1-5 or 1-10."),
]


def judge_config(
    judges: list[str] | None,
    protocol: str | None,
    when: str | None,
    sees_image: bool,
    prompt: Path | None,
    scale: str,
    *,
    keys: bool = False,
) -> JudgeConfig | None:
    """The run's `JudgeConfig` from the options; None without a ``--judge``.

    With `keys` (a run that sends; not a dry run) each judge's API key must be set, as the
    run's models' keys must be before any of them is asked.

    Raises:
        ValueError: A judge option is given without ``--judge``, a value is not allowed, or a
            judge spec cannot be built (its backend or options, or with `keys` its API key):
            before any model is asked.

    """
    if not judges:
        given = [
            name
            for name, value in (
                ("--judge-protocol", protocol),
                ("--judge-when", when),
                ("--judge-sees-image", sees_image or None),
                ("--judge-prompt", prompt),
                ("--judge-scale", None if scale == "binary" else scale),
            )
            if value is not None
        ]
        if given:
            raise ValueError(f"{', '.join(given)} needs a judge: add --judge SPEC")
        return None
    if when not in (None, "miss", "always"):
        raise ValueError(f"--judge-when {when}: must be miss or always")
    if scale not in ("binary", "1-5", "1-10"):
        raise ValueError(f"--judge-scale {scale}: must be binary, 1-5 or 1-10")
    for spec in dict.fromkeys(judges):
        _check_judge(spec, keys=keys)
    return JudgeConfig.model_validate(
        {
            "judges": judges,
            "protocol": protocol,
            "when": when,
            "sees_image": sees_image,
            "prompt": str(prompt) if prompt else None,
            "scale": scale,
        }
    )


def _check_judge(spec: str, *, keys: bool = False) -> None:
    """Build the judge of `spec` (no call, no key needed), as a run's models are before it starts.

    A judge whose options cannot work was found only after every model had been asked (and
    paid), the run left ``judging_failed`` (re-test 13 #1); `lmmprobe arena judge` refuses it
    the same way.

    Raises:
        ValueError: ``--judge SPEC: what is wrong`` (the spec shown without its secrets).

    """
    from lmmprobe.parse.thinking import tags_for_model
    from lmmprobe.registry import RegistryError
    from lmmprobe.run.runner import load_unkeyed

    try:
        tags_for_model(spec)  # a think= value that cannot be read: here, as a model's is
        _, missing = load_unkeyed(spec)
    except (RegistryError, ValueError, ImportError) as exc:
        raise ValueError(f"--judge {shown_spec(spec)}: {exc}") from None
    if keys and missing is not None:
        # Found only when the judging step built the judge, after every model was asked.
        raise ValueError(
            f"--judge {shown_spec(spec)}: no API key: set the environment variable {missing} "
            "(or name another with key_env=VAR)"
        )


# What each reason for an unjudged verdict means for the next run (docs/judges.md, "Unjudged").
_UNJUDGED_WORDS = {
    "failed call": "failed call(s) (asked again by the same command)",
    "not sent (budget)": "not sent, the budget spent (asked again by the same command)",
    "unreadable reply": "unreadable reply(ies) (stored; read again, not asked again)",
    "truncated": "reply(ies) cut off before the verdict (stored; not asked again)",
    "not asked": "not asked (the run stopped)",
    "image changed": "not asked: the sample's image file changed since the run or cannot "
    "be read (the judge never sees another picture than the model saw)",
}


def _unjudged_words(counts: dict[str, int]) -> str:
    """Unjudged verdicts by why, each with what the next run does about it."""
    return ", ".join(f"{n} {_UNJUDGED_WORDS.get(why, why)}" for why, n in counts.items())


def _why_fewer_requests(protocols: dict[str, str]) -> str:
    """Why one judge request can give several verdicts, for the protocols applied."""
    from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, grouped

    reasons: list[str] = []
    plain = False
    for name in protocols:
        # A recorded protocol this install does not have is not grouped, as far as told.
        many = grouped(JUDGE_PROTOCOLS.get(name)) if name in JUDGE_PROTOCOLS else None
        if many is not None:
            reasons.append(f"{name} grades up to {many.batch} answers in one prompt")
        else:
            plain = True
    if plain or not reasons:
        reasons.append(
            "answers whose judge prompts are identical share one request and its verdict"
        )
    return "; ".join(reasons)


def judge_lines(judge: JudgeResults | None) -> list[str]:
    """What the terminal says about one model's judging: paths, calls, agreement.

    The first line counts answers (by the path that decided each: an answer any judge read
    is decided by judge); each judge's line counts that judge's own verdicts, read and
    unjudged by why, so that with several judges one judge failing every call is told apart
    from the answers the others decided.
    """
    if judge is None:
        return []
    d = judge.decided
    # A file's recorded readings (an import) carry the version "recorded": no judge was called.
    protocols = (
        ", ".join(
            f"{p} {v}" if v == "recorded" else f"{p} v{v}" for p, v in judge.protocols.items()
        )
        or "none applied"
    )
    # Empty answers are settled by rule with no call: said, so the rule count is not read as
    # answers the rules parsed.
    settled = f" ({judge.settled} empty, settled without a judge)" if judge.settled else ""
    first = (
        f"  answers judged ({protocols}): {d.get('rule', 0)} by rule{settled}, "
        f"{d.get('judge', 0)} by judge, {d.get('unjudged', 0)} unjudged"
    )
    per_judge = bool(judge.calls) and all(c.read is not None for c in judge.calls.values())
    unjudged_verdicts = sum(sum(c.unjudged.values()) for c in judge.calls.values())
    if per_judge and unjudged_verdicts != d.get("unjudged", 0):
        # Two judges, one failing every call: the answers the other read are decided, its
        # verdicts are not. Said here, so that "0 unjudged" is not read as "no verdict lost".
        read = sum(c.read or 0 for c in judge.calls.values())
        first += (
            f" (answers no judge read); of the judges' {read + unjudged_verdicts} verdicts, "
            f"{read} read and {unjudged_verdicts} unjudged"
        )
    lines = [first]
    if judge.unjudged and not per_judge:
        # A results file written before each judge's verdicts were counted: the sum of them.
        lines.append(f"  unjudged verdicts: {_unjudged_words(judge.unjudged)}")
    for spec, c in judge.calls.items():
        cost = f", ${c.cost:.4f} at its price" if c.cost is not None else ""
        # Fewer requests than verdicts: said why, so that the verdicts counted above and the
        # requests sent add up. Verdicts left unjudged because the image changed were never
        # requests.
        requested = None if c.verdicts is None else c.verdicts - c.unjudged.get("image changed", 0)
        shared = (
            f" for {requested} verdicts ({_why_fewer_requests(judge.protocols)})"
            if requested is not None and requested != c.requests
            else ""
        )
        verdicts = ""
        if c.read is not None:
            verdicts = f"; its verdicts: {c.read} read"
            if c.unjudged:
                verdicts += f", {sum(c.unjudged.values())} unjudged: {_unjudged_words(c.unjudged)}"
        lines.append(
            f"  judge {shown_spec(spec)}: {c.requests} requests{shared}, {c.cached} from the store, "
            f"{c.called} sent, {c.errors} errors{cost}{verdicts}"
        )
    figures = ", ".join(f"{k} {v:.3f}" for k, v in judge.agreement.items() if isinstance(v, float))
    if figures:
        lines.append(f"  judges agree: {figures}")
    for spec, f in judge.agreement.get("with_rules", {}).items():
        kappa = f" kappa {f['cohen_kappa']:.3f}" if "cohen_kappa" in f else ""
        lines.append(
            f"  judge {shown_spec(spec)} vs rules: {f['percent']:.3f} agree{kappa} "
            f"({f['items']} answers)"
        )
    return lines


def judged_headline_lines(results: ModelResults) -> list[str]:
    """The line saying a model's headline rates are judged (`judged_headline_text`), if so."""
    from lmmprobe.report.results import judged_headline_text

    headline = results.judged_headline
    if headline is None:
        return []
    # The judges are named by their specs as given on the command line: shown as every other
    # line shows a spec (a password in a judge's URL is hidden; results.md's copy is redacted).
    shown = headline.model_copy(update={"judges": [shown_spec(j) for j in headline.judges]})
    return [f"  {judged_headline_text(shown, results.metrics)}"]
