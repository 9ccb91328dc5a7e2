"""`@named_tuple`: a NamedTuple from an annotated class body, at well under half typing.NamedTuple's cost to define.

typing.NamedTuple checks each field's annotation, and under `from __future__ import annotations` every one is a
string it compiles (a ForwardRef): the init's eighteen NamedTuples took ~3 ms of each cold start to define on Python
3.12, most of it those checks (`python -m bench.compare_revisions` shows the init before and after). Such a class is the
collections.namedtuple of the body's fields, in order, with its defaults, methods, properties and docstring: the same
tuple, `_replace`, `_asdict`, `_fields` and `_field_defaults`; the annotations stay as written, unchecked. A method
of one cannot call super() with no arguments (its class cell is the body's, not the tuple's).
"""
from __future__ import annotations

from collections import namedtuple

NOT_COPIED = frozenset({"__module__", "__qualname__", "__dict__", "__weakref__", "__annotations__"})


def named_tuple(body: type) -> type:
    fields = tuple(body.__dict__.get("__annotations__", {}))
    defaults = [body.__dict__[name] for name in fields if name in body.__dict__]
    cls = namedtuple(body.__name__, fields, defaults=defaults, module=body.__module__)
    for name, value in body.__dict__.items():
        if name not in NOT_COPIED and name not in fields:
            setattr(cls, name, value)
    cls.__qualname__ = body.__qualname__
    cls.__annotations__ = dict(body.__dict__.get("__annotations__", {}))
    return cls
