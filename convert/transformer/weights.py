"""model.safetensors of an encoder: the tensors each family needs, under their Hugging Face names, each checked
against the shape config.json implies. Pickled weights (pytorch_model.bin) are never read."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from convert.errors import ConversionError
from convert.transformer.config import EncoderConfig
from convert.transformer.safetensors_reader import SafetensorsError, load_tensors, read_header

WEIGHTS_FILE = "model.safetensors"
PICKLED = ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack")
# Per layer, the parts of one encoder layer (attention q/k/v/out, its LayerNorm, the feed-forward pair and its
# LayerNorm) under each family's module names.
LAYER_PARTS = {
    "bert": {"query": "attention.self.query", "key": "attention.self.key", "value": "attention.self.value",
             "attention_out": "attention.output.dense", "attention_norm": "attention.output.LayerNorm",
             "intermediate": "intermediate.dense", "output_dense": "output.dense", "output_norm": "output.LayerNorm"},
    "mpnet": {"query": "attention.attn.q", "key": "attention.attn.k", "value": "attention.attn.v",
              "attention_out": "attention.attn.o", "attention_norm": "attention.LayerNorm",
              "intermediate": "intermediate.dense", "output_dense": "output.dense", "output_norm": "output.LayerNorm"},
}
RELATIVE_BIAS = "encoder.relative_attention_bias.weight"


def layer_part(config: EncoderConfig, index: int, part: str) -> str:
    return f"encoder.layer.{index}.{LAYER_PARTS[config.family][part]}"


def expected_shapes(config: EncoderConfig) -> dict[str, tuple[int, ...]]:
    h, i = config.hidden, config.intermediate
    shapes = {"embeddings.word_embeddings.weight": (config.vocab_size, h),
              "embeddings.position_embeddings.weight": (config.max_positions, h),
              "embeddings.LayerNorm.weight": (h,), "embeddings.LayerNorm.bias": (h,)}
    if config.type_vocab_size:
        shapes["embeddings.token_type_embeddings.weight"] = (config.type_vocab_size, h)
    if config.relative_buckets:
        shapes[RELATIVE_BIAS] = (config.relative_buckets, config.heads)
    dense = {"query": (h, h), "key": (h, h), "value": (h, h), "attention_out": (h, h), "intermediate": (i, h),
             "output_dense": (h, i)}
    for index in range(config.layers):
        for part, shape in dense.items():
            shapes[layer_part(config, index, part) + ".weight"] = shape  # PyTorch Linear: (out, in)
            shapes[layer_part(config, index, part) + ".bias"] = (shape[0],)
        for part in ("attention_norm", "output_norm"):
            shapes[layer_part(config, index, part) + ".weight"] = (h,)
            shapes[layer_part(config, index, part) + ".bias"] = (h,)
    return shapes


def weights_file(directory: Path) -> Path:
    path = Path(directory) / WEIGHTS_FILE
    if path.is_file():
        return path
    pickled = [name for name in PICKLED if (Path(directory) / name).is_file()]
    if pickled:
        raise ConversionError("pickled_weights", f"{directory}: the weights are in {pickled[0]}, which convert never "
                              "unpickles: save with safetensors (model.save_pretrained(DIR, safe_serialization=True))")
    raise ConversionError("missing_file", f"{directory}: no {WEIGHTS_FILE}: save the model with save_pretrained() "
                          "(safetensors)")


def load_weights(directory: Path, config: EncoderConfig) -> dict[str, np.ndarray]:
    """The tensors `expected_shapes` names, as float32, from a file whose names may carry the model-type prefix
    (`bert.`, `mpnet.`) a task model's checkpoint adds."""
    path = weights_file(directory)
    try:
        header, _ = read_header(path)
    except SafetensorsError as error:
        raise ConversionError("bad_weights", f"{error}: save the model again with save_pretrained()") from None
    prefix = f"{config.family}." if f"{config.family}.embeddings.word_embeddings.weight" in header else ""
    wanted = expected_shapes(config)
    for name, shape in wanted.items():
        entry = header.get(prefix + name)
        if entry is None:
            raise ConversionError("weights_mismatch", f"{path.name} has no tensor {prefix + name!r}, which a "
                                  f"{config.family} model with config.json's {config.layers} layers has: the weights "
                                  "do not belong to this config.json")
        if tuple(entry["shape"]) != shape:
            raise ConversionError("weights_mismatch", f"{path.name}: tensor {prefix + name!r} has shape "
                                  f"{tuple(entry['shape'])}, but config.json implies {shape}: the weights do not "
                                  "belong to this config.json")
    try:
        tensors = load_tensors(path, [prefix + name for name in wanted])
    except SafetensorsError as error:
        raise ConversionError("bad_weights", f"{error}: save the model again with save_pretrained()") from None
    return {name: tensors[prefix + name].astype(np.float32) for name in wanted}
