"""`@named_tuple`: a NamedTuple from an annotated class body, at a fraction of typing.NamedTuple's cost to define.

typing.NamedTuple checks each field's annotation, and under `from __future__ import annotations` every one is a
string it compiles (a ForwardRef): the init's eighteen NamedTuples took ~3 ms of each cold start to define on Python
3.12, most of it those checks (`python -m bench.compare_revisions` shows the init before and after). And
collections.namedtuple itself compiles a `__new__` for every class (half of its ~55 us) and makes six methods of its
own each time. So such a class is built here directly: the same tuple subclass collections.namedtuple makes of the
body's fields, in order, with their defaults (`_fields`, `_field_defaults`, `_make`, `_replace`, `_asdict`, the
repr, pickling), then the body's methods, properties and docstring; the annotations stay as written, unchecked. Its
`__new__` is compiled once per number of fields and renamed for each class; the other methods are shared. A method of
one cannot call super() with no arguments (its class cell is the body's, not the tuple's).
"""
from __future__ import annotations

import sys
from collections import _tuplegetter  # collections.namedtuple's own field accessor (C on CPython)

NOT_COPIED = frozenset({"__module__", "__qualname__", "__dict__", "__weakref__", "__annotations__"})
_NEW_GLOBALS = {"_tuple_new": tuple.__new__, "__builtins__": {}}
_NEW_CODE: dict[int, object] = {}  # number of fields -> the code of a `__new__` taking that many


def _new(typename: str, fields: tuple[str, ...], defaults: tuple) -> object:
    code = _NEW_CODE.get(len(fields))
    if code is None:
        args = "".join(f"_{index}, " for index in range(len(fields)))
        code = _NEW_CODE[len(fields)] = eval(f"lambda _cls, {args}: _tuple_new(_cls, ({args}))", _NEW_GLOBALS).__code__
    code = code.replace(co_varnames=("_cls", *fields), co_name="__new__", co_qualname=f"{typename}.__new__")
    new = type(_new)(code, _NEW_GLOBALS, "__new__", defaults or None)
    new.__doc__ = f"Create new instance of {typename}({', '.join(fields)})"
    return new


@classmethod
def _make(cls, iterable):
    result = tuple.__new__(cls, iterable)
    if len(result) != len(cls._fields):
        raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
    return result


def _replace(self, /, **kwds):
    result = self._make(map(kwds.pop, self._fields, self))
    if kwds:
        raise ValueError(f"Got unexpected field names: {list(kwds)!r}")
    return result


def __repr__(self):
    return f"{self.__class__.__name__}({', '.join(f'{name}={value!r}' for name, value in zip(self._fields, self))})"


def _asdict(self):
    return dict(zip(self._fields, self))


def __getnewargs__(self):
    return tuple(self)


def named_tuple(body: type) -> type:
    fields = tuple(body.__dict__.get("__annotations__", {}))
    if any(name.startswith("_") for name in fields):
        raise ValueError(f"{body.__name__}: field names cannot start with an underscore: {fields}")
    defaults = tuple(body.__dict__[name] for name in fields if name in body.__dict__)
    namespace = {
        "__doc__": f"{body.__name__}({', '.join(fields)})",
        "__slots__": (),
        "_fields": fields,
        "_field_defaults": dict(zip(fields[len(fields) - len(defaults):], defaults)),
        "__new__": _new(body.__name__, fields, defaults),
        "_make": _make,
        "_replace": _replace,
        "__repr__": __repr__,
        "_asdict": _asdict,
        "__getnewargs__": __getnewargs__,
        "__match_args__": fields,
        "__module__": body.__module__,
    }
    for index, name in enumerate(fields):
        namespace[name] = _tuplegetter(index, sys.intern(f"Alias for field number {index}"))
    for name, value in body.__dict__.items():
        if name not in NOT_COPIED and name not in fields:
            namespace[name] = value
    cls = type(body.__name__, (tuple,), namespace)
    cls.__qualname__ = body.__qualname__
    cls.__annotations__ = dict(body.__dict__.get("__annotations__", {}))
    return cls
