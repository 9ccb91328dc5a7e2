"""An encoder's Keras layers loaded with its Hugging Face weights, and the (input_ids, attention_mask) -> pooled
vector model built from them: the one builder behind `convert HF_DIR` and the demo recipes' MiniLM."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convert.transformer.config import EncoderConfig
from convert.transformer.layers import keras_layers
from convert.transformer.weights import LAYER_PARTS, RELATIVE_BIAS, layer_part

INPUT_NAMES = ("input_ids", "attention_mask")


@dataclass
class EncoderLayers:
    embeddings: object
    blocks: list
    mask_bias: object
    position_bias: object | None  # MPNet's relative-position bias; None for BERT

    def attention_bias(self, ids, mask):
        bias = self.mask_bias(mask)
        return bias if self.position_bias is None else self.position_bias(bias, ids)

    def last_hidden_state(self, ids, mask):
        hidden, bias = self.embeddings(ids), self.attention_bias(ids, mask)
        for block in self.blocks:
            hidden = block(hidden, bias)
        return hidden


def make_layers(config: EncoderConfig, weights: dict[str, np.ndarray], max_length: int,
                dropout: float = 0.0) -> EncoderLayers:
    """The encoder's layers for sequences of up to max_length tokens, loaded with `weights` (Hugging Face names,
    PyTorch layouts: convert/transformer/weights.py)."""
    if max_length > config.longest_sequence:
        raise ValueError(f"max_length {max_length}: the model has positions for {config.longest_sequence} tokens")
    Embeddings, TransformerBlock, MaskBias, RelativePositionBias, _ = keras_layers()
    embeddings = Embeddings(config, max_length, name="embeddings")
    embeddings.build((None, max_length))
    embeddings.words.set_weights([weights["embeddings.word_embeddings.weight"]])
    start = config.position_offset
    embeddings.positions.assign(weights["embeddings.position_embeddings.weight"][start:start + max_length])
    if config.type_vocab_size:
        embeddings.segment.assign(weights["embeddings.token_type_embeddings.weight"][0])
    embeddings.norm.set_weights([weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"]])

    blocks = []
    for index in range(config.layers):
        block = TransformerBlock(config, max_length, dropout=dropout, name=f"encoder_{index}")
        block.build((None, max_length, config.hidden))
        for part in LAYER_PARTS[config.family]:
            name = layer_part(config, index, part)
            weight = weights[name + ".weight"]
            # PyTorch stores Linear weights as (out, in); Keras Dense wants (in, out). LayerNorms are 1-d.
            getattr(block, part).set_weights([weight.T if weight.ndim == 2 else weight, weights[name + ".bias"]])
        blocks.append(block)

    position_bias = None
    if config.relative_buckets:
        position_bias = RelativePositionBias(config, max_length, name="relative_position_bias")
        position_bias.build(None)
        position_bias.table.assign(weights[RELATIVE_BIAS])
    return EncoderLayers(embeddings, blocks, MaskBias(name="mask_bias"), position_bias)


def build_encoder(config: EncoderConfig, weights: dict[str, np.ndarray], max_length: int, pooling: str,
                  name: str):
    """(input_ids, attention_mask) int32 [batch, seq] -> pooled vector [batch, hidden], not normalised; the
    sequence length and the batch are open."""
    import keras  # noqa: PLC0415

    layers = make_layers(config, weights, max_length)
    pool = keras_layers()[-1](pooling, name="pooling")
    ids = keras.Input((None,), dtype="int32", name=INPUT_NAMES[0])
    mask = keras.Input((None,), dtype="int32", name=INPUT_NAMES[1])
    return keras.Model([ids, mask], pool(layers.last_hidden_state(ids, mask), mask), name=name)
