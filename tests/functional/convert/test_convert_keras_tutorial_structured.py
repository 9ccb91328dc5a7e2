"""keras.io's "Structured data classification from scratch": one named keras.Input per column, StringLookup and
IntegerLookup (one_hot, and int -> Embedding) on the categorical columns, Normalization on the numeric ones,
concatenated into Dense layers (tests/support/penguins.py), trained briefly on the Palmer penguins of a PyPI package.

convert takes the lookup and normalization layers out into the manifest; the function, behind its real HTTP server,
answers raw values (strings and numbers, unseen categories included) over TF Serving's REST API (requests) and the
Open Inference Protocol with BYTES (tritonclient) as the Keras model's predict answers them on held-out rows. Bad
values get a 4xx with a stable code; an unsupported layer setting is refused in one line; a SavedModel export of the
same model (whose lookup tables LiteRT cannot run) is refused with advice that names the .keras route."""
from __future__ import annotations

import json

import numpy as np
import pytest
import requests

from function.catalog.registry import ModelRegistry
from tests.support import penguins
from tests.support.function_fixtures import make_service
from tests.support.local_api import serving

pytestmark = pytest.mark.slow

MODE = "float32"
ATOL = 1e-5  # probabilities, float32 conversion: the tensor gate's float32 bound is 1e-4 of the range
UNSEEN = {"island": "Atlantis", "sex": "", "year": 2011}  # values the layers never saw: their OOV index


@pytest.fixture(scope="module")
def tutorial(tmp_path_factory):
    """The trained model saved as penguins.keras beside validation.npz (raw rows of the training split, no
    expected: convert fills it with model.predict), the held-out rows (an unseen row added) and predict's answers."""
    import tensorflow as tf

    folder = tmp_path_factory.mktemp("structured_from_scratch")
    model, test, _ = penguins.trained_model()
    model.save(folder / "penguins.keras")
    train, _, _, _ = penguins.split()
    np.savez(folder / "validation.npz", **{f"raw_{name}": values[:128] for name, values in train.items()})
    held_out = {name: np.concatenate([values, np.array([UNSEEN.get(name, values[0])], dtype=values.dtype)])
                for name, values in test.items()}
    wanted = model.predict(penguins.as_inputs(held_out), verbose=0)
    assert wanted.shape == (penguins.HELD_OUT + 1, len(penguins.SPECIES))
    assert len(set(wanted.argmax(axis=1).tolist())) == 3  # every species answered
    assert tf.is_tensor(penguins.as_inputs(held_out)["island"])
    return folder, model, held_out, wanted


@pytest.fixture(scope="module")
def converted(tutorial, tmp_path_factory):
    from convert.__main__ import main

    folder, _, _, _ = tutorial
    models = tmp_path_factory.mktemp("structured_models")
    assert main([str(folder / "penguins.keras"), str(models / "penguins"), "--quantization", MODE]) == 0
    return models


@pytest.fixture(scope="module")
def api(converted):
    registry = ModelRegistry(converted)
    assert not registry.unservable, registry.unservable
    with serving(make_service(registry)) as url:
        yield url


def _rows(held_out: dict[str, np.ndarray]) -> list[dict]:
    return [{name: values[row].item() for name, values in held_out.items()}
            for row in range(len(held_out["island"]))]


def test_the_manifest_holds_the_layers_vocabularies_and_statistics(converted, tutorial):
    _, model, _, _ = tutorial
    manifest = json.loads((converted / "penguins" / "manifest.json").read_text())
    assert manifest["task"] == "tensor"
    columns = {column["name"]: column for column in manifest["preprocessing"]["columns"]}
    assert list(columns) == list(penguins.COLUMNS)
    island = columns["island"]["steps"][0]
    assert island["kind"] == "lookup" and island["output_mode"] == "int"
    assert sorted(island["vocabulary"]) == ["Biscoe", "Dream", "Torgersen"]
    assert columns["year"]["dtype"] == "int64" and sorted(columns["year"]["steps"][0]["vocabulary"]) == [2007, 2008,
                                                                                                       2009]
    layer = model.get_layer("body_mass_g_normalization")
    assert columns["body_mass_g"]["steps"][0]["mean"] == np.asarray(layer.mean).tolist()
    assert manifest["fidelity"]["served"]["passed"] is True  # the whole path was held against model.predict
    assert {spec["name"] for spec in manifest["inputs"]} == set(penguins.COLUMNS)  # the layers' outputs, named


