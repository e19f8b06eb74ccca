"""``openai:MODEL[@BASE_URL]``: an OpenAI-compatible chat model as APEx's orchestrator.

Origin: APEx (Conti et al.) drives its loop with an LLM that reads the report and the tool
library and writes experiments as structured output. Here any chat-completions server serves
(vLLM, SGLang, Ollama, hosted APIs). Each step is one request: a system message with the role,
the tool catalog (names, summaries, docstrings, JSON argument schemas) and the classes that can
be drawn; a user message with the step's instruction and the report so far (JSON). The reply
must be one JSON object of the step's schema, requested through ``response_format`` with a JSON
schema (default) or by forcing a function call (``mode=tools``). Temperature is 0 unless set.

A rejected reply is healed in the same conversation: the loop passes back the reply and the
validation error, which are appended as assistant and user messages before asking again. Every
message sent and received is returned to the loop, which stores it in the report's transcript.

Options (``openai:MODEL@URL,option=value``): ``key_env`` (environment variable with the API
key, default ``OPENAI_API_KEY``; local servers need none), ``mode`` (``json_schema`` or
``tools``), ``temperature`` (0, at most 2), ``timeout`` (seconds, 120: the whole request, its
reply's headers and body, not each read; above 0 and at most a week), ``max_tokens`` (4096;
1 to 10,000,000), ``max_retries`` (requests asked again after a failure that may pass: a
timeout, a 5xx, a lost connection; 2, at most 100). A value out of range is refused when the
spec is read, in one line.

Requests go through the `openai:` model backend's bounded path (`post_chat`): a deadline on
the whole exchange, the reply read up to `MAX_REPLY_BYTES` decoded, no redirect followed (a
307 to another host would carry the prompt there), typed errors scrubbed of keys.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from lmmprobe.apex.experiments import (
    Conclusions,
    Discussion,
    Experiment,
    Initialization,
    Report,
    Sufficiency,
)
from lmmprobe.apex.protocol import (
    ORCHESTRATORS,
    Attempt,
    OrchestratorError,
    PlanningEnv,
    Reply,
    Role,
    latest_record,
)
from lmmprobe.models.api_keys import (
    key_env_name,
    redact_record,
    redact_spec,
    resolve_api_key,
    scrub_answer,
    scrub_cut_end,
    scrub_secrets,
)
from lmmprobe.parse.thinking import split_answer
from lmmprobe.spec import parse_spec as parse_grammar

SYSTEM = """\
You are the orchestrator of APEx, a system that answers research questions about large \
multimodal models by programming visual question answering experiments.

An experiment has a question and at least two answers. Each answer carries one select tool \
call that makes a starting image and a list of transform tool calls applied to it; the \
ground truth of an image is the answer whose tools made it. Every model under test is asked \
the question about N images per answer and must pick an answer. Plan from easy to hard: first \
whether a property is present at all (yes/no), then discrimination among alternatives of the \
same kind, then milder severities. Results give accuracy with 95% confidence intervals and the \
chance level.

Rules: a tool call is {{"tool": NAME, "args": {{...}}}} naming one tool of the catalog with \
arguments its schema allows. Text fields hold plain text, never code or file paths. Reply with \
exactly one JSON object following the requested schema and nothing else.

Models under test: {models}

Classes a select call may name ({source}): 'random' for any class, 'random:GROUP' for any \
class of a group, or a class name. Groups and examples:
{groups}

