"""config.json of a Hugging Face encoder: which family it is and its sizes, checked before any weight is read.

Two families are rebuilt (both post-LayerNorm encoders with exact-erf GELU):
- `bert` (BERT, MiniLM, BGE, E5, GTE, ...): learned absolute positions from 0, token-type embeddings;
- `mpnet` (all-mpnet-base-v2, ...): learned absolute positions from pad_token_id + 1, no token types, and a
  bucketed relative-position bias added to every layer's attention scores.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from convert.errors import ConversionError
from convert.json_file import read_json_file

CONFIG_FILE = "config.json"
FAMILIES = ("bert", "mpnet")
SUPPORTED = "bert (BERT, MiniLM, BGE, E5, GTE) and mpnet (all-mpnet-base-v2)"


@dataclass(frozen=True)
class EncoderConfig:
    family: str
    vocab_size: int
    hidden: int
    heads: int
    layers: int
    intermediate: int
    epsilon: float
    max_positions: int
    position_offset: int  # the position id of the first token: 0 for bert, pad_token_id + 1 for mpnet
    type_vocab_size: int  # bert's token-type embeddings (segment 0 is added to every token); 0 for mpnet
    relative_buckets: int  # mpnet's relative-position buckets; 0 for bert

    @property
    def head_size(self) -> int:
        return self.hidden // self.heads

    @property
    def longest_sequence(self) -> int:
        """The most tokens the position table covers."""
        return self.max_positions - self.position_offset


def _field(config: dict, key: str, kind: type, path: Path):
    value = config.get(key)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool) or (kind is int and value <= 0):
        raise ConversionError("bad_config", f"{path}: \"{key}\" is {json.dumps(value)}, not a positive "
                              f"{kind.__name__}: save the model's config with save_pretrained()")
    return value


def _whole_number(config: dict, key: str, default: int, path: Path) -> int:
    """An optional field that is a whole number >= 0 (a token id, a table size)."""
    value = config.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConversionError("bad_config", f"{path}: \"{key}\" is {json.dumps(value)[:80]}, not a whole number: save "
                              "the model's config with save_pretrained()")
    return value


def parse_config(config: dict, path: Path) -> EncoderConfig:
    family = config.get("model_type")
    if family not in FAMILIES:
        raise ConversionError("unsupported_architecture", f"{path}: model_type {json.dumps(family)} is not "
                              f"supported: convert rebuilds {SUPPORTED}")
    activation = config.get("hidden_act", "gelu")
    if activation != "gelu":
        raise ConversionError("unsupported_architecture", f"{path}: hidden_act {json.dumps(activation)} is not "
                              "supported: convert rebuilds encoders with exact GELU (\"gelu\")")
    if family == "bert" and config.get("position_embedding_type", "absolute") != "absolute":
        raise ConversionError("unsupported_architecture", f"{path}: position_embedding_type "
                              f"{json.dumps(config['position_embedding_type'])} is not supported: convert rebuilds "
                              "bert models with absolute positions")
    hidden, heads = _field(config, "hidden_size", int, path), _field(config, "num_attention_heads", int, path)
    if hidden % heads:
        raise ConversionError("bad_config", f"{path}: hidden_size {hidden} is not a multiple of num_attention_heads "
                              f"{heads}")
    is_bert = family == "bert"
    return EncoderConfig(
        family=family, vocab_size=_field(config, "vocab_size", int, path), hidden=hidden, heads=heads,
        layers=_field(config, "num_hidden_layers", int, path),
        intermediate=_field(config, "intermediate_size", int, path),
        epsilon=_field(config, "layer_norm_eps", float, path),
        max_positions=_field(config, "max_position_embeddings", int, path),
        position_offset=0 if is_bert else _whole_number(config, "pad_token_id", 1, path) + 1,
        type_vocab_size=_whole_number(config, "type_vocab_size", 2, path) if is_bert else 0,
        relative_buckets=0 if is_bert else _field(config, "relative_attention_num_buckets", int, path))


def read_config(directory: Path) -> EncoderConfig:
    path = Path(directory) / CONFIG_FILE
    if not path.is_file():
        raise ConversionError("missing_file", f"{directory}: no {CONFIG_FILE}: save the model with save_pretrained() "
                              "(or SentenceTransformer.save())")
    return parse_config(read_config_json(path), path)


def read_config_json(path: Path) -> dict:
    """config.json's object, read as every JSON file convert is handed (convert/json_file.py)."""
    return read_json_file(path, "bad_config", "save the model again with save_pretrained()")
