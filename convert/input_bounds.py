"""The largest inputs a converted model takes, found in the model itself and written to its manifest, so that the
function refuses with a 400 what the interpreter would fail on (docs/model-format.md, "Input bounds"):

- `max_shape`: each open dimension's largest size, probed by running the model with every open dimension of every
  input at one length (one length for all, because a text model's input_ids and attention_mask must agree), from
  the shortest it runs at (1, or a convolution's width for one over a sequence without padding);
- `value_range`: for an integer input that indexes a table (GATHER or EMBEDDING_LOOKUP, through casts, reshapes
  and the negative-index wrap TensorFlow adds), 0 to the smallest such table's rows - 1, checked by running the
  model at both ends.
"""
from __future__ import annotations

import numpy as np

from convert.errors import ConversionError
from convert.litert_model import LiteRTModel

# The largest open dimension probed; a model that runs at this length is recorded as taking this much (the
# function's MAX_TENSOR_ELEMENTS caps every tensor anyway). Lengths double from FIRST_PROBE, then bisect.
PROBE_LIMIT = 4096
FIRST_PROBE = 16
# op -> (position of the indices, position of the table) among its inputs
INDEX_OPS = {"GATHER": (1, 0), "EMBEDDING_LOOKUP": (0, 1)}
# Ops an id flows through unchanged in meaning on its way to a lookup (TensorFlow writes ids < 0 as ids + rows,
# selected where ids < 0: ADD and SELECT_V2).
PASS_THROUGH = frozenset({"CAST", "ADD", "SELECT", "SELECT_V2", "RESHAPE", "EXPAND_DIMS", "SQUEEZE", "IDENTITY"})


def input_bounds(content: bytes) -> dict[str, dict]:
    """input name -> the bound fields of its manifest entry ({} when it has none)."""
    model = LiteRTModel(content)
    tables = _table_rows(model)
    bounds: dict[str, dict] = {name: {} for name in model.inputs}
    for name, rows in tables.items():
        bounds[name]["value_range"] = [0, rows - 1]
    smallest = _smallest_length(content, model, tables) if _open_inputs(model) else None
    length = _largest_length(content, model, tables, smallest) if smallest is not None else None
    for name, details in model.inputs.items():
        if any(dim < 0 for dim in details.shape[1:]):
            bounds[name]["max_shape"] = [-1, *(length if dim < 0 else dim for dim in details.shape[1:])]
    for name, rows in tables.items():
        _check_range(content, model, tables, name, rows, smallest)
    return bounds


def _open_inputs(model: LiteRTModel) -> list[str]:
    return [name for name, details in model.inputs.items() if any(dim < 0 for dim in details.shape[1:])]


def _table_rows(model: LiteRTModel) -> dict[str, int]:
    """Integer input -> the rows of the smallest table its values index, for inputs that index one."""
    interpreter = model.interpreter
    ops = interpreter._get_ops_details()  # noqa: SLF001  (LiteRT has no public op listing)
    tensors = {details["index"]: details for details in interpreter.get_tensor_details()}
    signature = model.runner.get_input_details()
    rows: dict[str, int] = {}
    for name, details in signature.items():
        if np.dtype(details["dtype"]).kind not in "iu":
            continue
        reached, frontier = {details["index"]}, [details["index"]]
        while frontier:
            tensor = frontier.pop()
            for op in ops:
                operands = [int(index) for index in op["inputs"]]
                if tensor not in operands:
                    continue
                if op["op_name"] in INDEX_OPS:
                    indices, table = INDEX_OPS[op["op_name"]]
                    if len(operands) > table and operands[indices] == tensor and len(tensors[operands[table]]["shape"]):
                        size = int(tensors[operands[table]]["shape"][0])
                        rows[name] = min(rows.get(name, size), size)
                elif op["op_name"] in PASS_THROUGH:
                    for output in (int(index) for index in op["outputs"]):
                        if output not in reached and np.dtype(tensors[output]["dtype"]).kind in "iu":
                            reached.add(output)
                            frontier.append(output)
    return rows


def _feed(model: LiteRTModel, length: int | None, tables: dict[str, int], fill: dict[str, int]) -> dict:
    feed = {}
    for name, details in model.inputs.items():
        shape = [1, *(length if dim < 0 else dim for dim in details.shape[1:])]
        feed[name] = np.full(shape, fill.get(name, 1 if name not in tables else 0), dtype=details.dtype)
    return feed


def _runs(content: bytes, model: LiteRTModel, tables: dict[str, int], length: int | None,
          fill: dict[str, int] | None = None) -> bool:
    """Whether one instance at `length` (ones, ids 0 unless `fill` says) runs; a fresh interpreter each time, since
    a failed resize may leave one unusable."""
    probe = LiteRTModel(content)
    try:
        probe.invoke_prepared(_feed(model, length, tables, fill or {}))
    except (RuntimeError, ValueError):
        return False
    return True


def _smallest_length(content: bytes, model: LiteRTModel, tables: dict[str, int]) -> int:
    """1 for most models; more for one that cannot run that short (a convolution over a sequence without padding
    needs its kernel's width): lengths double from 2, then bisect. The function refuses shorter requests with
    400 invalid_shape, as the model itself fails on them."""
    if _runs(content, model, tables, 1):
        return 1
    bad, length = 1, 2
    while length <= PROBE_LIMIT and not _runs(content, model, tables, length):
        bad, length = length, length * 2
    if length > PROBE_LIMIT:
        raise ConversionError("input_bounds", f"the model does not run with its open dimensions "
                              f"({', '.join(_open_inputs(model))}) at any length from 1 to {PROBE_LIMIT}")
    return _edge(content, model, tables, good=length, bad=bad)


def _largest_length(content: bytes, model: LiteRTModel, tables: dict[str, int], smallest: int) -> int:
    good, length = smallest, max(FIRST_PROBE, smallest * 2)
    while length <= PROBE_LIMIT and _runs(content, model, tables, length):
        good, length = length, length * 2
    if good == PROBE_LIMIT:
        return good
    return _edge(content, model, tables, good=good, bad=length)


def _edge(content: bytes, model: LiteRTModel, tables: dict[str, int], good: int, bad: int) -> int:
    """The length next to `bad` that still runs, by bisection: `good` runs, `bad` does not, on either side of it."""
    while abs(bad - good) > 1:
        middle = (good + bad) // 2
        good, bad = (middle, bad) if _runs(content, model, tables, middle) else (good, middle)
    return good


def _check_range(content: bytes, model: LiteRTModel, tables: dict[str, int], name: str, rows: int,
                 short: int | None) -> None:
    """The table read from the graph is the one that bounds the input: its last row runs, one more does not (at
    the shortest length the model runs at; None: no open dimension)."""
    if not _runs(content, model, tables, short, {name: rows - 1}) or _runs(content, model, tables, short,
                                                                           {name: rows}):
        raise ConversionError("input_bounds", f"input {name!r} looks like ids into a table of {rows} rows, but the "
                              f"model does not run exactly on ids 0 to {rows - 1}")
