"""Text embedding: strings -> token ids -> the model's pooled sentence vector, L2-normalised unless asked not to.

A result holds the model's raw vector as base64 float32 (little-endian), exactly as the model gave it: it
round-trips any store bit for bit, takes 2 KB for 384 dimensions (far inside DynamoDB's 400 KB item), and one
cache entry serves both `normalize` settings, since normalising is applied to a copy on the way out.
"""
from __future__ import annotations

import base64
import binascii
from binascii import b2a_base64  # base64.b64encode without its Python wrapper

import numpy as np

from function.errors import refuse
from function.log import Timings
from function.tasks.base import Batch, Result
from function.tasks.text import TextTask

VECTOR_DTYPE = np.dtype("<f4")
# Texts per interpreter call when a batch runs in groups of similar length: 32 texts of 3-128 tokens sorted into
# groups of 8 ran 2.0x faster than one batch padded to the longest (bench/embed_groups.py); 4 was no faster.
GROUP_ROWS = 8


class TextEmbedding(TextTask):
    name = "text_embedding"
    default_model = "embedding"

    def check_manifest(self) -> None:
        super().check_manifest()
        spec = self.manifest.output_spec("embedding")
        self.require(spec is not None, "a text_embedding model needs an output with role 'embedding'")
        self.require(len(self.manifest.outputs) == 1, "a text_embedding model has one output")
        self.require(len(spec.shape) == 2 and spec.shape[1] > 0,
                     f"output {spec.name!r} has shape {list(spec.shape)}; an embedding is [batch, dimensions]")

    @property
    def dimensions(self) -> int:
        return self.manifest.output_spec("embedding").shape[1]

    def cache_options(self, options: dict) -> dict:
        return {}  # the raw vector: normalising happens after the cache

    def preprocess(self, items, timings: Timings) -> Batch:
        batch = super().preprocess(items, timings)
        tokens = sum(note["tokens"] for note in batch.notes)
        if tokens > self.limits.max_batch_tokens:
            raise refuse("too_many_tokens", f"The texts hold {tokens} tokens in all; the limit per request "
                         f"is {self.limits.max_batch_tokens}: send fewer or shorter texts.", param="input")
        return batch

    def invoke(self, tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """A batch padded to its longest text runs every short text at that length too: sorted by length, in groups
        of GROUP_ROWS each padded to its own longest, the model computes the same vectors (its mask hides the
        padding) for far fewer tokens. A model of fixed length, or without a mask, runs the batch as it is."""
        mask = tensors.get("attention_mask")
        if mask is None or self.fixed_length or len(mask) <= GROUP_ROWS:
            return super().invoke(tensors)
        lengths = mask.sum(axis=1)
        order = np.argsort(lengths, kind="stable")
        vectors = np.empty((len(mask), self.dimensions), dtype=np.float32)
        for start in range(0, len(order), GROUP_ROWS):
            rows = order[start:start + GROUP_ROWS]
            width = max(int(lengths[rows].max()), 1)
            group = {role: np.ascontiguousarray(array[rows, :width]) for role, array in tensors.items()}
            vectors[rows] = super().invoke(group)["embedding"]
        return {"embedding": vectors}

    def postprocess(self, outputs: dict[str, np.ndarray], batch: Batch, options: dict) -> list[Result]:
        vectors = np.ascontiguousarray(outputs["embedding"], dtype=VECTOR_DTYPE)
        return [ComputedEmbedding({"embedding": b2a_base64(vector.tobytes(), newline=False).decode("ascii"), **note},
                                  vector)
                for vector, note in zip(vectors, batch.notes)]

    def summary(self, result: Result) -> dict:
        return {"dimensions": self.dimensions}

    def summary_line(self, summary: dict) -> str:
        return f"{summary['dimensions']} dimensions"

    def is_valid_result(self, result: object, options: dict) -> bool:
        if not isinstance(result, dict) or set(result) != {"embedding", "tokens", "truncated"}:
            return False
        tokens, truncated = result["tokens"], result["truncated"]
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1 or not isinstance(truncated, bool):
            return False
        vector = decode_vector(result["embedding"])
        return vector is not None and vector.size == self.dimensions and bool(np.isfinite(vector).all())


class ComputedEmbedding(dict):
    """A result just computed, which also keeps the vector its base64 was made of: the request that computed it
    answers from that array instead of decoding its own base64 again. Only the dict ever reaches a store."""

    __slots__ = ("vector",)

    def __init__(self, stored: dict, vector: np.ndarray):
        super().__init__(stored)
        self.vector = vector


def decode_vector(text: object) -> np.ndarray | None:
    """The float32 vector a result holds, or None when it holds something else."""
    if not isinstance(text, str):
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) % VECTOR_DTYPE.itemsize:
        return None
    return np.frombuffer(raw, dtype=VECTOR_DTYPE)


def output_vector(result: Result, normalize: bool) -> np.ndarray:
    """The vector a client gets: L2-normalised (cosine similarity is then a dot product) unless asked not to."""
    vector = result.vector if isinstance(result, ComputedEmbedding) else decode_vector(result["embedding"])
    if normalize:
        # What np.linalg.norm computes for one float32 vector (sqrt of its dot with itself), without its checks.
        norm = float(np.sqrt(vector.dot(vector)))
        if norm > 0.0:
            return vector / np.float32(norm)
    return vector.astype(np.float32)
