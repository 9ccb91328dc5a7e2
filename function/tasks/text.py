"""What text tasks share: client strings -> the model's own tokenizer -> padded token ids and attention mask."""
from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from time import perf_counter

import numpy as np

from function.cache.keys import digest_text
from function.log import Timings
from function.tasks.base import Batch, Task


class TextTask(Task):
    def check_manifest(self) -> None:
        manifest = self.manifest
        ids = manifest.input("input_ids")
        self.require(ids is not None, f"a {self.name} model needs an input with role 'input_ids'")
        for spec in manifest.inputs:
            self.require(spec.role in ("input_ids", "attention_mask"),
                         f"input {spec.name!r} has role {spec.role!r}; a text model takes input_ids and "
                         "attention_mask")
            self.require(len(spec.shape) == 2 and np.dtype(spec.dtype).kind == "i",
                         f"input {spec.name!r} is {spec.dtype} {list(spec.shape)}; a text model takes integer "
                         "token ids [batch, sequence]")
        max_length = manifest.preprocessing.get("max_length")
        self.require(isinstance(max_length, int) and max_length > 0, "preprocessing.max_length must be a positive "
                     "integer")
        self.require(ids.shape[1] in (-1, max_length),
                     f"preprocessing.max_length {max_length} does not fit input shape {list(ids.shape)}")
        for spec in manifest.inputs:  # the tokenizer truncates to max_length: the model must take that many
            self.require(spec.max_shape is None or max_length <= spec.max_shape[1],
                         f"preprocessing.max_length {max_length} is beyond the {spec.max_shape and spec.max_shape[1]} "
                         f"tokens input {spec.name!r} takes (its max_shape)")
        tokenizer = manifest.file("tokenizer", "tokenizer.json")
        self.require(tokenizer.name in manifest.files, f"the tokenizer {tokenizer.name!r} is not listed in files")

    @cached_property
    def fixed_length(self) -> bool:
        return self.manifest.input("input_ids").shape[1] != -1

    @cached_property
    def _roles(self) -> frozenset[str]:
        return frozenset(spec.role for spec in self.manifest.inputs)

    def input_digest(self, item: str) -> str:
        return digest_text(item)

    def encoder(self):
        """The tokenizer alone: /tokenize needs no interpreter."""
        encoder = self._components.get("encoder")  # a warm request's case, before the import and the closure
        if encoder is not None:
            return encoder
        from function.preprocessing.text import TextEncoder  # noqa: PLC0415  (image-only containers never pay)

        spec = self.manifest.preprocessing
        return self.component("encoder", lambda: TextEncoder(self.manifest.file("tokenizer", "tokenizer.json"),
                                                             spec["max_length"], bool(spec.get("lowercase", False))))

    def load(self) -> None:
        self.runner()
        self.encoder()

    def notes_of(self, tensors: dict[str, np.ndarray]) -> list[dict]:
        if "attention_mask" in tensors:
            counts = tensors["attention_mask"].sum(axis=1)
        else:
            counts = (tensors["input_ids"] != self.encoder().pad_id).sum(axis=1)
        return [{"tokens": int(count), "truncated": False} for count in counts]

    def preprocess(self, items: Sequence[str], timings: Timings) -> Batch:
        start = perf_counter()
        try:
            encoder = self.encoder()
            encoded = encoder.encode(list(items))
            tensors = encoder.batch(encoded, self.fixed_length)
        finally:
            timings.add("preprocess", start)
        roles = self._roles
        notes = [{"tokens": len(e.ids), "truncated": e.truncated} for e in encoded]
        timings.tokens += sum(note["tokens"] for note in notes)
        return Batch({role: array for role, array in tensors.items() if role in roles}, notes)
