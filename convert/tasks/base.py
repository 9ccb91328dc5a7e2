"""What a task kind is to convert: its sidecar fields, the checks of the sidecar against the SavedModel's
signature, and the fidelity gate that judges a conversion."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from convert.errors import ConversionError
from convert.fidelity.base import Gate
from convert.saved_model_inspect import SavedModelInfo, TensorInfo
from convert.sidecar import Sidecar
from convert.sidecar_fields import forbid


@dataclass(frozen=True)
class TaskFields:
    """The task-specific part of a sidecar, checked and normalised (defaults filled in)."""
    labels: list[str] | None = None
    output: str | None = None  # probabilities | logits
    preprocessing: dict | None = None
    inputs: dict[str, str] | list[str] | None = None  # role -> signature input name, or (tensor) names in order
    outputs: dict[str, str] | list[str] | None = None
    multi_label: bool = False  # classifiers: each label its own sigmoid unit, answered at or above a threshold
    class_output: str | None = None  # image classifiers with several outputs: the output the labels score


@dataclass(frozen=True)
class Binding:
    """Which signature tensors the function feeds and reads, under which role, in the manifest's order.
    For the tensor task a tensor's role is its own name."""
    inputs: dict[str, str]  # role -> signature input name
    outputs: dict[str, str]  # role -> signature output name


class TaskKind:
    name: ClassVar[str]
    # Schema keys this task has no use for, with the reason a refusal gives.
    unused_keys: ClassVar[dict[str, str]] = {}
    uses_min_agreement: ClassVar[bool] = False  # --min-agreement applies to top-1 agreement only

    def parse(self, data: dict, directory: Path) -> TaskFields:
        """The task's own sidecar fields; keys it has no use for are refused with their reason."""
        for key, reason in self.unused_keys.items():
            forbid(data, key, self.name, reason)
        return self.parse_fields(data, directory)

    def parse_fields(self, data: dict, directory: Path) -> TaskFields:
        raise NotImplementedError

    def bind(self, sidecar: Sidecar | None, info: SavedModelInfo) -> Binding:
        raise NotImplementedError

    def gate(self, sidecar: Sidecar | None, binding: Binding, min_agreement: float | None,
             reference: dict) -> Gate:
        raise NotImplementedError


def mismatch(field: str, problem: str, fix: str) -> ConversionError:
    """The sidecar disagrees with the SavedModel: one line naming the sidecar field and what to write instead."""
    return ConversionError("sidecar_mismatch", f"sidecar.json: \"{field}\" {problem}: {fix}")


def shape_text(shape: tuple[int | None, ...]) -> str:
    """(N, 8, 8, 1): N for the batch, ? for any other open dimension."""
    dims = ["N" if index == 0 and dim is None else "?" if dim is None else str(dim) for index, dim in enumerate(shape)]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def describe(tensor: TensorInfo) -> str:
    return f"'{tensor.name}' ({tensor.dtype} {shape_text(tensor.shape)})"


def names(tensors) -> str:
    return ", ".join(f"'{name}'" for name in tensors) or "none"


def bind_roles(declared: dict[str, str], info: SavedModelInfo, task: str) -> dict[str, str]:
    """The sidecar's role -> input name map, every name a real input and every input given a role."""
    for role, name in declared.items():
        if name not in info.inputs:
            raise mismatch(f"inputs.{role}", f"names '{name}', which the serving signature does not have",
                           f"use one of its inputs: {names(info.inputs)}")
    unmapped = [name for name in info.inputs if name not in declared.values()]
    if unmapped:
        raise mismatch("inputs", f"gives no role to signature input {names(unmapped)}",
                       f"task \"{task}\" takes only {', '.join(declared)}; use \"task\": \"tensor\" to serve a model "
                       "with other inputs")
    return dict(declared)


def single_output(info: SavedModelInfo, task: str, fix: str) -> str:
    """The one output a task serves; more than one would drop the rest silently, so they are refused by name."""
    outputs = list(info.outputs)
    if len(outputs) == 1:
        return outputs[0]
    raise mismatch("task", f"is \"{task}\", which serves one output, but the signature has {len(outputs)} "
                   f"({names(outputs)}): outputs {names(outputs[1:])} would be dropped", fix)
