"""The mixed mode: int8 weights on the fully connected layers the gate allows, float32 on the few it needs.

LiteRT runs a fully connected layer whose weights are int8 (one scale per output channel) and whose activations are
float as a hybrid kernel: the activations are quantized row by row on the fly, the same kernel the dynamic mode
gets. Quantizing every such layer can cost more than a gate allows (a transformer's value projections and
feed-forward layers see outlier features); the mixed mode ranks the layers by the error each adds alone and keeps
the fewest in float32 that make the gate pass. Everything else (embedding tables, convolutions, biases) stays
float32, so the result is a float32 model with int8 matrices where they are harmless.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from convert.errors import ConversionError
from convert.progress import progress

INT8_MAX = 127  # symmetric: -127..127, zero point 0, as LiteRT's hybrid kernels expect


class Layer(NamedTuple):
    name: str  # the layer's output tensor name, which carries the Keras layer path
    op_index: int
    tensor_index: int  # its weights


class Choice(NamedTuple):
    content: bytes
    float_layers: tuple[str, ...]  # kept float32, the most harmful first
    layers: int  # fully connected layers in the model


def _schema():
    from tensorflow.lite.python import schema_py_generated as schema  # noqa: PLC0415  (TensorFlow only for the mixed mode)
    return schema


class WeightQuantizer:
    """A float32 .tflite and the int8 form of each of its fully connected layers' weights, ready to swap in."""

    def __init__(self, content: bytes) -> None:
        from tensorflow.lite.tools import flatbuffer_utils  # noqa: PLC0415  (TensorFlow only for the mixed mode)
        schema = _schema()
        self._serialize = flatbuffer_utils.convert_object_to_bytearray
        self._model = flatbuffer_utils.read_model_from_bytearray(bytearray(content))
        graph = self._model.subgraphs[0]
        codes = [max(code.builtinCode, code.deprecatedBuiltinCode) for code in self._model.operatorCodes]
        self.layers: list[Layer] = []
        for op_index, op in enumerate(graph.operators):
            if codes[op.opcodeIndex] != schema.BuiltinOperator.FULLY_CONNECTED or len(op.inputs) < 2:
                continue
            weights = graph.tensors[op.inputs[1]]
            if weights.type == schema.TensorType.FLOAT32 and self._model.buffers[weights.buffer].data is not None:
                name = graph.tensors[op.outputs[0]].name.decode()
                self.layers.append(Layer(name, op_index, op.inputs[1]))
        # What each layer is in the float32 model: its weights' bytes and its kernel's input option.
        self._float = {layer.name: (self._model.buffers[graph.tensors[layer.tensor_index].buffer].data,
                                    graph.operators[layer.op_index].builtinOptions.asymmetricQuantizeInputs)
                       for layer in self.layers}
        self._int8 = {layer.name: self._int8_of(graph.tensors[layer.tensor_index]) for layer in self.layers}

    @property
    def names(self) -> list[str]:
        return [layer.name for layer in self.layers]

    def _int8_of(self, tensor) -> tuple[np.ndarray, list[float]]:
        weights = np.frombuffer(self._model.buffers[tensor.buffer].data.tobytes(), np.float32)
        weights = weights.reshape(tensor.shape[0], -1)  # one row per output channel
        scales = np.abs(weights).max(axis=1) / INT8_MAX
        scales = np.where(scales > 0, scales, 1.0).astype(np.float32)
        quantized = np.clip(np.round(weights / scales[:, None]), -INT8_MAX, INT8_MAX).astype(np.int8)
        return quantized.view(np.uint8).reshape(-1), scales.tolist()

    def content(self, float_layers: frozenset[str] | set[str] = frozenset()) -> bytes:
        """The model with every fully connected layer's weights in int8 except those named."""
        schema = _schema()
        graph = self._model.subgraphs[0]
        for layer in self.layers:
            tensor = graph.tensors[layer.tensor_index]
            options = graph.operators[layer.op_index].builtinOptions
            buffer = self._model.buffers[tensor.buffer]
            if layer.name in float_layers:
                buffer.data, options.asymmetricQuantizeInputs = self._float[layer.name]
                tensor.type, tensor.quantization = schema.TensorType.FLOAT32, None
                continue
            data, scales = self._int8[layer.name]
            parameters = schema.QuantizationParametersT()
            parameters.scale, parameters.zeroPoint, parameters.quantizedDimension = scales, [0] * len(scales), 0
            buffer.data, tensor.type, tensor.quantization = data, schema.TensorType.INT8, parameters
            options.asymmetricQuantizeInputs = True  # a zero point per row: fewer levels lost to a skewed row
        return bytes(self._serialize(self._model))


def output_error(reference: dict[str, np.ndarray], outputs: dict[str, np.ndarray]) -> float:
    """How far a model's answers are from the reference, whatever the task: each output's root-mean-square error
    over the reference's own, averaged over the outputs."""
    errors = [np.linalg.norm(outputs[name] - wanted) / max(float(np.linalg.norm(wanted)), 1e-12)
              for name, wanted in reference.items()]
    return float(np.mean(errors))


def choose(quantizer: WeightQuantizer, error: Callable[[bytes], float], passes: Callable[[bytes], bool],
           log: Callable[[str], None]) -> Choice:
    """Rank the layers by `error` (the model's with that layer alone in int8), then find the fewest kept float32,
    most harmful first, for which `passes`: doubling, then halving the gap (the error grows with every layer
    quantized, so a count that passes stays passing when more are kept float)."""
    names = quantizer.names
    if not names:
        raise ConversionError("nothing_to_quantize", "the model has no fully connected layer with float32 weights "
                              "for the mixed mode to quantize: use float16 or dynamic")
    everything = set(names)
    log(f"mixed: ranking {len(names)} fully connected layers by the error each adds alone in int8")
    alone = {}
    with progress().step("mixed: ranking layers", total=len(names)) as step:
        for name in names:
            alone[name] = error(quantizer.content(everything - {name}))
            step.advance()
    ranked = sorted(names, key=lambda name: -alone[name])
    checked: dict[int, bytes | None] = {}

    def check(kept: int) -> bool:
        if kept not in checked:
            content = quantizer.content(set(ranked[:kept]))
            checked[kept] = content if passes(content) else None
            log(f"mixed: {kept} of {len(names)} layers float32: gate {'pass' if checked[kept] else 'fail'}")
        return checked[kept] is not None

    failing, kept = -1, 0
    while kept < len(names) and not check(kept):
        failing, kept = kept, min(len(names), max(1, kept * 2))
    if kept == len(names) and not check(kept):
        raise ConversionError("fidelity_failed", "the mixed mode fails the gate even with every fully connected layer "
                              "in float32: the other ops' float32 results disagree; use float32")
    while kept - failing > 1:
        middle = (failing + kept) // 2
        failing, kept = (failing, middle) if check(middle) else (middle, kept)
    return Choice(checked[kept], tuple(ranked[:kept]), len(names))
