"""function/records.py: @named_tuple makes what typing.NamedTuple makes of the same body, as far as any caller can
tell: fields in order, defaults, methods, class methods, properties, the docstring, tuple behaviour."""
from __future__ import annotations

import pickle
from typing import NamedTuple

import pytest

from function.records import named_tuple


@named_tuple
class Made:
    """A record."""

    name: str
    shape: tuple[int, ...]
    scale: float | None = None
    role: str = ""

    @classmethod
    def of(cls, name: str) -> "Made":
        return cls(name, (1,))

    @property
    def rank(self) -> int:
        return len(self.shape)

    def renamed(self, name: str) -> "Made":
        return self._replace(name=name)


class Typed(NamedTuple):
    """A record."""

    name: str
    shape: tuple[int, ...]
    scale: float | None = None
    role: str = ""


def test_the_same_fields_defaults_and_tuple_as_typing_named_tuple():
    made, typed = Made("x", (2, 3)), Typed("x", (2, 3))
    assert Made._fields == Typed._fields and Made._field_defaults == Typed._field_defaults
    assert tuple(made) == tuple(typed) and made == typed and hash(made) == hash(typed)
    assert repr(made) == repr(typed).replace("Typed", "Made") and made._asdict() == typed._asdict()
    assert Made.__doc__ == "A record." and Made.__name__ == "Made" and Made.__module__ == __name__
    assert Made.__annotations__ == {"name": "str", "shape": "tuple[int, ...]", "scale": "float | None", "role": "str"}
    assert not hasattr(made, "__dict__")  # slotted like any namedtuple: no attribute can be added
    assert pickle.loads(pickle.dumps(made)) == made


def test_the_bodys_methods_class_methods_and_properties_come_along():
    made = Made.of("x")
    assert isinstance(made, Made) and made == ("x", (1,), None, "")
    assert made.rank == 1
    renamed = made.renamed("y")
    assert isinstance(renamed, Made) and renamed.name == "y" and renamed.shape == (1,)


def test_the_same_errors_and_matching_as_typing_named_tuple():
    # Built without collections.namedtuple (function/records.py): its refusals must stay the ones callers see there.
    for cls in (Made, Typed):
        with pytest.raises(TypeError, match=r"__new__\(\) missing 1 required positional argument: 'shape'"):
            cls("x")
        with pytest.raises(TypeError, match="Expected 4 arguments, got 2"):
            cls._make(["x", (1,)])
        with pytest.raises(ValueError, match=r"Got unexpected field names: \['size'\]"):
            cls("x", (1,))._replace(size=2)
        match cls("x", (2, 3)):
            case cls(name, shape, scale):
                assert (name, shape, scale) == ("x", (2, 3), None)
    assert Made("x", (1,), role="r") == Typed("x", (1,), role="r")


def test_a_field_name_with_a_leading_underscore_is_refused():
    with pytest.raises(ValueError, match="underscore"):
        @named_tuple
        class Hidden:
            _secret: str
