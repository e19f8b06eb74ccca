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

_setattr = object.__setattr__


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
    m = cls.__new__(cls)
    _setattr(m, "__dict__", values)
    _setattr(m, "__pydantic_fields_set__", set(values))
    _setattr(m, "__pydantic_extra__", None)
    private = _PRIVATE.get(cls)
    if private is None:
        private = _PRIVATE[cls] = {
            name: attr.get_default() for name, attr in cls.__private_attributes__.items()
        }
    # A fresh dict per instance, as pydantic gives; None for models without private attributes.
    _setattr(m, "__pydantic_private__", dict(private) if private else None)
    return m


# Default private attribute values per model class (immutable defaults only: None so far).
_PRIVATE: dict[type[BaseModel], dict[str, Any]] = {}
