"""A SavedModel without sidecar.json: input roles guessed from dtypes and names, one output of class scores.

It still converts (with generated inputs) so that users can see the sizes and the gate before writing a sidecar,
but the manifest's task is null: the function cannot serve it until a sidecar says how to feed it.
"""
from __future__ import annotations

from convert.errors import ConversionError
from convert.fidelity.classification import Top1Gate, guess_output_kind
from convert.saved_model_inspect import SavedModelInfo, TensorInfo
from convert.tasks.base import Binding, TaskKind, names
from convert.tasks.classification import SCORES

HOW_TO_DECLARE = ("add a sidecar.json with \"inputs\": {role: input name} (roles: image, input_ids, attention_mask), "
                  "or with \"task\": \"tensor\" to serve any inputs and outputs (docs/model-format.md)")


def guess_input_roles(inputs: dict[str, TensorInfo]) -> dict[str, str]:
    """One float input is an image, one integer input is token ids, two integer inputs are ids + a named mask."""
    if len(inputs) == 1:
        (name, info), = inputs.items()
        return {"image" if info.is_float else "input_ids": name}
    if len(inputs) == 2 and not any(info.is_float for info in inputs.values()):
        masks = [name for name in inputs if "mask" in name.lower()]
        if len(masks) == 1:
            ids = next(name for name in inputs if name != masks[0])
            return {"input_ids": ids, "attention_mask": masks[0]}
    raise ConversionError("unmappable_inputs", f"cannot tell which of the signature inputs "
                          f"({', '.join(inputs) or 'none'}) is which: {HOW_TO_DECLARE}")


class Guessed(TaskKind):
    name = "guessed"  # never written: the manifest's task is null
    uses_min_agreement = True

    def bind(self, sidecar, info: SavedModelInfo) -> Binding:
        roles = guess_input_roles(info.inputs)
        if len(info.outputs) != 1:
            raise ConversionError("unmappable_outputs", f"the SavedModel has {len(info.outputs)} outputs "
                                  f"({names(info.outputs)}) and no sidecar.json: add one with \"task\": \"tensor\" "
                                  "to serve every output (docs/model-format.md)")
        return Binding(inputs=roles, outputs={SCORES: next(iter(info.outputs))})

    def gate(self, sidecar, binding: Binding, min_agreement: float | None, reference) -> Top1Gate:
        output = binding.outputs[SCORES]
        return Top1Gate(output, guess_output_kind(reference[output]), min_agreement)
