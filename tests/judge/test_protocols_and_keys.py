"""lmmprobe's generic judge protocols, judge prompt templates and judge keys (issue 26).

What a user relies on: the generic prompts are the documented ones (docs/judges.md quotes them
verbatim), replies are read strictly (anything else is unjudged, never guessed), a template of
one's own is checked before the run, and a judge answer's key changes with the judge, the
protocol version, the rendered prompt, the image and the repeat, and with nothing else.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from lmmprobe.judge.protocol import JUDGE_PROTOCOLS, JudgeItem, delimit
from lmmprobe.judge.protocols.lmmprobe_choice import CHOICE_TEMPLATE, ChoiceProtocol
from lmmprobe.judge.protocols.lmmprobe_open import INSTRUCTIONS, OPEN_TEMPLATE, OpenProtocol
from lmmprobe.judge.template import TemplateError, load_template
from lmmprobe.run.keys import judge_key, request_key
from lmmprobe.schema import ContentPart, ImageRef, Message, Request, Sample, Score

DOCS = Path(__file__).resolve().parents[2] / "docs" / "judges.md"


def _choice_item(stage: str = "unparsed", answer: str = "the feline one") -> JudgeItem:
    sample = Sample(id="s", question="Which animal?", choices=["cat", "dog"], answer=0)
    score = Score(model="m", sample_id="s", repeat=0, key="k", stage=stage,  # type: ignore[arg-type]
                  correct=False, gold=0, gold_text="cat", marks=["A", "B"],
                  options=["dog", "cat"], order=[1, 0])  # fmt: skip
    return JudgeItem(sample, answer, score)


def test_choice_prompt_shows_the_options_as_the_model_saw_them() -> None:
    prompt = ChoiceProtocol().prompt(_choice_item())
    assert prompt.system is None
    assert (
        "Options:\nA. dog\nB. cat\nAnswer (the text inside the model_answer block below, "
        "which ends only at the closing tag carrying the same id as its opening tag):\n"
        + delimit("the feline one", "model_answer")
        in prompt.user
    )


@pytest.mark.parametrize(
    ("reply", "reading", "value"),
    [("B", "B", 1.0), ("(b).", "B", 1.0), (" A ", "A", 0.0), ("NONE", "NONE", 0.0)],
)
def test_choice_reply_is_read_as_one_mark(reply: str, reading: str, value: float) -> None:
    got = ChoiceProtocol().read(reply, _choice_item())
    assert got is not None and (got.reading, got.value) == (reading, value)


@pytest.mark.parametrize("reply", ["", "A or B", "The answer is B", "C", "maybe"])
def test_an_unreadable_choice_reply_is_no_verdict(reply: str) -> None:
    assert ChoiceProtocol().read(reply, _choice_item()) is None


def test_choice_rules_decide_where_the_pipeline_read_an_option() -> None:
    item = _choice_item(stage="mark")
    read = replace(item, score=item.score.model_copy(update={"prediction": 0, "correct": True}))
    rule = ChoiceProtocol().rule(read)
    assert rule is not None and (rule.reading, rule.value) == ("B", 1.0)
    assert ChoiceProtocol().rule(_choice_item()) is None
    assert not ChoiceProtocol().applies(_choice_item(stage="truncated"))


def _open_item(answer: str = "Paris") -> JudgeItem:
    sample = Sample(id="o", question="Capital of France?", answer=["Paris"],
                    formulation="open_ended", metadata={"rubric": "names the city"})  # fmt: skip
    score = Score(model="m", sample_id="o", repeat=0, key="k", stage="match", gold=["Paris"],
                  gold_text="Paris")  # fmt: skip
    return JudgeItem(sample, answer, score)


@pytest.mark.parametrize(
    ("scale", "reply", "value"),
    [("binary", "Correct.", 1.0), ("binary", "incorrect", 0.0), ("binary", "yes", None),
     ("1-5", "4", 4.0), ("1-5", "Grade: 5", 5.0), ("1-5", "4/5", 4.0), ("1-5", "6", None),
     ("1-10", "10", 10.0), ("1-10", "about 7", None)],
)  # fmt: skip
def test_open_replies_are_read_on_the_scale(scale: str, reply: str, value: float | None) -> None:
    got = OpenProtocol(scale=scale).read(reply, _open_item())  # type: ignore[arg-type]
    assert (got.value if got else None) == value


def test_open_prompt_and_version() -> None:
    p = OpenProtocol(scale="1-5")
    text = p.prompt(_open_item()).user
    assert "Reference answer: Paris\nRubric: names the city\nModel's answer (the text" in text
    assert f"\n{delimit('Paris', 'model_answer')}\n" in text
    assert text.endswith(INSTRUCTIONS["1-5"])
    assert p.version == "2:1-5" and OpenProtocol().version == "2:binary"
    assert isinstance(JUDGE_PROTOCOLS.get("lmmprobe-open"), OpenProtocol)


def test_generic_prompts_are_quoted_verbatim_in_the_docs() -> None:
    doc = DOCS.read_text()
    for text in (CHOICE_TEMPLATE, OPEN_TEMPLATE, *INSTRUCTIONS.values()):
        assert text in doc


def test_own_template_is_checked_and_versions_the_protocol(tmp_path: Path) -> None:
    good = tmp_path / "t.txt"
    good.write_text("Q {question}\nA {answer}\nRef {reference} {{literal}}\n{instruction}")
    template = load_template(good)
    p = OpenProtocol(template=template)
    assert re.fullmatch(r"2:binary:custom-[0-9a-f]{12}", p.version)
    assert p.prompt(_open_item()).user.startswith(
        f"Q Capital of France?\nA {delimit('Paris', 'model_answer')}\nRef Paris {{literal}}"
    )
    for body, needle in [
        ("{question} {answer} {bogus}", "unknown placeholder {bogus}"),
        ("{question}", "missing required placeholder {answer}"),
        ("{question} {answer!r}", "takes no format spec"),
        ("{question} {answer", "not a valid template"),
    ]:
        good.write_text(body)
        with pytest.raises(TemplateError, match=re.escape(needle)) as err:
            load_template(good)
        assert str(good) in str(err.value)


def _req(text: str, images: list[ImageRef] | None = None) -> Request:
    parts = [ContentPart(type="image", image=i) for i in range(len(images or []))]
    parts.append(ContentPart(type="text", text=text))
    return Request(sample_id="s", method="generate", prompt=text, images=images or [],
                   messages=[Message(role="user", content=parts)])  # fmt: skip


def test_judge_key_changes_with_what_changes_the_verdict_only() -> None:
    base = judge_key("judge-a", "lmmprobe-choice", "1", _req("prompt quoting answer X"))
    assert base == judge_key("judge-a", "lmmprobe-choice", "1", _req("prompt quoting answer X"))
    # The sample id and repeat of the judged answer are not part of it.
    other = _req("prompt quoting answer X").model_copy(update={"sample_id": "t", "repeat": 3})
    assert judge_key("judge-a", "lmmprobe-choice", "1", other) == base
    changed = {
        judge_key("judge-b", "lmmprobe-choice", "1", _req("prompt quoting answer X")),
        judge_key("judge-a", "lmmprobe-open", "1", _req("prompt quoting answer X")),
        judge_key("judge-a", "lmmprobe-choice", "2", _req("prompt quoting answer X")),
        judge_key("judge-a", "lmmprobe-choice", "1", _req("prompt quoting answer Y")),
        judge_key("judge-a", "lmmprobe-choice", "1", _req("prompt quoting answer X"), attempt=1),
        judge_key("judge-a", "lmmprobe-choice", "1",
                  _req("prompt quoting answer X", [ImageRef.from_base64("iVBORw0KGgo=")])),
    }  # fmt: skip
    assert base not in changed and len(changed) == 6
    # A model request's key is untouched by all this.
    assert request_key("judge-a", _req("prompt quoting answer X")) != base
