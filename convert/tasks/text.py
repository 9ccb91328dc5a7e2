"""Text preprocessing in the sidecar, and the token inputs it must fit: integer ids (N, sequence)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from convert.saved_model_inspect import SavedModelInfo
from convert.sidecar_fields import check_keys, file_in, flag, mapping, positive_int, refuse, require, show
from convert.tasks.base import describe, mismatch

KEYS = ("type", "tokenizer", "max_length", "lowercase")
ROLES = ("input_ids", "attention_mask")


def parse_text_preprocessing(value, directory: Path, task: str) -> dict:
    """Checked and normalised (lowercase filled in); `tokenizer` stays relative to the SavedModel directory."""
    data = mapping(value, "preprocessing")
    check_keys(data, KEYS, "preprocessing", "of \"preprocessing\" for a text model")
    kind = require(data, "type", "preprocessing")
    if kind != "text":
        raise refuse("preprocessing.type", f"is {show(kind)}, which does not fit task \"{task}\"", "write \"text\"")
    tokenizer = require(data, "tokenizer", "preprocessing")
    file_in(directory, tokenizer, "preprocessing.tokenizer")
    max_length = positive_int(require(data, "max_length", "preprocessing"), "preprocessing.max_length")
    lowercase = flag(data.get("lowercase", False), "preprocessing.lowercase")
    return {"type": "text", "tokenizer": tokenizer, "max_length": max_length, "lowercase": lowercase}


def check_token_inputs(preprocessing: dict, info: SavedModelInfo, roles: dict[str, str]) -> None:
    """Each role is integer ids (N, sequence); a fixed sequence length must be the length the function pads to."""
    max_length = preprocessing["max_length"]
    for role, name in roles.items():
        tensor = info.inputs[name]
        if not np.issubdtype(np.dtype(tensor.dtype), np.integer):
            raise mismatch(f"inputs.{role}", f"names {describe(tensor)}, but {role} are integer token ids",
                           "use \"task\": \"tensor\" for a model over float features")
        if len(tensor.shape) != 2:
            raise mismatch(f"inputs.{role}", f"names {describe(tensor)}, but {role} are (N, sequence)",
                           "export the model with (N, sequence) token inputs, or use \"task\": \"tensor\"")
        fixed = tensor.shape[1]
        if fixed is not None and fixed != max_length:
            raise mismatch("preprocessing.max_length", f"is {max_length} but input '{name}' has a fixed length of "
                           f"{fixed}", f"write \"max_length\": {fixed} (the function pads every text to it)")
