"""A SavedModel exported in training mode is refused naming what shows it (random ops in the graph, answers that
change with the batch) and how to export it; the same model exported with training=False passes both checks."""
from __future__ import annotations

import os

import numpy as np
import pytest

from convert.errors import ConversionError
from convert.inference_mode import check_answers, check_graph

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def exported(tmp_path, name: str, middle, training: bool):
    """A small Dense model with `middle` inside, exported through an ExportArchive endpoint with `training`, and
    reloaded: its serving_default function."""
    from tests.support.convert_models import seeded_keras

    keras = seeded_keras()
    import tensorflow as tf

    inputs = keras.Input((4,), name="features")
    model = keras.Model(inputs, keras.layers.Dense(2)(middle(keras)(keras.layers.Dense(6)(inputs))))
    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.add_endpoint("serve", lambda x: model(x, training=training),
                         input_signature=[keras.InputSpec(shape=(None, 4), dtype="float32", name="features")])
    archive.write_out(str(tmp_path / name), verbose=False)
    function = tf.saved_model.load(str(tmp_path / name)).signatures["serving_default"]
    return function, {"features": np.random.default_rng(1).normal(size=(8, 4)).astype(np.float32)}


@pytest.mark.parametrize("training", [True, False])
def test_batch_statistics_show_as_answers_that_change_with_the_batch(tmp_path, training):
    function, inputs = exported(tmp_path, "batch_norm", lambda keras: keras.layers.BatchNormalization(), training)
    check_graph(tmp_path / "batch_norm", function)  # no random ops either way
    if not training:
        check_answers(tmp_path / "batch_norm", function, inputs)
        return
    with pytest.raises(ConversionError) as refused:
        check_answers(tmp_path / "batch_norm", function, inputs)
    assert refused.value.code == "training_mode_export"
    assert "answers a validation input differently alone than in a batch of 8" in str(refused.value)
    assert "lambda x: model(x, training=False)" in str(refused.value)


@pytest.mark.parametrize("training", [True, False])
def test_dropout_traced_in_training_mode_shows_as_random_ops(tmp_path, training):
    function, inputs = exported(tmp_path, "dropout", lambda keras: keras.layers.Dropout(0.5), training)
    if not training:
        check_graph(tmp_path / "dropout", function)
        check_answers(tmp_path / "dropout", function, inputs)
        return
    with pytest.raises(ConversionError) as refused:
        check_graph(tmp_path / "dropout", function)
    assert "dropout was exported in training mode: its serving signature draws random numbers (" in str(refused.value)
    with pytest.raises(ConversionError) as differ:
        check_answers(tmp_path / "dropout", function, inputs)
    assert "differently on two runs" in str(differ.value)
