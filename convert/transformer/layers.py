"""The Keras layers of a post-LayerNorm transformer encoder (BERT, MPNet) and of sentence-transformers' pooling.

Only builtin TFLite ops are used (no string ops, no Flex): the model takes int32 token ids and a mask, and the
sequence length stays open (every table is sliced to the batch's length).
"""
from __future__ import annotations

import numpy as np

from convert.transformer.config import EncoderConfig

POOLING_MODES = ("mean", "cls", "max", "lasttoken", "mean_sqrt_len")
MASKED_SCORE = -1e4  # added to the attention scores of padding: e^-1e4 is 0 in float32


def relative_buckets(length: int, buckets: int, max_distance: int = 128) -> np.ndarray:
    """MPNet's (and T5's) bucket of each (query, key) offset, (length, length) int32: half the buckets for keys
    before the query, half after; exact offsets up to a quarter of the buckets, logarithmic ones beyond,
    everything from max_distance on in the last bucket."""
    offset = np.arange(length)[None, :] - np.arange(length)[:, None]  # key - query
    half = buckets // 2
    bucket = np.where(offset > 0, half, 0)  # keys after the query: the upper half
    distance = np.abs(offset)
    exact = half // 2
    with np.errstate(divide="ignore"):
        logarithmic = exact + (np.log(np.maximum(distance, 1) / exact) / np.log(max_distance / exact)
                               * (half - exact)).astype(np.int64)
    logarithmic = np.minimum(logarithmic, half - 1)
    return (bucket + np.where(distance < exact, distance, logarithmic)).astype(np.int32)