def test_tf_serving_rest_answers_raw_rows_as_predict(api, tutorial):
    _, _, held_out, wanted = tutorial
    answer = requests.post(f"{api}/v1/models/penguins:predict", json={"instances": _rows(held_out)}, timeout=30)
    assert answer.status_code == 200, answer.text
    np.testing.assert_allclose(np.array(answer.json()["predictions"]), wanted, atol=ATOL, rtol=0)
    columnar = {name: values.tolist() for name, values in held_out.items()}
    answer = requests.post(f"{api}/v1/models/penguins:predict", json={"inputs": columnar}, timeout=30)
    assert answer.status_code == 200, answer.text
    np.testing.assert_allclose(np.array(answer.json()["outputs"]), wanted, atol=ATOL, rtol=0)


def test_open_inference_bytes_answers_raw_rows_as_predict(api, tutorial):
    import tritonclient.http as httpclient

    _, _, held_out, wanted = tutorial
    client = httpclient.InferenceServerClient(url=api.removeprefix("http://"))
    metadata = client.get_model_metadata("penguins")
    assert {item["name"]: item["datatype"] for item in metadata["inputs"]}["island"] == "BYTES"
    types = {"string": "BYTES", "int64": "INT64", "float32": "FP32"}
    inputs = []
    for name, values in held_out.items():
        kind = "string" if values.dtype.kind == "U" else values.dtype.name
        item = httpclient.InferInput(name, [len(values)], types[kind])
        item.set_data_from_numpy(values.astype(object) if kind == "string" else values, binary_data=name != "sex")
        inputs.append(item)
    result = client.infer("penguins", inputs)
    np.testing.assert_allclose(result.as_numpy(result.get_response()["outputs"][0]["name"]), wanted, atol=ATOL,
                               rtol=0)


def test_the_model_list_and_metadata_show_the_raw_columns(api):
    listed = requests.get(f"{api}/models", timeout=30).json()["models"][0]
    assert [item["name"] for item in listed["inputs"]] == list(penguins.COLUMNS)
    assert listed["inputs"][0] == {"name": "island", "shape": [-1], "dtype": "string"}
    metadata = requests.get(f"{api}/v1/models/penguins/metadata", timeout=30).json()
    inputs = metadata["metadata"]["signature_def"]["signature_def"]["serving_default"]["inputs"]
    assert inputs["sex"]["dtype"] == "DT_STRING" and inputs["year"]["dtype"] == "DT_INT64"


def test_an_unseen_category_is_answered_as_the_layers_oov_index(api, tutorial):
    _, _, held_out, wanted = tutorial
    row = _rows(held_out)[-1]
    assert row["island"] == "Atlantis" and row["year"] == 2011
    answer = requests.post(f"{api}/v1/models/penguins:predict", json={"instances": [row]}, timeout=30)
    assert answer.status_code == 200, answer.text
    np.testing.assert_allclose(answer.json()["predictions"][0], wanted[-1], atol=ATOL, rtol=0)


@pytest.mark.parametrize(("change", "code", "said"), [
    ({"body_mass_g": "heavy"}, "invalid_dtype", "takes float32 numbers"),  # a string where a number is expected
    ({"island": 3}, "invalid_dtype", "takes strings"),  # a number where a string is expected
    ({"year": 2008.5}, "invalid_dtype", "takes integers"),  # a fraction for the integer column
    ({"colour": "blue"}, "invalid_field", "takes exactly"),  # a column the model does not have
])
def test_bad_values_are_refused_with_a_stable_code(api, converted, tutorial, change, code, said):
    from function.errors import ServingError
    from function.log import Timings
    from function.protocols import tfserving

    _, _, held_out, _ = tutorial
    body = {"instances": [{**_rows(held_out)[0], **change}]}
    answer = requests.post(f"{api}/v1/models/penguins:predict", json=body, timeout=30)
    assert answer.status_code == 400, answer.text
    assert said in answer.json()["error"]  # TF Serving's error shape: the sentence alone
    task = ModelRegistry(converted).tensor_task("penguins")
    with pytest.raises(ServingError) as refused:
        tfserving.parse_predict(body, task, 16, tfserving.EncodedImages(16, Timings()))
    assert refused.value.code == code


def test_an_unsupported_layer_setting_is_refused_naming_the_layer(tmp_path, run_convert):
    from tests.support.convert_models import seeded_keras

    keras = seeded_keras()
    colour = keras.Input(shape=(1,), name="colour", dtype="string")
    lookup = keras.layers.StringLookup(vocabulary=["red", "green"], idf_weights=[0.5, 0.7], output_mode="tf_idf",
                                       name="colour_lookup")
    model = keras.Model(colour, keras.layers.Dense(1, activation="sigmoid")(lookup(colour)))
    model.save(tmp_path / "colours.keras")
    code, _, err = run_convert(tmp_path / "colours.keras", tmp_path / "out")
    assert code == 2
    line = err.strip()
    assert "\n" not in line and line.endswith("[unsupported_preprocessing_layer]")
    assert "StringLookup layer 'colour_lookup': output_mode is 'tf_idf'" in line


