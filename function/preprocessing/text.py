"""Text -> token ids and attention mask with the model's own tokenizer.json, padded/truncated to max_length.

Text longer than max_length tokens is truncated (the tokenizer keeps the first tokens and its special tokens);
/tokenize reports `truncated` so a client can tell. Loading a tokenizer needs no interpreter.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from function.records import named_tuple


@named_tuple
class EncodedText:
    ids: list[int]  # without padding
    attention_mask: list[int]
    truncated: bool
    encoding: Any  # the tokenizer's own Encoding: only /tokenize reads the token strings, so only it converts them

    @property
    def tokens(self) -> list[str]:
        return list(self.encoding.tokens)


class TextEncoder:
    def __init__(self, tokenizer_file: Path, max_length: int, lowercase: bool = False):
        from tokenizers import Tokenizer  # noqa: PLC0415  (image-only containers never pay for it)

        self.max_length = int(max_length)
        self.lowercase = lowercase
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        padding = self._tokenizer.padding or {}
        self.pad_id = int(padding["pad_id"]) if "pad_id" in padding else self._guess_pad_id()
        self._tokenizer.no_padding()  # we pad ourselves to max_length, with the pad id the file declares
        self._tokenizer.enable_truncation(self.max_length)

    def _guess_pad_id(self) -> int:
        for token in ("[PAD]", "<pad>", "<PAD>"):
            token_id = self._tokenizer.token_to_id(token)
            if token_id is not None:
                return token_id
        return 0

    def encode(self, texts: list[str]) -> list[EncodedText]:
        encodings = self._tokenizer.encode_batch([text.lower() for text in texts] if self.lowercase else texts)
        # ids and attention_mask make a new list on every read: no copy of them needed
        return [EncodedText(e.ids, e.attention_mask, bool(e.overflowing), e) for e in encodings]

    def batch(self, encoded: list[EncodedText], fixed_length: bool = True) -> dict[str, np.ndarray]:
        """role -> (batch, length) int32, padded with the pad id (mask 0): to max_length for a model with a fixed
        sequence length, else to the batch's own longest text (a short sentence is not run as 256 tokens)."""
        length = self.max_length if fixed_length else max(len(item.ids) for item in encoded)
        ids = np.zeros((len(encoded), length), dtype=np.int32)  # np.full is a Python function over zeros' C
        if self.pad_id:
            ids.fill(self.pad_id)
        mask = np.zeros((len(encoded), length), dtype=np.int32)
        for row, item in enumerate(encoded):
            ids[row, :len(item.ids)] = item.ids
            mask[row, :len(item.attention_mask)] = item.attention_mask
        return {"input_ids": ids, "attention_mask": mask}
