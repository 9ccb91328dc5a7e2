"""The BERT-base-sized encoder of bench/big_models.py written as an ONNX graph from its Keras weights, for the ONNX
Runtime stack of section 18: tf2onnx took 11 GB converting it (and was killed), this takes the weights' own size.

The graph is the Keras model's computation, op for op: word embeddings + the position table, LayerNormalization;
12 x (MultiHeadAttention: query scaled by 1/sqrt(64), softmax over keys; residual, LayerNormalization; Dense 3,072
with the exact GELU 0.5 x (1 + erf(x / sqrt 2)), Dense 768; residual, LayerNormalization); the mean over tokens.
build() checks its answers against the converted TFLite model's before keeping it.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from bench import big_models

EPSILON = 1e-12
HEAD = big_models.HIDDEN // big_models.HEADS


class Graph:
    """Nodes and initializers, named in order."""

    def __init__(self):
        from onnx import helper, numpy_helper  # noqa: PLC0415

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes, self.initializers, self.count = [], [], 0

    def constant(self, array: np.ndarray) -> str:
        name = f"w{len(self.initializers)}"
        self.initializers.append(self.numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, kind: str, *inputs: str, **attributes) -> str:
        self.count += 1
        output = f"{kind.lower()}{self.count}"
        self.nodes.append(self.helper.make_node(kind, list(inputs), [output], **attributes))
        return output

    def dense(self, x: str, kernel: np.ndarray, bias: np.ndarray) -> str:
        return self.op("Add", self.op("MatMul", x, self.constant(kernel)), self.constant(bias))

    def norm(self, x: str, gamma: np.ndarray, beta: np.ndarray) -> str:
        return self.op("LayerNormalization", x, self.constant(gamma), self.constant(beta), axis=-1, epsilon=EPSILON)

    def heads(self, x: str) -> str:
        """[batch, tokens, 768] -> [batch, 12, tokens, 64]"""
        shape = self.constant(np.array([0, big_models.SEQUENCE, big_models.HEADS, HEAD], np.int64))
        return self.op("Transpose", self.op("Reshape", x, shape), perm=[0, 2, 1, 3])


def encoder_layer(graph: Graph, hidden: str, weights: list[np.ndarray]) -> str:
    qk, qb, kk, kb, vk, vb, ok, ob, g1, b1, k1, c1, k2, c2, g2, b2 = weights
    width = big_models.HIDDEN
    query = graph.heads(graph.dense(hidden, qk.reshape(width, width), qb.reshape(width)))
    query = graph.op("Mul", query, graph.constant(np.array(1.0 / math.sqrt(HEAD), np.float32)))
    key = graph.heads(graph.dense(hidden, kk.reshape(width, width), kb.reshape(width)))
    value = graph.heads(graph.dense(hidden, vk.reshape(width, width), vb.reshape(width)))
    scores = graph.op("Softmax", graph.op("MatMul", query, graph.op("Transpose", key, perm=[0, 1, 3, 2])), axis=-1)
    context = graph.op("Transpose", graph.op("MatMul", scores, value), perm=[0, 2, 1, 3])
    context = graph.op("Reshape", context, graph.constant(np.array([0, big_models.SEQUENCE, width], np.int64)))
    hidden = graph.norm(graph.op("Add", hidden, graph.dense(context, ok.reshape(width, width), ob)), g1, b1)
    expanded = graph.dense(hidden, k1, c1)
    erf = graph.op("Erf", graph.op("Mul", expanded, graph.constant(np.array(1 / math.sqrt(2), np.float32))))
    gelu = graph.op("Mul", graph.op("Mul", expanded, graph.constant(np.array(0.5, np.float32))),
                    graph.op("Add", erf, graph.constant(np.array(1.0, np.float32))))
    return graph.norm(graph.op("Add", hidden, graph.dense(gelu, k2, c2)), g2, b2)


def write(out: Path) -> None:
    """Builds the Keras model (the recipe's seed: the same weights as the converted one) and writes its ONNX graph."""
    import onnx  # noqa: PLC0415

    model = big_models._keras_model("bert_base")  # noqa: SLF001
    weights = [np.asarray(w) for w in model.get_weights()]
    words, norm_gamma, norm_beta, layers = weights[0], weights[1], weights[2], weights[3:]
    graph = Graph()
    hidden = graph.op("Add", graph.op("Gather", graph.constant(words), "ids", axis=0),
                      graph.constant(model.position_table.astype(np.float32)))
    hidden = graph.norm(hidden, norm_gamma, norm_beta)
    for index in range(big_models.LAYERS):
        hidden = encoder_layer(graph, hidden, layers[16 * index:16 * (index + 1)])
    pooled = graph.op("ReduceMean", hidden, axes=[1], keepdims=0)  # opset 17: axes an attribute
    helper = graph.helper
    onnx_graph = helper.make_graph(
        graph.nodes, "bert_base", [helper.make_tensor_value_info("ids", onnx.TensorProto.INT32, [None, 128])],
        [helper.make_tensor_value_info(pooled, onnx.TensorProto.FLOAT, [None, big_models.HIDDEN])],
        graph.initializers)
    document = helper.make_model(onnx_graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save(document, str(out), save_as_external_data=False)


def check(onnx_file: Path, tolerance: float = 1e-3) -> float:
    """The largest difference between ONNX Runtime's answers and the converted TFLite model's on random ids."""
    import onnxruntime  # noqa: PLC0415
    from ai_edge_litert.interpreter import Interpreter  # noqa: PLC0415

    ids = np.random.default_rng(3).integers(1, big_models.VOCAB, (2, big_models.SEQUENCE)).astype(np.int32)
    session = onnxruntime.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
    ours = session.run(None, {"ids": ids})[0]
    tflite = big_models.model_dir("bert_base") / "model.tflite"
    signature = Interpreter(model_path=str(tflite)).get_signature_runner()
    theirs = next(iter(signature(ids=ids).values()))
    difference = float(np.abs(ours - theirs).max())
    if not difference <= tolerance:
        raise ValueError(f"the ONNX graph answers up to {difference} away from the TFLite model's")
    return difference
