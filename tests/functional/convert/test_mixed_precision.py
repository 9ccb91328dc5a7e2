"""The mixed mode's parts on real converted models: int8 weights swapped into a float32 .tflite, and the search for
the fewest layers to keep float32."""
from __future__ import annotations

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from convert.errors import ConversionError
from convert.mixed_precision import WeightQuantizer, choose, output_error
from tests.support.convert_models import seeded_keras

pytestmark = pytest.mark.slow
DENSE_LAYERS = 5
WIDTH = 64


def float32_tflite(model) -> bytes:
    import tensorflow as tf

    return tf.lite.TFLiteConverter.from_keras_model(model).convert()


@pytest.fixture(scope="module")
def mlp() -> bytes:
    """Five Dense layers with seeded random weights: enough layers to search among."""
    keras = seeded_keras()
    inputs = keras.Input(shape=(WIDTH,), name="features")
    x = inputs
    for index in range(DENSE_LAYERS):
        x = keras.layers.Dense(WIDTH, activation="tanh", name=f"dense_{index}")(x)
    return float32_tflite(keras.Model(inputs, x))


@pytest.fixture(scope="module")
def features() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(48, WIDTH)).astype(np.float32)


def answers(content: bytes, features: np.ndarray) -> np.ndarray:
    interpreter = Interpreter(model_content=content)
    (runner_input,) = interpreter.get_signature_runner().get_input_details()
    return next(iter(interpreter.get_signature_runner()(**{runner_input: features}).values()))


def int8_weights(content: bytes) -> list[dict]:
    details = Interpreter(model_content=content).get_tensor_details()
    return [tensor for tensor in details if tensor["dtype"] == np.int8]


def test_every_dense_layer_is_found_and_swapped_to_int8_per_channel(mlp, features):
    quantizer = WeightQuantizer(mlp)
    assert len(quantizer.names) == DENSE_LAYERS
    quantized = quantizer.content()
    weights = int8_weights(quantized)
    assert len(weights) == DENSE_LAYERS
    assert all(len(tensor["quantization_parameters"]["scales"]) == WIDTH for tensor in weights)  # one per channel
    assert all(not tensor["quantization_parameters"]["zero_points"].any() for tensor in weights)
    assert len(quantized) < len(mlp) / 2  # float32 weights are 4 bytes, int8 one
    reference, got = answers(mlp, features), answers(quantized, features)
    assert not np.array_equal(reference, got)  # quantized, not a copy
    assert 0 < output_error({"y": reference}, {"y": got}) < 0.05


def test_keeping_every_layer_float32_gives_the_float32_answers_exactly(mlp, features):
    quantizer = WeightQuantizer(mlp)
    quantizer.content()  # swapping back and forth leaves no trace
    kept = quantizer.content(set(quantizer.names))
    assert int8_weights(kept) == []
    np.testing.assert_array_equal(answers(kept, features), answers(mlp, features))


def test_the_search_keeps_the_fewest_layers_that_pass_most_harmful_first(mlp, features):
    quantizer = WeightQuantizer(mlp)
    reference = {"y": answers(mlp, features)}

    def error(content: bytes) -> float:
        return output_error(reference, {"y": answers(content, features)})

    everything = set(quantizer.names)
    alone = {name: error(quantizer.content(everything - {name})) for name in quantizer.names}
    ranked = sorted(quantizer.names, key=lambda name: -alone[name])
    # A bound between the errors with the two and the three most harmful layers kept float32.
    with_two, with_three = (error(quantizer.content(set(ranked[:kept]))) for kept in (2, 3))
    assert with_three < with_two
    bound = (with_two + with_three) / 2
    lines: list[str] = []
    choice = choose(quantizer, error, lambda content: error(content) <= bound, lines.append)
    assert choice.float_layers == tuple(ranked[:3]) and choice.layers == DENSE_LAYERS
    assert len(int8_weights(choice.content)) == DENSE_LAYERS - 3
    assert "mixed: 2 of 5 layers float32: gate fail" in lines and "mixed: 3 of 5 layers float32: gate pass" in lines


def test_a_model_the_gate_refuses_even_in_float32_is_refused_with_advice(mlp):
    with pytest.raises(ConversionError) as raised:
        choose(WeightQuantizer(mlp), lambda content: 0.0, lambda content: False, lambda line: None)
    assert raised.value.code == "fidelity_failed" and "use float32" in raised.value.message


def test_a_model_without_dense_layers_has_nothing_for_the_mixed_mode():
    keras = seeded_keras()
    inputs = keras.Input(shape=(8, 8, 1), name="pixels")
    outputs = keras.layers.Conv2D(4, 3, name="conv")(inputs)
    quantizer = WeightQuantizer(float32_tflite(keras.Model(inputs, outputs)))
    assert quantizer.names == []
    with pytest.raises(ConversionError) as raised:
        choose(quantizer, lambda content: 0.0, lambda content: True, lambda line: None)
    assert raised.value.code == "nothing_to_quantize" and "float16 or dynamic" in raised.value.message
