"""keras.io's "Structured data classification with FeatureSpace": a FeatureSpace of string, integer and normalized
float features (output_mode "concat") adapted on the Palmer penguins (tests/support/penguins.py), the inference
model built as the tutorial builds it (`feature_space.get_inputs()` -> `get_encoded_features()` -> Dense layers),
saved as .keras. Its lookup -> CategoryEncoding chains are taken out like any others, and the served answers to
held-out raw rows over TF Serving's REST API equal the Keras model's predict."""
from __future__ import annotations

import numpy as np
import pytest
import requests

from function.catalog.registry import ModelRegistry
from tests.support import penguins
from tests.support.function_fixtures import make_service
from tests.support.local_api import serving

pytestmark = pytest.mark.slow

FEATURES = ("island", "sex", "year", "bill_length_mm", "flipper_length_mm")


def test_a_feature_space_model_answers_raw_rows_as_predict(tmp_path, run_convert):
    import tensorflow as tf

    from tests.support.convert_models import seeded_keras

    keras = seeded_keras()
    from keras.utils import FeatureSpace

    train, labels, test, _ = penguins.split()
    train_ds = tf.data.Dataset.from_tensor_slices(({name: train[name] for name in FEATURES}, labels)).batch(32)
    feature_space = FeatureSpace(
        features={"island": FeatureSpace.string_categorical(num_oov_indices=1), "sex": "string_categorical",
                  "year": "integer_categorical", "bill_length_mm": "float_normalized",
                  "flipper_length_mm": "float_normalized"},
        output_mode="concat")
    feature_space.adapt(train_ds.map(lambda x, _: x))
    preprocessed_ds = train_ds.map(lambda x, y: (feature_space(x), y))
    encoded_features = feature_space.get_encoded_features()
    x = keras.layers.Dense(16, activation="relu")(encoded_features)
    predictions = keras.layers.Dense(3, activation="softmax")(x)
    training_model = keras.Model(inputs=encoded_features, outputs=predictions)
    training_model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    training_model.fit(preprocessed_ds, epochs=10, verbose=0)
    inference_model = keras.Model(inputs=feature_space.get_inputs(), outputs=training_model(encoded_features))
    inference_model.save(tmp_path / "penguins_fs.keras")

    code, out, err = run_convert(tmp_path / "penguins_fs.keras", tmp_path / "models" / "penguins_fs",
                                 "--quantization", "float32")
    assert code == 0, err
    assert "-> CategoryEncoding" in out and "the served path was checked" in out
    rows = {name: np.concatenate([test[name], np.array(["Atlantis"] if name == "island" else test[name][:1])])
            for name in FEATURES}
    wanted = inference_model.predict({name: tf.constant(values) for name, values in rows.items()}, verbose=0)
    registry = ModelRegistry(tmp_path / "models")
    assert not registry.unservable, registry.unservable
    with serving(make_service(registry)) as url:
        answer = requests.post(f"{url}/v1/models/penguins_fs:predict", json={"instances": [
            {name: values[row].item() for name, values in rows.items()} for row in range(len(wanted))]}, timeout=30)
    assert answer.status_code == 200, answer.text
    np.testing.assert_allclose(np.array(answer.json()["predictions"]), wanted, atol=1e-5, rtol=0)
    assert (np.array(answer.json()["predictions"]).argmax(axis=1)[:-1] == penguins.split()[3]).mean() > 0.8