Tool catalog:
{catalog}
"""

STEPS: dict[str, tuple[type[BaseModel], str]] = {
    "init": (
        Initialization,
        "Start the report for this research question: list the open questions that the "
        "experiments must answer.",
    ),
    "design": (
        Experiment,
        "Design the next experiment. Build on the findings so far; do not repeat an experiment "
        "that has been run. Designs listed under 'rejections' failed validation: avoid their "
        "errors.",
    ),
    "discuss": (
        Discussion,
        "Discuss the results of the latest experiment: state the findings (one sentence each, "
        "name the model when it is about one) and the questions still open.",
    ),
    "judge": (
        Sufficiency,
        "Decide whether the report now answers the research question well enough to stop, "
        "and give the reason.",
    ),
    "conclude": (
        Conclusions,
        "Write the conclusions: the answer to the research question, per model where they "
        "differ, citing the experiments.",
    ),
}


MAX_TOKENS = 10_000_000
"""The largest ``max_tokens`` (as the model backend's ``thinking_budget``)."""

MAX_RETRIES = 100
"""The largest ``max_retries`` (the model backend allows 100 attempts)."""

MAX_BACKOFF_S = 30.0
"""The longest wait before a request is asked again (the model backend's ``max_backoff``)."""


@dataclass(frozen=True)
class LLMOptions:
    """Parsed orchestrator options (see the module docstring)."""

    model: str
    base_url: str | None = None
    key_env: str = "OPENAI_API_KEY"
    mode: str = "json_schema"
    temperature: float = 0.0
    timeout: float = 120.0
    max_tokens: int = 4096
    max_retries: int = 2


def parse_spec(spec: str) -> LLMOptions:
    """Parse ``MODEL[@BASE_URL][,option=value...]`` (the part after ``openai:``).

    Raises:
        ValueError: Missing model, unknown option or bad value.

    """
    from lmmprobe.models.openai_api import MAX_SECONDS, check_range, parse_target

    ranges: dict[str, tuple[float, float, str]] = {
        # The model backend's ranges (`openai_api._RANGES`): a NaN, negative or endless
        # timeout, a negative token limit or a million retries is a typo, refused here.
        "timeout": (math.ulp(0.0), MAX_SECONDS, "a number of seconds above 0"),
        "max_tokens": (1, MAX_TOKENS, "a number of tokens, at least 1"),
        "max_retries": (0, MAX_RETRIES, "a whole number, 0 or more"),
    }
    # The grammar is lmmprobe.spec's; `spec` is what follows ``openai:``, as written there.
    parsed = parse_grammar(f"openai:{spec}", "orchestrator")
    model, base_url = parse_target(parsed.target)
    values: dict[str, Any] = {}
    convert: dict[str, Any] = {
        "key_env": key_env_name,
        "mode": str,
        "temperature": float,
        "timeout": float,
        "max_tokens": int,
        "max_retries": int,
    }
    for k, v in parsed.options.items():
        if k not in convert:
            raise ValueError(
                f"openai orchestrator: option {k!r} is not one of {sorted(convert)} as KEY=VALUE"
            )
        try:
            values[k] = convert[k](v)
        except ValueError as exc:
            if k == "key_env":  # its message never shows the value (a key, perhaps)
                raise ValueError(f"openai orchestrator: {exc}") from None
            raise ValueError(f"openai orchestrator: option {k}={v!r} is invalid") from exc
    options = LLMOptions(model=model, base_url=base_url, **values)
    if options.mode not in ("json_schema", "tools"):
        raise ValueError("openai orchestrator: mode must be json_schema or tools")
    if not 0.0 <= options.temperature <= 2.0:
        raise ValueError("openai orchestrator: temperature must lie in [0, 2]")
    for name, (least, most, what) in ranges.items():
        check_range(
            "openai orchestrator", name, parsed.options.get(name), values.get(name), least, most,
            what,
        )  # fmt: skip
    return options


def _catalog_text(env: PlanningEnv) -> str:
    lines = []
    for t in env.catalog:
        schema = t.get("schema", {})
        args = {
            name: {k: v for k, v in prop.items() if k != "title"}
            for name, prop in schema.get("properties", {}).items()
        }
        entry = {
            "name": t["name"],
            "kind": t.get("kind", "transform"),
            "summary": t.get("summary", ""),
            "doc": t.get("doc", ""),
            "args": args,
            "required": schema.get("required", []),
        }
        lines.append(json.dumps(entry, ensure_ascii=False))
    return "\n".join(lines)


def _groups_text(env: PlanningEnv, per_group: int = 12) -> str:
    lines = []
    for group, classes in env.groups().items():
        shown = ", ".join(classes[:per_group])
        more = f" (+{len(classes) - per_group} more)" if len(classes) > per_group else ""
        lines.append(f"- {group}: {shown}{more}")
    return "\n".join(lines) or "- (no groups)"


def step_messages(
    step: str, report: Report, env: PlanningEnv, retries: Sequence[Attempt]
) -> list[dict[str, str]]:
    """The chat messages asking for one step: role and catalog, instruction and state, healing.

    The state is the report as the orchestrator sees it; for ``discuss`` it also names the
    latest experiment. Each rejected attempt follows as the assistant's reply and the error.
    """
    model, instruction = STEPS[step]
    # The models' specs go to the orchestrator's server (a hosted model's provider) with
    # their secrets redacted: a URL's password or ``?api_key=`` was sent as written (re-test
    # 22), in this list and in the report's state. The orchestrator names models in prose only.
    system = SYSTEM.format(
        models=", ".join(f"{redact_spec(m)} ({env.methods.get(m, '?')})" for m in env.models),
        source="retrieved from " + env.collection.source
        if env.collection is not None
        else "generated",
        groups=_groups_text(env),
        catalog=_catalog_text(env),
    )
    state: dict[str, Any] = {"report": redact_record(report.state_for_orchestrator())}
    if step == "discuss":
        state["latest_experiment"] = latest_record(report).index
    user = (
        f"Step: {step}. {instruction}\n\nReply with one JSON object of the schema "
        f"{model.__name__}:\n{json.dumps(model.model_json_schema())}\n\n"
        f"State:\n{json.dumps(state, ensure_ascii=False)}"
    )
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    for a in retries:
        messages.append({"role": "assistant", "content": a.output})
        messages.append(
            {
                "role": "user",
                "content": f"That reply was rejected: {a.error}\nReply again with one "
                f"corrected JSON object of the schema {model.__name__}.",
            }
        )
    return messages


class LLMOrchestrator:
    """APEx's LLM orchestrator over the OpenAI chat-completions protocol."""

    def __init__(self, options: LLMOptions) -> None:
        self.options = options
        # The name is what every message, the terminal and the report show: a password or key
        # in the base URL is never part of it (the base URL itself stays in `options`).
        self.name = redact_spec(
            f"openai:{options.model}" + (f"@{options.base_url}" if options.base_url else "")
        )
        self._key = resolve_api_key(options.key_env, options.base_url, what="the orchestrator")

    def __repr__(self) -> str:  # never show the key
        return f"LLMOrchestrator(model={self.options.model!r}, base_url={self.options.base_url!r})"

    @classmethod
    def from_spec(cls, spec: str) -> LLMOrchestrator:
        """Build from ``MODEL[@BASE_URL][,option=value...]``."""
        return cls(parse_spec(spec))

    def _post(self, body: dict[str, Any]) -> tuple[bytes, bool]:
        """One request through the model backend's bounded path (`post_chat`).

        Raises:
            TimeoutError: No complete reply within ``timeout``.
            openai.APIError: An HTTP error status, or the transport failed.

        """
        from lmmprobe.models.openai_api import chat_client, post_chat

        timeout = self.options.timeout

        async def exchange() -> tuple[bytes, bool]:
            # A client per request: the loop is sync, each request runs in an event loop of its
            # own, and a client cannot move between loops. A step is seconds of a model's work.
            client = chat_client(self._key, self.options.base_url, timeout)
            try:
                return await post_chat(client, body, timeout)
            finally:
                await client.close()

        return asyncio.run(exchange())

    def _request(self, body: dict[str, Any]) -> tuple[Any, bool]:
        """The reply's JSON (as far as it was read) and whether it was cut, retrying failures.

        Raises:
            OrchestratorError: The request failed (after ``max_retries`` more where a retry
                may help), in one line: ``the chat request failed: TYPE: what``.

        """
        try:
            import openai

            from lmmprobe.models.openai_api import chat_error, reply_json
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise OrchestratorError(
                "the openai orchestrator needs the openai client: pip install 'lmmprobe[api]'"
            ) from exc

        hint = (
            f"no key was sent: set the environment variable {self.options.key_env}"
            if self._key == "EMPTY"
            else f"check the API key in the environment variable {self.options.key_env}"
        )
        attempts = self.options.max_retries + 1
        for attempt in range(1, attempts + 1):
            try:
                body_read, cut = self._post(body)
                return reply_json(body_read, cut), cut
            except TimeoutError:
                what = f"timeout: no complete reply within {self.options.timeout:g} s"
                retryable = True
            except (openai.APIError, ValueError) as exc:  # the client's, or a body not JSON
                err = chat_error(exc, hint)
                what, retryable = f"{err.type}: {err}", err.retryable
            if not retryable or attempt == attempts:
                break
            time.sleep(min(MAX_BACKOFF_S, 0.5 * 2.0 ** (attempt - 1)))
        tried = f" (after {attempt} attempts)" if attempt > 1 else ""
        # Servers echo keys in errors; this text goes into the report and the terminal.
        raise OrchestratorError(
            f"{self.name}: the chat request failed: {scrub_secrets(what)}{tried}"
        )

    def reply_text(self, data: Any, *, cut: bool = False) -> str:
        """The program in a chat-completion reply's JSON (any JSON a server sends).

        Args:
            data: The reply's body as JSON (`reply_json`).
            cut: The body was longer than lmmprobe reads, `data` is what its first bytes hold.

        Raises:
            OrchestratorError: It is no chat completion (no choice, content that is not text),
                or the model was cut off inside its thinking.

        """
        choices = data.get("choices") if isinstance(data, dict) else None
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise OrchestratorError(f"{self.name}: the reply has no choices")
        assert isinstance(choice, dict)
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise OrchestratorError(
                f"{self.name}: the reply's message content is {type(content).__name__}, not text"
            )
        finish = choice.get("finish_reason")
        # A reply longer than lmmprobe reads is cut where the reading stopped: a token limit's.
        finish_reason = "length" if cut else finish if isinstance(finish, str) else None
        # A thinking model's reply: only the answer after its thinking is the program (marks
        # of JSON inside the thinking must not be parsed); cut off inside it, there is none.
        thought = split_answer(content, finish_reason=finish_reason)
        if thought.truncated:
            raise OrchestratorError(
                f"{self.name}: the reply was cut off inside its thinking; raise max_tokens "
                f"(now {self.options.max_tokens})"
            )
        text = thought.answer
        calls = message.get("tool_calls")
        if isinstance(calls, list) and calls and isinstance(calls[0], dict):
            fn = calls[0].get("function")
            arguments = fn.get("arguments") if isinstance(fn, dict) else None
            text = arguments if isinstance(arguments, str) and arguments else text
        # The server's text becomes the report's questions, findings and transcript, written
        # as they come: a key it quotes (the request's own, echoed) was in report.json and
        # report.md (re-test 22). Scrubbed as an answer is (`scrub_answer`: the configured
        # keys, a short one as a whole word only, so a key such as "none" or "true" leaves
        # the plan's words and JSON intact), and of a key's first characters where the body's
        # cut went through one.
        text = scrub_answer(text)
        return scrub_cut_end(text) if cut else text

    def _ask(
        self, step: str, report: Report, env: PlanningEnv, retries: Sequence[Attempt]
    ) -> Reply:
        model, _ = STEPS[step]
        messages = step_messages(step, report, env, retries)
        schema = model.model_json_schema()
        kwargs: dict[str, Any] = {
            "model": self.options.model,
            "messages": messages,
            "temperature": self.options.temperature,
            "max_tokens": self.options.max_tokens,
        }
        function = f"submit_{model.__name__.lower()}"
        if self.options.mode == "tools":
            kwargs["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": function,
                        "description": f"Submit the {model.__name__}.",
                        "parameters": schema,
                    },
                }
            ]
            kwargs["tool_choice"] = {"type": "function", "function": {"name": function}}
        else:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": model.__name__, "schema": schema},
            }
        data, cut = self._request(kwargs)
        text = self.reply_text(data, cut=cut)
        exchanged: list[tuple[Role, str]] = []
        for m in messages:
            role = m["role"]
            if role in ("system", "user", "assistant"):
                exchanged.append((role, m["content"]))  # type: ignore[arg-type]
        exchanged.append(("assistant", text))
        return Reply(text, exchanged)

    def init(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Ask for the report's opening questions."""
        return self._ask("init", report, env, retries)

    def design(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Ask for the next experiment."""
        return self._ask("design", report, env, retries)

    def discuss(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Ask for findings on the latest experiment."""
        return self._ask("discuss", report, env, retries)

    def judge(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Ask whether the report suffices."""
        return self._ask("judge", report, env, retries)

    def conclude(self, report: Report, env: PlanningEnv, retries: Sequence[Attempt]) -> Reply:
        """Ask for the conclusions."""
        return self._ask("conclude", report, env, retries)


@ORCHESTRATORS.register(
    "openai",
    summary="openai:MODEL[@BASE_URL][,option=value...]  an OpenAI-compatible chat model plans",
)
def openai_orchestrator(target: str | None) -> LLMOrchestrator:
    """Build the ``openai:MODEL[@BASE_URL][,option=value...]`` orchestrator.

    Raises:
        ValueError: No ``:MODEL`` part, or a bad model or option (see `parse_spec`).

    """
    if target is None:
        raise ValueError("the openai orchestrator needs a model: openai:MODEL[@BASE_URL]")
    return LLMOrchestrator.from_spec(target)
