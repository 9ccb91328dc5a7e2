"""Recurrent layers made convertible: LSTM/GRU/SimpleRNN (and Bidirectional wrappers of them) rebuilt with
unroll=True over a fixed sequence length, weights copied.

Why: a recurrent layer with unroll=False runs a while loop over TensorList ops, which the TFLite converter can only
lower when every element shape is static, batch included, and a model.export() signature leaves the batch open. An
unrolled layer is plain matmuls per time step: it converts with builtin ops and keeps the open batch.
"""
from __future__ import annotations

from typing import Any


def is_recurrent(layer, keras) -> bool:
    return isinstance(layer, (keras.layers.RNN, keras.layers.Bidirectional))


def needs_unrolling(layer, keras) -> bool:
    if isinstance(layer, keras.layers.Bidirectional):
        return not (layer.forward_layer.unroll and layer.backward_layer.unroll)
    return isinstance(layer, keras.layers.RNN) and not layer.unroll


def _unrolled_config(config: dict[str, Any]) -> dict[str, Any]:
    return {**config, "unroll": True}


def unrolled_copy(layer, keras):
    """The same layer, unrolled, with its own (not yet built) weights; other layers are returned as they are."""
    if not needs_unrolling(layer, keras):
        return layer
    config = layer.get_config()
    if isinstance(layer, keras.layers.Bidirectional):
        for key in ("layer", "backward_layer"):
            if config.get(key):
                config[key] = {**config[key], "config": _unrolled_config(config[key]["config"])}
        return keras.layers.Bidirectional.from_config(config)
    return type(layer).from_config(_unrolled_config(config))


def copy_weights(pairs) -> None:
    """(original, copy) layer pairs: every rebuilt layer takes the original's trained weights."""
    for original, copy in pairs:
        if copy is not original and original.weights:
            copy.set_weights(original.get_weights())
