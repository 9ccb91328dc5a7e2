"""Image regression: an image in (decoded, resized and normalised by the function as for a classifier), values out.
Every output is served, each by its own name, as the tensor task serves them; the gate bounds each output's error."""
from __future__ import annotations

from pathlib import Path

from convert.fidelity.tensor import TensorErrorGate
from convert.saved_model_inspect import SavedModelInfo
from convert.sidecar_fields import require, role_map
from convert.tasks.base import Binding, TaskFields, TaskKind, bind_roles, describe, mismatch
from convert.tasks.image import check_image_input, parse_image_preprocessing
from convert.tasks.tensor import ordered_names


class ImageRegression(TaskKind):
    name = "image_regression"
    unused_keys = {"labels": "it answers values, not classes", "output": "it answers values, not classes",
                   "multi_label": "it answers values, not classes", "class_output": "it answers values, not classes",
                   "outputs": "every output is answered, by its own name"}

    def parse_fields(self, data: dict, directory: Path) -> TaskFields:
        preprocessing = parse_image_preprocessing(require(data, "preprocessing"), self.name)
        inputs = role_map(require(data, "inputs"), "inputs", ("image",))
        return TaskFields(preprocessing=preprocessing, inputs=inputs)

    def bind(self, sidecar, info: SavedModelInfo) -> Binding:
        roles = bind_roles(sidecar.inputs, info, self.name)
        check_image_input(sidecar.preprocessing, info.inputs[roles["image"]], self.name)
        outputs = ordered_names(None, info.outputs, "outputs")
        for name in outputs:
            tensor = info.outputs[name]
            if not tensor.is_float:
                raise mismatch("task", f"is \"{self.name}\" but output {describe(tensor)} is not float values",
                               "use \"task\": \"tensor\" to serve it as it is")
        return Binding(inputs=roles, outputs={name: name for name in outputs})

    def gate(self, sidecar, binding: Binding, min_agreement: float | None, reference) -> TensorErrorGate:
        return TensorErrorGate(list(binding.outputs))
