"""Text embedding: token ids and attention mask in, one pooled vector per text out, the cosine gate."""
from __future__ import annotations

from pathlib import Path

from convert.fidelity.embedding import CosineGate
from convert.saved_model_inspect import SavedModelInfo
from convert.sidecar_fields import require, role_map
from convert.tasks.base import Binding, TaskFields, TaskKind, bind_roles, describe, mismatch, names, single_output
from convert.tasks.text import ROLES, check_token_inputs, parse_text_preprocessing

EMBEDDING = "embedding"


class TextEmbedding(TaskKind):
    name = "text_embedding"
    unused_keys = {"labels": "an embedding has no classes", "output": "an embedding has no classes",
                   "multi_label": "an embedding has no classes", "class_output": "an embedding has no classes"}

    def parse_fields(self, data: dict, directory: Path) -> TaskFields:
        preprocessing = parse_text_preprocessing(require(data, "preprocessing"), directory, self.name)
        # attention_mask is optional here and required in bind() for an open sequence length (see there).
        inputs = role_map(require(data, "inputs"), "inputs", ROLES[:1], ROLES[1:])
        outputs = role_map(data["outputs"], "outputs", (EMBEDDING,)) if "outputs" in data else None
        return TaskFields(preprocessing=preprocessing, inputs=inputs, outputs=outputs)

    def bind(self, sidecar, info: SavedModelInfo) -> Binding:
        roles = bind_roles(sidecar.inputs, info, self.name)
        ordered = {role: roles[role] for role in ROLES if role in roles}
        ids = info.inputs[ordered["input_ids"]]
        if "attention_mask" not in ordered and len(ids.shape) == 2 and ids.shape[1] is None:
            # The function pads each batch to its longest text: without a mask telling the model which tokens are
            # padding, a text's vector would change with the texts it is batched with. A fixed length (every text
            # padded to max_length, as a TextVectorization layer does) needs none.
            raise mismatch("inputs.attention_mask", f"is missing and input {describe(ids)} has an open "
                           "length", "add the model's attention_mask input (the function pads each batch to "
                           "its longest text), or export the model with a fixed sequence length")
        check_token_inputs(sidecar.preprocessing, info, ordered)
        if sidecar.outputs is not None:
            output, field = sidecar.outputs[EMBEDDING], f"outputs.{EMBEDDING}"
            if output not in info.outputs:
                raise mismatch(field, f"names '{output}', which the serving signature does not have",
                               f"use one of its outputs: {names(info.outputs)}")
        else:
            output, field = single_output(info, self.name, f"add \"outputs\": {{\"{EMBEDDING}\": \"<name>\"}} to "
                                          "serve one of them, or use \"task\": \"tensor\" to serve all"), "task"
        tensor = info.outputs[output]
        if len(tensor.shape) != 2 or tensor.shape[1] is None or not tensor.is_float:
            raise mismatch(field, f"leads to output {describe(tensor)}, which is not one float vector of fixed "
                           "size per text (N, dimensions)", "pool the tokens inside the model (for example a "
                           "masked mean) so that it outputs (N, dimensions)")
        return Binding(inputs=ordered, outputs={EMBEDDING: output})

    def gate(self, sidecar, binding: Binding, min_agreement: float | None, reference) -> CosineGate:
        return CosineGate(binding.outputs[EMBEDDING])
