"""A BERT or MPNet encoder as sentence-transformers runs it, in plain numpy (float64) from the directory's own
files: the independent reference convert holds its Keras rebuild against before exporting it.

Written from the architectures' definitions, not from the Keras layers in layers.py: weights in their PyTorch
layout (Linear is x @ W.T + b), sizes and epsilon from config.json, padding kept out of attention by setting its
scores to -inf (exactly zero weight), exact erf GELU, MPNet's relative-position buckets computed here on their own,
then sentence-transformers' pooling over real tokens. Vectors are NOT normalised (2_Normalize is applied after).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from scipy.special import erf

from convert.transformer.config import EncoderConfig, read_config
from convert.transformer.weights import LAYER_PARTS, RELATIVE_BIAS, load_weights

# float64 attention scores of 8 rows of 256 tokens take 50 MB; a whole batch at once could take gigabytes.
ROWS_PER_PASS = 8


def mpnet_buckets(length: int, buckets: int, max_distance: int = 128) -> np.ndarray:
    """MPNet's relative-position bucket of every (query, key) pair of a `length`-token text, as its T5-style scheme
    defines it: keys after the query in the upper half of the buckets; within each half, distances below a quarter
    of the buckets exactly, longer ones on a log scale up to max_distance, the rest in the half's last bucket."""
    half, exact = buckets // 2, buckets // 4
    query, key = np.meshgrid(np.arange(length), np.arange(length), indexing="ij")
    distance = np.abs(key - query).astype(np.float64)
    upper = np.where(key > query, half, 0)
    scaled = exact + np.floor(np.log(np.maximum(distance, 1.0) / exact) / math.log(max_distance / exact)
                              * (half - exact))
    far = np.minimum(scaled, half - 1)
    return (upper + np.where(distance < exact, distance, far)).astype(np.int64)


def pool_tokens(hidden: np.ndarray, attention_mask: np.ndarray, mode: str) -> np.ndarray:
    """sentence-transformers' pooling of (batch, length, hidden) over the tokens whose mask is 1."""
    mask = np.asarray(attention_mask, dtype=np.float64)[:, :, None]
    counts = np.maximum(mask.sum(axis=1), 1e-9)
    if mode == "cls":
        return hidden[:, 0]
    if mode == "max":
        return np.where(mask > 0, hidden, -np.inf).max(axis=1)
    if mode == "lasttoken":
        last = mask[:, :, 0].sum(axis=1).astype(int) - 1
        return hidden[np.arange(len(hidden)), last]
    if mode not in ("mean", "mean_sqrt_len"):
        raise ValueError(f"pooling mode {mode!r}")
    total = (hidden * mask).sum(axis=1)
    return total / (np.sqrt(counts) if mode == "mean_sqrt_len" else counts)


class EncoderReference:
    def __init__(self, directory: Path, pooling: str = "mean", config: EncoderConfig | None = None):
        self.config = config or read_config(directory)
        self.pooling = pooling
        self.weights = {name: value.astype(np.float64)
                        for name, value in load_weights(directory, self.config).items()}
        self._buckets: dict[int, np.ndarray] = {}

    @property
    def hidden(self) -> int:
        return self.config.hidden

    def _w(self, name: str) -> np.ndarray:
        return self.weights[name]

    def _linear(self, x: np.ndarray, prefix: str) -> np.ndarray:
        flat = x.reshape(-1, x.shape[-1]) @ self._w(prefix + ".weight").T + self._w(prefix + ".bias")
        return flat.reshape(*x.shape[:-1], -1)

    def _layer_norm(self, x: np.ndarray, prefix: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(variance + self.config.epsilon) * self._w(prefix + ".weight") \
            + self._w(prefix + ".bias")

    def _position_bias(self, length: int) -> np.ndarray | float:
        """MPNet: (heads, length, length) learned bias per relative-position bucket; BERT: none."""
        if not self.config.relative_buckets:
            return 0.0
        if length not in self._buckets:
            self._buckets[length] = mpnet_buckets(length, self.config.relative_buckets)
        return self._w(RELATIVE_BIAS)[self._buckets[length]].transpose(2, 0, 1)

    def _part(self, index: int, part: str) -> str:
        return f"encoder.layer.{index}.{LAYER_PARTS[self.config.family][part]}"

    def _attention(self, x: np.ndarray, padding: np.ndarray, index: int) -> np.ndarray:
        batch, length, _ = x.shape
        heads, size = self.config.heads, self.config.head_size

        def split(t: np.ndarray, order=(0, 2, 1, 3)) -> np.ndarray:  # -> (batch, heads, length, size)
            return np.ascontiguousarray(t.reshape(batch, length, heads, size).transpose(order))

        q = split(self._linear(x, self._part(index, "query")))
        k_transposed = split(self._linear(x, self._part(index, "key")), order=(0, 2, 3, 1))
        v = split(self._linear(x, self._part(index, "value")))
        scores = q @ k_transposed / np.sqrt(size) + self._position_bias(length)
        scores = np.where(padding[:, None, None, :], -np.inf, scores)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probabilities = scores / scores.sum(axis=-1, keepdims=True)
        context = (probabilities @ v).transpose(0, 2, 1, 3).reshape(batch, length, self.hidden)
        return self._layer_norm(x + self._linear(context, self._part(index, "attention_out")),
                                self._part(index, "attention_norm"))

    def _feed_forward(self, x: np.ndarray, index: int) -> np.ndarray:
        inner = self._linear(x, self._part(index, "intermediate"))
        inner = 0.5 * inner * (1.0 + erf(inner / np.sqrt(2.0)))
        return self._layer_norm(x + self._linear(inner, self._part(index, "output_dense")),
                                self._part(index, "output_norm"))

    def last_hidden_state(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """(batch, length, hidden) float64 of right-padded rows: positions count from the family's first position
        id, token type 0."""
        input_ids = np.asarray(input_ids, dtype=np.int64)
        length, start = input_ids.shape[1], self.config.position_offset
        if length > self.config.longest_sequence:
            raise ValueError(f"sequence of {length} tokens; the model has {self.config.longest_sequence} positions")
        x = (self._w("embeddings.word_embeddings.weight")[input_ids]
             + self._w("embeddings.position_embeddings.weight")[start:start + length][None])
        if self.config.type_vocab_size:
            x = x + self._w("embeddings.token_type_embeddings.weight")[0]
        x = self._layer_norm(x, "embeddings.LayerNorm")
        padding = np.asarray(attention_mask) == 0
        for index in range(self.config.layers):
            x = self._feed_forward(self._attention(x, padding, index), index)
        return x

    def embed(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """(batch, hidden) float64: the pooled last hidden state of each row."""
        vectors = []
        for start in range(0, len(input_ids), ROWS_PER_PASS):
            rows = slice(start, start + ROWS_PER_PASS)
            vectors.append(pool_tokens(self.last_hidden_state(input_ids[rows], attention_mask[rows]),
                                        attention_mask[rows], self.pooling))
        return np.concatenate(vectors) if vectors else np.zeros((0, self.hidden))

    def embed_each(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """Each right-padded row run alone at its own length: nothing for the reference to mask, so a padded batch
        through another implementation matches it only if that implementation masks padding right."""
        lengths = np.asarray(attention_mask).sum(axis=1)
        return np.concatenate([self.embed(input_ids[i:i + 1, :n], attention_mask[i:i + 1, :n])
                               for i, n in enumerate(lengths)])


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two (n, d) arrays."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