def keras_layers():
    """The layer classes, made on first use so that importing this module does not import Keras."""
    import keras  # noqa: PLC0415
    from keras import ops  # noqa: PLC0415

    class Embeddings(keras.layers.Layer):
        """Word + position (+ token type 0 for BERT) embeddings, then LayerNorm."""

        def __init__(self, config: EncoderConfig, max_length: int, **kwargs):
            super().__init__(**kwargs)
            self.config = config
            self.max_length = max_length
            self.words = keras.layers.Embedding(config.vocab_size, config.hidden, name="word_embeddings")
            self.norm = keras.layers.LayerNormalization(epsilon=config.epsilon, name="norm")

        def build(self, input_shape):
            self.words.build(input_shape)
            self.positions = self.add_weight(shape=(self.max_length, self.config.hidden), name="positions")
            if self.config.type_vocab_size:
                self.segment = self.add_weight(shape=(self.config.hidden,), name="segment")
            self.norm.build((None, self.max_length, self.config.hidden))

        def call(self, ids):
            hidden = self.words(ids) + self.positions[None, : ops.shape(ids)[1]]
            if self.config.type_vocab_size:
                hidden = hidden + self.segment
            return self.norm(hidden)

    class TransformerBlock(keras.layers.Layer):
        """One post-LayerNorm encoder layer; `attention_bias` broadcasts to (batch, heads, length, length)."""

        def __init__(self, config: EncoderConfig, max_length: int, dropout: float = 0.0, **kwargs):
            super().__init__(**kwargs)
            self.config = config
            self.max_length = max_length
            h, eps = config.hidden, config.epsilon
            self.query = keras.layers.Dense(h, name="query")
            self.key = keras.layers.Dense(h, name="key")
            self.value = keras.layers.Dense(h, name="value")
            self.attention_out = keras.layers.Dense(h, name="attention_out")
            self.attention_norm = keras.layers.LayerNormalization(epsilon=eps, name="attention_norm")
            self.intermediate = keras.layers.Dense(config.intermediate, name="intermediate")
            self.output_dense = keras.layers.Dense(h, name="output_dense")
            self.output_norm = keras.layers.LayerNormalization(epsilon=eps, name="output_norm")
            self.dropout = keras.layers.Dropout(dropout)

        def build(self, input_shape):
            shape = (None, self.max_length, self.config.hidden)
            for dense in (self.query, self.key, self.value, self.attention_out, self.intermediate):
                dense.build(shape)
            self.output_dense.build((None, self.max_length, self.config.intermediate))
            self.attention_norm.build(shape)
            self.output_norm.build(shape)

        def _heads(self, x):
            x = ops.reshape(x, (-1, ops.shape(x)[1], self.config.heads, self.config.head_size))
            return ops.transpose(x, (0, 2, 1, 3))

        def call(self, hidden, attention_bias, training=None):
            q, k, v = self._heads(self.query(hidden)), self._heads(self.key(hidden)), self._heads(self.value(hidden))
            scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) / float(np.sqrt(self.config.head_size))
            weights = ops.softmax(scores + attention_bias, axis=-1)
            context = ops.transpose(ops.matmul(weights, v), (0, 2, 1, 3))
            context = ops.reshape(context, (-1, ops.shape(hidden)[1], self.config.hidden))
            hidden = self.attention_norm(hidden + self.dropout(self.attention_out(context), training=training))
            expanded = keras.activations.gelu(self.intermediate(hidden), approximate=False)
            return self.output_norm(hidden + self.dropout(self.output_dense(expanded), training=training))

    class MaskBias(keras.layers.Layer):
        """attention_mask (1 token, 0 padding) -> additive attention bias (batch, 1, 1, length)."""

        def call(self, mask):
            # expand_dims, not x[:, None]: a slice that adds axes to open dimensions converts to a Flex op.
            return ops.expand_dims((1.0 - ops.cast(mask, "float32")) * MASKED_SCORE, (1, 2))

    class RelativePositionBias(keras.layers.Layer):
        """MPNet: a learned bias per head and relative-position bucket, (1, heads, length, length), added to the
        mask bias; the buckets of every offset up to max_length are a constant table sliced to the batch."""

        def __init__(self, config: EncoderConfig, max_length: int, **kwargs):
            super().__init__(**kwargs)
            self.config = config
            self.buckets = relative_buckets(max_length, config.relative_buckets)

        def build(self, input_shape):
            self.table = self.add_weight(shape=(self.config.relative_buckets, self.config.heads), name="table")

        def call(self, mask_bias, ids):
            length = ops.shape(ids)[1]
            buckets = ops.convert_to_tensor(self.buckets)[:length, :length]
            bias = ops.transpose(ops.take(self.table, buckets, axis=0), (2, 0, 1))  # (heads, length, length)
            return mask_bias + ops.expand_dims(bias, 0)

    class Pooling(keras.layers.Layer):
        """sentence-transformers' Pooling module: one vector per text from the token vectors where the mask is 1."""

        def __init__(self, mode: str, **kwargs):
            super().__init__(**kwargs)
            if mode not in POOLING_MODES:
                raise ValueError(f"pooling mode {mode!r}: one of {POOLING_MODES}")
            self.mode = mode

        def call(self, hidden, mask):
            weights = ops.expand_dims(ops.cast(mask, "float32"), -1)
            counts = ops.maximum(ops.sum(weights, axis=1), 1e-9)
            if self.mode == "cls":
                return hidden[:, 0]
            if self.mode == "max":
                return ops.max(hidden + (1.0 - weights) * -1e9, axis=1)
            if self.mode == "lasttoken":  # the last token whose mask is 1 (right padding)
                positions = ops.arange(ops.shape(mask)[1], dtype="float32")[None, :]
                last = ops.sum(ops.cast(mask, "float32"), axis=1, keepdims=True) - 1.0
                pick = ops.expand_dims(ops.cast(ops.equal(positions, last), "float32"), -1)
                return ops.sum(hidden * pick, axis=1)
            total = ops.sum(hidden * weights, axis=1)
            return total / (ops.sqrt(counts) if self.mode == "mean_sqrt_len" else counts)

    return Embeddings, TransformerBlock, MaskBias, RelativePositionBias, Pooling
