"""A sentence-transformers encoder as an ONNX graph, for the ONNX Runtime + tokenizers peer of the embedding
sections, built with the `onnx` helper API straight from the directory's safetensors (no TensorFlow, no torch).

The graph is what exporting the sentence-transformers model to ONNX gives (the Hugging Face encoder + its pooling):
int64 input_ids / attention_mask [batch, seq] -> `sentence_embedding` [batch, hidden], the masked mean of the last
hidden states, not normalised (the handlers normalise). Both families convert/transformer/ rebuilds: BERT (absolute
positions from 0, token type 0) and MPNet (positions from pad_token_id + 1, no token types, and the bucketed
relative-position bias of every (query, key) pair, looked up in one table of the longest input's buckets sliced to
the batch's length, added to every layer's scores). Exact erf GELU, post-LayerNorm, padding out of attention by a
-10000 score. ONNX Runtime fuses its LayerNorm, GELU and attention patterns.

`python -m bench.encoder_onnx ENCODER_DIR OUT` writes OUT/model.onnx, checked against the numpy reference
(convert/transformer/reference.py) on texts from 2 tokens to the directory's max_seq_length.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

import numpy as np

from bench.paths import BUILD_DIR
from convert.transformer.config import EncoderConfig
from convert.transformer.directory import EncoderDirectory, read_encoder_directory
from convert.transformer.reference import EncoderReference, cosine, mpnet_buckets
from convert.transformer.weights import RELATIVE_BIAS, WEIGHTS_FILE, layer_part, load_weights

OPSET = 17
IR_VERSION = 8  # the IR of opset 17; onnx 1.23 would stamp 14, which ONNX Runtime 1.31 refuses to load
INPUT_NAMES = ("input_ids", "attention_mask")
OUTPUT_NAME = "sentence_embedding"
MASKED_SCORE = -10000.0  # added to attention scores of padding: exp() of it is 0 in float32
MIN_COSINE = 0.9999  # to the numpy reference, each text, before a graph is kept
CHECK_TEXTS = 6


class GraphBuilder:
    """Nodes and float32 initializers with generated unique names."""

    def __init__(self):
        self.nodes, self.initializers = [], []
        self._count = 0

    def _name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def constant(self, value, hint: str = "const", dtype=np.float32) -> str:
        from onnx import numpy_helper  # noqa: PLC0415  (onnx: a benchmark tool, imported by what builds graphs)

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


def _relative_bias(g: GraphBuilder, config: EncoderConfig, weights: dict, seq: str) -> str:
    """MPNet's [heads, seq, seq] position bias: the longest input's bucket table sliced to seq x seq, looked up."""
    table = g.constant(mpnet_buckets(config.longest_sequence, config.relative_buckets), "buckets", np.int64)
    ends = g.op("Concat", g.op("Unsqueeze", seq, g.constant([0], "axis0", np.int64)),
                g.op("Unsqueeze", seq, g.constant([0], "axis0b", np.int64)), axis=0)
    buckets = g.op("Slice", table, g.constant([0, 0], "starts", np.int64), ends, g.constant([0, 1], "axes", np.int64))
    bias = g.op("Gather", g.constant(weights[RELATIVE_BIAS], "relative_attention_bias"), buckets, axis=0)
    return g.op("Transpose", bias, perm=[2, 0, 1])


def build_graph(config: EncoderConfig, weights: dict[str, np.ndarray], name: str):
    """The onnx.ModelProto of the encoder + masked mean pooling."""
    from onnx import TensorProto, helper  # noqa: PLC0415

    hidden, heads, size, epsilon = config.hidden, config.heads, config.head_size, config.epsilon
    g = GraphBuilder()
    int64 = np.int64

    # Embeddings: word + position (the family's first position id on) (+ token type 0), then LayerNorm.
    seq = g.op("Gather", g.op("Shape", "input_ids"), g.constant(1, "seq_axis", int64), axis=0)
    start = g.constant(config.position_offset, "first_position", int64)
    positions = g.op("Range", start, g.op("Add", start, seq), g.constant(1, "one", int64))
    x = g.op("Add", g.op("Gather", g.constant(weights["embeddings.word_embeddings.weight"], "word_embeddings"),
                         "input_ids", axis=0),
             g.op("Gather", g.constant(weights["embeddings.position_embeddings.weight"], "position_embeddings"),
                  positions, axis=0))
    if config.type_vocab_size:
        x = g.op("Add", x, g.constant(weights["embeddings.token_type_embeddings.weight"][0], "token_type_0"))
    x = g.layer_norm(x, weights, "embeddings.LayerNorm", epsilon)

    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    bias = g.op("Mul", g.op("Sub", g.constant(1.0, "one_f"), mask), g.constant(MASKED_SCORE, "masked_score"))
    bias = g.op("Unsqueeze", bias, g.constant([1, 2], "head_query_axes", int64))  # [batch, 1, 1, seq]
    if config.relative_buckets:
        bias = g.op("Add", bias, _relative_bias(g, config, weights, seq))  # [batch, heads, seq, seq]
    split_shape = g.constant([0, 0, heads, size], "split_heads", int64)
    merge_shape = g.constant([0, 0, hidden], "merge_heads", int64)
    scale = g.constant(1.0 / np.sqrt(size), "scale")

    for index in range(config.layers):
        def part(name: str, index: int = index) -> str:
            return layer_part(config, index, name)

        def heads_of(name: str, perm: list[int]) -> str:
            return g.op("Transpose", g.op("Reshape", g.linear(x, weights, part(name)), split_shape), perm=perm)

        q = heads_of("query", [0, 2, 1, 3])
        k = heads_of("key", [0, 2, 3, 1])  # already transposed for q @ k
        v = heads_of("value", [0, 2, 1, 3])
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), bias)
        context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge_shape)
        x = g.layer_norm(g.op("Add", g.linear(context, weights, part("attention_out")), x), weights,
                         part("attention_norm"), epsilon)
        inner = g.linear(x, weights, part("intermediate"))
        erf = g.op("Erf", g.op("Div", inner, g.constant(np.sqrt(2.0), "sqrt2")))
        gelu = g.op("Mul", g.op("Mul", inner, g.constant(0.5, "half")), g.op("Add", erf, g.constant(1.0, "one_g")))
        x = g.layer_norm(g.op("Add", g.linear(gelu, weights, part("output_dense")), x), weights,
                         part("output_norm"), epsilon)

    token_weights = g.op("Unsqueeze", mask, g.constant([2], "feature_axis", int64))  # [batch, seq, 1]
    axis = g.constant([1], "seq_axes", int64)
    summed = g.op("ReduceSum", g.op("Mul", x, token_weights), axis, keepdims=0)
    counts = g.op("Max", g.op("ReduceSum", token_weights, axis, keepdims=0), g.constant(1e-9, "tiny"))
    g.nodes.append(helper.make_node("Div", [summed, counts], [OUTPUT_NAME], name="mean_pool"))

    inputs = [helper.make_tensor_value_info(input_name, TensorProto.INT64, ["batch", "sequence"])
              for input_name in INPUT_NAMES]
    output = helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, ["batch", hidden])
    graph = helper.make_graph(g.nodes, name, inputs, [output], initializer=g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION,
                             producer_name="bench.encoder_onnx")


def check_texts(encoder: EncoderDirectory) -> list[str]:
    """Short to max_seq_length: a few sample sentences and one document past the longest input."""
    from convert.transformer.sample_texts import SENTENCES  # noqa: PLC0415

    return [*SENTENCES[:CHECK_TEXTS - 1], " ".join(SENTENCES) * 4]


def check(encoder: EncoderDirectory, model_file: Path) -> float:
    """The smallest cosine of ONNX Runtime's vectors (one padded batch) to the numpy reference's (each text alone)."""
    import onnxruntime  # noqa: PLC0415
    from tokenizers import Tokenizer  # noqa: PLC0415

    tokenizer = Tokenizer.from_str(encoder.tokenizer_json)
    texts = [text.lower() for text in check_texts(encoder)] if encoder.lowercase else check_texts(encoder)
    encodings = tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings], np.int64)
    mask = np.array([e.attention_mask for e in encodings], np.int64)
    session = onnxruntime.InferenceSession(str(model_file), providers=["CPUExecutionProvider"])
    (served,) = session.run([OUTPUT_NAME], {"input_ids": ids, "attention_mask": mask})
    expected = EncoderReference(encoder.directory, encoder.pooling, encoder.config).embed_each(ids, mask)
    return float(cosine(served, expected).min())


def export(directory: Path, out: Path) -> Path:
    """OUT/model.onnx of the encoder directory, kept only when every check text reaches MIN_COSINE."""
    import onnx  # noqa: PLC0415

    encoder = read_encoder_directory(directory)
    if encoder.pooling != "mean":
        raise ValueError(f"{directory}: {encoder.pooling} pooling; this graph pools by the mean")
    model = build_graph(encoder.config, load_weights(encoder.directory, encoder.config), encoder.name)
    onnx.checker.check_model(model, full_check=True)
    out.mkdir(parents=True, exist_ok=True)
    model_file = out / "model.onnx"
    onnx.save(model, str(model_file))
    found = check(encoder, model_file)
    if not found >= MIN_COSINE:
        model_file.unlink()
        raise ValueError(f"{directory}: the ONNX graph's vectors reach cosine {found:.6f} to the numpy reference, "
                         f"under {MIN_COSINE}")
    return out


def cached_export(directory: Path) -> Path:
    """build/bench/onnx/<name>/ of the directory, exported again only when its weights or this module change."""
    encoder = read_encoder_directory(directory)
    out = BUILD_DIR / "onnx" / encoder.name
    digest = hashlib.sha256(Path(__file__).read_bytes())
    with open(encoder.directory / WEIGHTS_FILE, "rb") as weights:
        for block in iter(lambda: weights.read(16 << 20), b""):
            digest.update(block)
    stamp = out / ".stamp"
    if stamp.is_file() and stamp.read_text() == digest.hexdigest() and (out / "model.onnx").is_file():
        return out
    shutil.rmtree(out, ignore_errors=True)
    print(f"==> exporting {directory.name} to ONNX (bench/encoder_onnx.py)", file=sys.stderr, flush=True)
    export(directory, out)
    stamp.write_text(digest.hexdigest())
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m bench.encoder_onnx ENCODER_DIR OUT")
    print(export(Path(sys.argv[1]), Path(sys.argv[2])))
