"""Trusted construction: an object built without validation equals the validated one."""

from __future__ import annotations

from lmmprobe.schema import ContentPart, ImageRef, Message, Score
from lmmprobe.schema._trusted import trusted


def test_trusted_equals_validated_construction() -> None:
    values = {"type": "text", "text": "hi", "image": None}
    made = trusted(ContentPart, dict(values))
    checked = ContentPart(**values)
    assert made == checked
    assert made.model_fields_set == checked.model_fields_set
    assert made.model_dump() == checked.model_dump()


def test_private_state_is_per_instance_and_assignment_keeps_every_field_set() -> None:
    a = trusted(ImageRef, {"path": None, "data_b64": None, "renderer": "r", "recipe": {"x": 1}})
    b = trusted(ImageRef, {"path": None, "data_b64": None, "renderer": "r", "recipe": {"x": 1}})
    assert a.__pydantic_private__ is not b.__pydantic_private__
    a.path = "x.png"  # pydantic records the assignment in the fields set
    assert a.model_fields_set == b.model_fields_set == set(ImageRef.model_fields)
    c = a.model_copy(update={"path": None})
    assert c.model_fields_set == set(ImageRef.model_fields)
    assert c.__pydantic_fields_set__ is not a.__pydantic_fields_set__


def test_nested_trusted_objects_round_trip() -> None:
    part = trusted(ContentPart, {"type": "text", "text": "q", "image": None})
    msg = trusted(Message, {"role": "user", "content": [part]})
    assert Message.model_validate(msg.model_dump()) == msg
    score = Score(model="m", sample_id="s", repeat=0, key="k", stage="mark", gold=1, gold_text="b")
    again = trusted(Score, score.model_dump())
    assert again == score and again.model_fields_set == set(Score.model_fields)
