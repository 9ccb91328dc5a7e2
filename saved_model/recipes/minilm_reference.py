"""all-MiniLM-L6-v2 as sentence-transformers runs it, in plain numpy (float64) from the shipped files: the
reference the `minilm` SavedModel (and any other stack serving it) is measured against.

Written from BERT's definition, not from the Keras layers in minilm_encoder.py: weights in their PyTorch
layout (Linear is x @ W.T + b), sizes, epsilon and activation read from the package's config.json, padding kept
out of attention by setting its scores to -inf (exactly zero weight), exact erf GELU, then the mean of the last
hidden states over real tokens (sentence-transformers' 1_Pooling: pooling_mode_mean_tokens). The vector is NOT
normalised here; sentence-transformers' 2_Normalize module (and the function) do that afterwards.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy.special import erf

from saved_model.recipes.minilm_encoder import package_dir
from saved_model.recipes.safetensors_reader import load_tensors

# float64 attention scores of 8 rows of 256 tokens take 50 MB; a whole validation batch at once would take ~1 GB.
ROWS_PER_PASS = 8


class MiniLMReference:
    def __init__(self, directory: Path | None = None):
        directory = Path(directory or package_dir())
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        if config["hidden_act"] != "gelu" or config["position_embedding_type"] != "absolute":
            raise ValueError(f"{directory}: not the BERT variant this reference implements")
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.hidden = int(config["hidden_size"])
        self.epsilon = float(config["layer_norm_eps"])
        self.max_positions = int(config["max_position_embeddings"])
        self.weights = {name: value.astype(np.float64)
                        for name, value in load_tensors(directory / "model.safetensors").items()}

    def _w(self, name: str) -> np.ndarray:
        return self.weights[name]

    def _linear(self, x: np.ndarray, prefix: str) -> np.ndarray:
        flat = x.reshape(-1, x.shape[-1]) @ self._w(prefix + ".weight").T + self._w(prefix + ".bias")
        return flat.reshape(*x.shape[:-1], -1)

    def _layer_norm(self, x: np.ndarray, prefix: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(variance + self.epsilon) * self._w(prefix + ".weight") + self._w(prefix + ".bias")

    def _attention(self, x: np.ndarray, padding: np.ndarray, prefix: str) -> np.ndarray:
        batch, length, _ = x.shape
        size = self.hidden // self.heads

        def split(t: np.ndarray, order=(0, 2, 1, 3)) -> np.ndarray:  # -> (batch, heads, length, size)
            # Contiguous copies: numpy's stacked matmul is ~3x slower on transposed views.
            return np.ascontiguousarray(t.reshape(batch, length, self.heads, size).transpose(order))

        q = split(self._linear(x, prefix + ".self.query"))
        k_transposed = split(self._linear(x, prefix + ".self.key"), order=(0, 2, 3, 1))
        v = split(self._linear(x, prefix + ".self.value"))
        scores = q @ k_transposed / np.sqrt(size)
        scores = np.where(padding[:, None, None, :], -np.inf, scores)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        probabilities = scores / scores.sum(axis=-1, keepdims=True)
        context = (probabilities @ v).transpose(0, 2, 1, 3).reshape(batch, length, self.hidden)
        return self._layer_norm(x + self._linear(context, prefix + ".output.dense"), prefix + ".output.LayerNorm")

    def _feed_forward(self, x: np.ndarray, prefix: str) -> np.ndarray:
        inner = self._linear(x, prefix + ".intermediate.dense")
        inner = 0.5 * inner * (1.0 + erf(inner / np.sqrt(2.0)))
        return self._layer_norm(x + self._linear(inner, prefix + ".output.dense"), prefix + ".output.LayerNorm")

    def last_hidden_state(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """(batch, length, hidden) float64; every sequence starts at position 0, token type 0."""
        input_ids = np.asarray(input_ids, dtype=np.int64)
        length = input_ids.shape[1]
        if length > self.max_positions:
            raise ValueError(f"sequence of {length} tokens; the model has {self.max_positions} positions")
        x = (self._w("embeddings.word_embeddings.weight")[input_ids]
             + self._w("embeddings.position_embeddings.weight")[:length][None]
             + self._w("embeddings.token_type_embeddings.weight")[0])
        x = self._layer_norm(x, "embeddings.LayerNorm")
        padding = np.asarray(attention_mask) == 0
        for index in range(self.layers):
            prefix = f"encoder.layer.{index}"
            x = self._attention(x, padding, prefix + ".attention")
            x = self._feed_forward(x, prefix)
        return x

    def embed(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """(batch, hidden) float64: the mean of the last hidden state over the tokens whose mask is 1."""
        vectors = []
        for start in range(0, len(input_ids), ROWS_PER_PASS):
            rows = slice(start, start + ROWS_PER_PASS)
            weights = np.asarray(attention_mask[rows], dtype=np.float64)[:, :, None]
            hidden = self.last_hidden_state(input_ids[rows], attention_mask[rows])
            vectors.append((hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9))
        return np.concatenate(vectors) if vectors else np.zeros((0, self.hidden))


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two (n, d) arrays."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
