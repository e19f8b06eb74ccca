"""Building schema objects from values the caller already knows to be valid.

The runner creates several schema objects per sample (requests, their messages, scores) from
values that are valid by construction: fields of validated samples, option lists it has just
built, literal stage names. Validating them again costs more than everything else the runner
does with them on a cached re-run, so these helpers set the fields directly, as pydantic's
``model_construct`` does, minus its per-field alias handling (no schema model uses aliases).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_new = object.__new__
_setattr = object.__setattr__
# pydantic keeps these in slots of BaseModel; their descriptors set them without going through
# BaseModel.__setattr__ (or object.__setattr__'s name lookup).
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def trusted(cls: type[M], values: dict[str, Any]) -> M:
    """An instance of `cls` holding `values` as they are, without validation.

    Only for values that validation would accept unchanged: every field of `cls` must be
    given, of its declared type, and none may be shared with an object that is later
    mutated. The fields set are all of them, as after a constructor call naming every field.

    Args:
        cls: A schema model without aliases or extra fields.
        values: Every field's value, in the model's field order.

    Returns:
        The instance; private attributes start at their defaults.

    """
    known = _CLASSES.get(cls)
    if known is None:
        defaults = {name: a.get_default() for name, a in cls.__private_attributes__.items()}
        known = _CLASSES[cls] = (set(cls.model_fields), defaults or None)
    fields, private = known
    m = _new(cls)
    _setattr(m, "__dict__", values)
    # One fields-set object serves every trusted instance of a class: it names every field,
    # and pydantic only ever adds a field name to it (on assignment), which changes nothing;
    # copies (model_copy, copy.copy) get a set of their own.
    _set_fields_set(m, fields)
    _set_extra(m, None)
    # A fresh dict per instance, as pydantic gives; None for models without private attributes.
    _set_private(m, dict(private) if private else None)
    return m


# Per model class: the set of its field names (shared, see above), and its private
# attributes' defaults (immutable defaults only: None so far) or None when it has none.
_CLASSES: dict[type[BaseModel], tuple[set[str], dict[str, Any] | None]] = {}
