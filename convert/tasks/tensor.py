"""Tensor: every signature input and output served as it is; the gate bounds the error of each output."""
from __future__ import annotations

from pathlib import Path

from convert.errors import ConversionError
from convert.fidelity.tensor import TensorErrorGate
from convert.saved_model_inspect import SavedModelInfo, TensorInfo
from convert.sidecar_fields import distinct, forbid, strings
from convert.tasks.base import Binding, TaskFields, TaskKind, describe, mismatch, names
from function.preprocessing.columns import is_columns

STRING_DTYPES = ("object", "bytes_", "str_")


def ordered_names(declared: list[str] | None, available: dict[str, TensorInfo], field: str) -> list[str]:
    """The order clients see: as the sidecar lists them (every one of them), else sorted by name."""
    if declared is None:
        return sorted(available)
    unknown = [name for name in declared if name not in available]
    if unknown:
        raise mismatch(field, f"names {names(unknown)}, which the serving signature does not have",
                       f"its {field} are {names(available)}")
    missing = [name for name in available if name not in declared]
    if missing and field == "inputs":
        raise mismatch(field, f"leaves out signature input {names(missing)}", "list every input (the model cannot "
                       "run without them), or remove \"inputs\" to take them all, sorted by name")
    if missing:
        raise mismatch(field, f"leaves out signature output {names(missing)}, which would be dropped",
                       "list every output, or remove \"outputs\" to serve them all, sorted by name")
    return list(declared)


class Tensor(TaskKind):
    name = "tensor"
    unused_keys = {"labels": "its outputs are tensors, not classes", "output": "its outputs are tensors, not classes",
                   "multi_label": "its outputs are tensors, not classes",
                   "class_output": "its outputs are tensors, not classes"}

    def parse_fields(self, data: dict, directory: Path) -> TaskFields:
        preprocessing = data.get("preprocessing")
        if not is_columns(preprocessing):  # a structured .keras model's columns are convert's own (lookup_layers.py)
            forbid(data, "preprocessing", self.name, "clients send the input tensors themselves")
        lists = {}
        for field in ("inputs", "outputs"):
            if field in data:
                what = f"signature {field[:-1]} names, in the order clients see them"
                lists[field] = distinct(strings(data[field], field, what), field)
        return TaskFields(inputs=lists.get("inputs"), outputs=lists.get("outputs"), preprocessing=preprocessing)

    def bind(self, sidecar, info: SavedModelInfo) -> Binding:
        inputs = ordered_names(sidecar.inputs, info.inputs, "inputs")
        outputs = ordered_names(sidecar.outputs, info.outputs, "outputs")
        for name in inputs:
            tensor = info.inputs[name]
            if tensor.dtype in STRING_DTYPES:
                raise ConversionError("needs_flex", f"signature input {describe(tensor)} is a string: LiteRT cannot "
                                      "run string ops; tokenize outside the model and feed int32 ids, or (structured "
                                      "columns) convert the .keras file, whose StringLookup layers convert takes out "
                                      "(docs/tensor-models.md)")
            if not tensor.shape:
                raise mismatch("inputs", f"includes {describe(tensor)}, which has no batch dimension",
                               "export the model with batch-first inputs (model.export() does)")
        return Binding(inputs={name: name for name in inputs}, outputs={name: name for name in outputs})

    def gate(self, sidecar, binding: Binding, min_agreement: float | None, reference) -> TensorErrorGate:
        return TensorErrorGate(list(binding.outputs))