def test_a_savedmodel_export_is_refused_with_advice_naming_the_keras_route(tutorial, tmp_path, run_convert):
    _, model, held_out, _ = tutorial
    model.export(tmp_path / "exported", verbose=False)
    (tmp_path / "exported" / "sidecar.json").write_text(json.dumps(
        {"schema": 1, "name": "penguins", "task": "tensor", "validation": {"samples": "validation.npz"}}))
    np.savez(tmp_path / "exported" / "validation.npz", **{f"inputs_{name}": values[:, None]
                                                         for name, values in held_out.items()})
    code, _, err = run_convert(tmp_path / "exported", tmp_path / "out")
    assert code == 2
    assert "TextVectorization" not in err and "[needs_flex]" in err
    assert "StringLookup" in err and ".keras" in err


def test_every_layer_kind_without_validation_rows_is_checked_on_rows_drawn_from_the_layers(tmp_path, run_convert):
    """Hashing with a salt, a lookup -> CategoryEncoding chain, an IntegerLookup with several OOV indices and a
    column sent as it is: no validation.npz, so convert draws raw rows from the layers and holds the served path
    against the Keras model on them; then a request with values never seen answers as predict does."""
    import tensorflow as tf

    from tests.support.convert_models import seeded_keras

    keras = seeded_keras()
    layers = keras.layers
    colour = keras.Input(shape=(1,), name="colour", dtype="string")
    shop = keras.Input(shape=(1,), name="shop", dtype="string")
    size = keras.Input(shape=(1,), name="size", dtype="int64")
    price = keras.Input(shape=(1,), name="price")
    colour_ids = layers.StringLookup(vocabulary=["red", "green", "blue"], mask_token="", name="colour_lookup")(colour)
    features = layers.concatenate([
        layers.CategoryEncoding(num_tokens=5, output_mode="one_hot", name="colour_one_hot")(colour_ids),
        layers.Hashing(num_bins=8, salt=[17, 29], output_mode="one_hot", name="shop_hash")(shop),
        layers.IntegerLookup(vocabulary=[36, 38, 40], num_oov_indices=3, output_mode="one_hot",
                             name="size_lookup")(size),
        price])
    model = keras.Model([colour, shop, size, price], layers.Dense(2, activation="softmax")(layers.Dense(8)(features)))
    model.save(tmp_path / "shoes.keras")
    code, out, err = run_convert(tmp_path / "shoes.keras", tmp_path / "models" / "shoes", "--quantization", MODE)
    assert code == 0, err
    assert "256 raw rows drawn from the layers' vocabularies and statistics" in out
    assert "column 'colour': StringLookup 'colour_lookup' -> CategoryEncoding 'colour_one_hot'" in out
    assert "column 'price': as sent" in out and "the served path was checked" in out
    rows = {"colour": np.array(["blue", "", "mauve"]), "shop": np.array(["north", "a shop never seen", ""]),
            "size": np.array([38, 41, -7], dtype=np.int64), "price": np.array([12.5, 99.0, 0.0], dtype=np.float32)}
    wanted = model.predict({name: tf.constant(values.reshape(-1, 1)) for name, values in rows.items()}, verbose=0)
    registry = ModelRegistry(tmp_path / "models")
    assert not registry.unservable, registry.unservable
    with serving(make_service(registry)) as url:
        answer = requests.post(f"{url}/v1/models/shoes:predict", json={"inputs": {
            name: values.tolist() for name, values in rows.items()}}, timeout=30)
    assert answer.status_code == 200, answer.text
    np.testing.assert_allclose(np.array(answer.json()["outputs"]), wanted, atol=ATOL, rtol=0)


def test_expected_answers_from_another_model_fail_the_served_gate(tutorial, tmp_path, run_convert):
    """The gate can fail: given raw rows whose `expected` are another model's (the rows' answers shifted by one),
    the whole served path disagrees and nothing is written."""
    import shutil

    folder, model, held_out, _ = tutorial
    shutil.copyfile(folder / "penguins.keras", tmp_path / "penguins.keras")
    wanted = model.predict(penguins.as_inputs(held_out), verbose=0)
    np.savez(tmp_path / "validation.npz", **{f"raw_{name}": values for name, values in held_out.items()},
             expected=np.roll(wanted, 1, axis=0))
    code, out, err = run_convert(tmp_path / "penguins.keras", tmp_path / "out", "--quantization", MODE)
    assert code == 2 and err.strip().endswith("[served_disagrees]"), err
    assert "raw rows from validation.npz" in out and "off expected's" in err and "sidecar.json" not in err
    assert not (tmp_path / "out").exists()
