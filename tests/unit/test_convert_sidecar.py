"""sidecar.json (schema 1) is strict: good ones load normalised, and each refusal names its field in one line."""
from __future__ import annotations

import copy
import json

import pytest

from convert.errors import ConversionError
from convert.sidecar_reader import load_sidecar
from saved_model.recipes import digits, efficientnet_lite0, sentiment

IMAGE = {
    "schema": 1, "name": "cats", "task": "image_classification", "labels": ["cat", "dog"], "output": "logits",
    "preprocessing": {"type": "image", "color_mode": "RGB", "size": [4, 4], "resize": "bilinear",
                      "mean": [0, 0, 0], "std": [1, 1, 1]},
    "inputs": {"image": "pixels"}, "validation": {"samples": "validation.npz"},
    "metrics": {"test_accuracy": 0.9}, "description": "cats and dogs",
}
TEXT_PREPROCESSING = {"type": "text", "tokenizer": "tokenizer.json", "max_length": 8, "lowercase": False}
TEXT = {"schema": 1, "name": "mood", "task": "text_classification", "labels": ["neg", "pos"],
        "output": "probabilities", "preprocessing": TEXT_PREPROCESSING, "inputs": {"input_ids": "ids"},
        "validation": {"samples": "validation.npz"}}
EMBEDDING = {"schema": 1, "name": "minilm", "task": "text_embedding", "preprocessing": TEXT_PREPROCESSING,
             "inputs": {"input_ids": "ids", "attention_mask": "mask"}, "outputs": {"embedding": "pooled"},
             "validation": {"samples": "validation.npz"}}
TENSOR = {"schema": 1, "name": "tabular", "task": "tensor", "inputs": ["b", "a"], "outputs": ["y"],
          "validation": {"samples": "validation.npz", "representative": "validation.npz"}}


PRESET = {**IMAGE, "preprocessing": {"type": "image", "size": [4, 4], "keras_applications": "vgg16"}}


def write(directory, sidecar: dict) -> None:
    (directory / "validation.npz").write_bytes(b"")
    (directory / "tokenizer.json").write_text("{}")
    (directory / "sidecar.json").write_text(json.dumps(sidecar))


def changed(base: dict, path: str, value=None, delete: bool = False) -> dict:
    """A deep copy of `base` with the dotted `path` set to `value` (or deleted)."""
    sidecar = copy.deepcopy(base)
    *parents, last = path.split(".")
    target = sidecar
    for key in parents:
        target = target[key]
    if delete:
        del target[last]
    else:
        target[last] = value
    return sidecar


def refusal(tmp_path, sidecar: dict) -> ConversionError:
    write(tmp_path, sidecar)
    with pytest.raises(ConversionError) as raised:
        load_sidecar(tmp_path)
    assert raised.value.code == "bad_sidecar" and "\n" not in raised.value.message
    assert raised.value.message.startswith("sidecar.json: ")
    return raised.value


def test_a_keras_applications_preset_fills_colour_divisor_mean_and_std(tmp_path):
    write(tmp_path, PRESET)
    assert load_sidecar(tmp_path).preprocessing == {
        "type": "image", "color_mode": "BGR", "size": [4, 4], "resize": "bilinear", "divisor": 1.0,
        "mean": [103.939, 116.779, 123.68], "std": [1.0, 1.0, 1.0], "keras_applications": "vgg16"}
    write(tmp_path, changed(PRESET, "preprocessing.keras_applications", "densenet"))
    assert load_sidecar(tmp_path).preprocessing["divisor"] == 255.0


def test_no_sidecar_is_not_an_error(tmp_path):
    assert load_sidecar(tmp_path) is None


def test_image_sidecar_loads_normalised(tmp_path):
    sidecar = changed(changed(IMAGE, "preprocessing.mean", [127.5]), "preprocessing.resize", delete=True)
    write(tmp_path, sidecar)
    loaded = load_sidecar(tmp_path)
    assert loaded.labels == ["cat", "dog"] and loaded.output == "logits" and loaded.inputs == {"image": "pixels"}
    assert loaded.preprocessing == {"type": "image", "color_mode": "RGB", "size": [4, 4], "resize": "bilinear",
                                    "divisor": 1.0, "mean": [127.5] * 3, "std": [1.0] * 3}
    assert loaded.samples == tmp_path / "validation.npz" == loaded.representative and loaded.tokenizer is None
    assert loaded.extra == {"metrics": {"test_accuracy": 0.9}, "description": "cats and dogs"}


def test_text_sidecars_name_their_tokenizer(tmp_path):
    write(tmp_path, changed(TEXT, "preprocessing.lowercase", delete=True))
    loaded = load_sidecar(tmp_path)
    assert loaded.tokenizer == tmp_path / "tokenizer.json" and loaded.preprocessing["lowercase"] is False
    write(tmp_path, EMBEDDING)
    loaded = load_sidecar(tmp_path)
    assert loaded.labels is None and loaded.output is None and loaded.outputs == {"embedding": "pooled"}


def test_tensor_sidecar_keeps_the_order_clients_see(tmp_path):
    write(tmp_path, TENSOR)
    loaded = load_sidecar(tmp_path)
    assert loaded.inputs == ["b", "a"] and loaded.outputs == ["y"] and loaded.preprocessing is None
    write(tmp_path, changed(changed(TENSOR, "inputs", delete=True), "outputs", delete=True))
    assert load_sidecar(tmp_path).inputs is None


def test_the_demo_recipes_write_strict_sidecars(tmp_path):
    """The recipes' sidecar() output, with the validation entry write_saved_model adds, passes as it is."""
    labels = [f"class {index}" for index in range(1000)]
    for sidecar in (digits.sidecar(0.99), sentiment.sidecar(0.82, 1000), efficientnet_lite0.sidecar(labels, "x")):
        write(tmp_path, {**sidecar, "validation": {"samples": "validation.npz"}})
        assert load_sidecar(tmp_path).name == sidecar["name"]


@pytest.mark.parametrize(("sidecar", "message"), [
    # unknown keys, at every level, with the allowed ones listed
    (changed(IMAGE, "lables", ["cat"]), "\"lables\" is not a known key (did you mean \"labels\"?): the keys of "
     "sidecar.json are schema, name, task, labels, output, preprocessing, inputs, outputs, validation, metrics, "
     "description"),
    (changed(IMAGE, "preprocessing.resise", "bilinear"), "\"preprocessing.resise\" is not a known key (did you mean "
     "\"resize\"?): the keys of \"preprocessing\" for an image model are type, color_mode, size, resize, divisor, "
     "mean, std, exif_orientation, keras_applications"),
    (changed(TEXT, "preprocessing.max_len", 8), "\"preprocessing.max_len\" is not a known key (did you mean "
     "\"max_length\"?)"),
    (changed(IMAGE, "validation.sample", "validation.npz"), "\"validation.sample\" is not a known key (did you mean "
     "\"samples\"?)"),
    (changed(IMAGE, "inputs.pixels", "pixels"), "\"inputs.pixels\" is not a known key: the keys in \"inputs\" for "
     "this task are image"),
    # enum values: exact, with the fix
    (changed(IMAGE, "preprocessing.color_mode", "rgb"), "\"preprocessing.color_mode\" is \"rgb\": write \"RGB\" "
     "(values are case-sensitive; allowed: \"RGB\", \"BGR\", \"L\")"),
    (changed(IMAGE, "preprocessing.color_mode", "CMYK"), "\"preprocessing.color_mode\" is \"CMYK\": use one of "
     "\"RGB\", \"BGR\", \"L\""),
    (changed(IMAGE, "preprocessing.resize", "bicubic"), "\"preprocessing.resize\" is \"bicubic\": use one of "
     "\"bilinear\""),
    (changed(IMAGE, "task", "image_classifier"), "\"task\" is \"image_classifier\": did you mean "
     "\"image_classification\"?"),
    (changed(IMAGE, "output", "scores"), "\"output\" is \"scores\": use one of \"probabilities\", \"logits\""),
    (changed(IMAGE, "preprocessing.type", "text"), "\"preprocessing.type\" is \"text\", which does not fit task "
     "\"image_classification\": write \"image\""),
    # values of the wrong shape
    (changed(IMAGE, "schema", 2), "\"schema\" is 2: write 1"),
    (changed(IMAGE, "name", "my model/v2"), "\"name\" is \"my model/v2\": use 1-64 letters, digits"),
    (changed(IMAGE, "labels", []), "\"labels\" is []: give a non-empty list of strings"),
    (changed(IMAGE, "labels", [f"class {i}" for i in range(999)] + [None]), "\"labels\" is [\"class 0\", \"class 1\","
     " \"class 2\", \"class 3\", \"class 4\", ...: give a non-empty list of strings"),
    (changed(IMAGE, "labels", "cat,dog"), "\"labels\" is \"cat,dog\": give a non-empty list of strings"),
    (changed(IMAGE, "preprocessing.size", [64]), "\"preprocessing.size\" is [64]: give [height, width] in pixels"),
    (changed(IMAGE, "preprocessing.size", [64, 0]), "\"preprocessing.size\" is [64, 0]: give [height, width] in "
     "pixels, two positive whole numbers"),
    (changed(IMAGE, "preprocessing.mean", [0, 0]), "\"preprocessing.mean\" is [0, 0]: give a list of 1 or 3 numbers "
     "(one per RGB channel, or one for all)"),
    (changed(IMAGE, "preprocessing.std", [0]), "\"preprocessing.std\" is [0]: give a list of 1 or 3 positive numbers"),
    (changed(TEXT, "preprocessing.max_length", "128"), "\"preprocessing.max_length\" is \"128\": make it a positive "
     "whole number"),
    (changed(TEXT, "preprocessing.lowercase", "no"), "\"preprocessing.lowercase\" is \"no\": write true or false"),
    (changed(IMAGE, "inputs.image", 3), "\"inputs.image\" is 3: make it a non-empty string"),
    (changed(IMAGE, "metrics", 0.9), "\"metrics\" is 0.9: make it a JSON object"),
    # missing keys and files
    (changed(IMAGE, "labels", delete=True), "\"labels\" is missing: add it to sidecar.json"),
    (changed(IMAGE, "preprocessing.color_mode", delete=True), "\"preprocessing.color_mode\" is missing: add it to "
     "\"preprocessing\""),
    (changed(IMAGE, "validation.samples", "missing.npz"), "\"validation.samples\" names missing.npz, which is not in"),
    (changed(IMAGE, "validation.samples", "../../etc/passwd"), "\"validation.samples\" is \"../../etc/passwd\": name a "
     "file inside the SavedModel directory"),
    (changed(TEXT, "preprocessing.tokenizer", "vocab.json"), "\"preprocessing.tokenizer\" names vocab.json"),
    # keys a task has no use for
    (changed(IMAGE, "outputs", ["scores"]), "\"outputs\" does not apply to task \"image_classification\" (a classifier "
     "serves its one output of class scores): remove it"),
    (changed(EMBEDDING, "output", "logits"), "\"output\" does not apply to task \"text_embedding\" (an embedding has "
     "no classes): remove it"),
    (changed(TENSOR, "preprocessing", {"type": "image"}), "\"preprocessing\" does not apply to task \"tensor\" "
     "(clients send the input tensors themselves): remove it"),
    (changed(TENSOR, "labels", ["a"]), "\"labels\" does not apply to task \"tensor\""),
    # the embedding and tensor maps and lists
    (changed(EMBEDDING, "outputs", {"vector": "pooled"}), "\"outputs.vector\" is not a known key: the keys in "
     "\"outputs\" for this task are embedding"),
    (changed(TENSOR, "inputs", ["a", "a"]), "\"inputs\" lists \"a\" more than once: name each one once"),
    (changed(TENSOR, "outputs", "y"), "\"outputs\" is \"y\": give a non-empty list of strings"),
    # keras.applications presets, the divisor, raw image files
    (changed(PRESET, "preprocessing.keras_applications", "resnet51"), "\"preprocessing.keras_applications\" is "
     "\"resnet51\": did you mean \"resnet50\"?"),
    (changed(PRESET, "preprocessing.mean", [0, 0, 0]), "\"preprocessing.mean\" is given with "
     "\"keras_applications\": \"vgg16\", which sets it (caffe preprocessing): remove one of them"),
    (changed(IMAGE, "preprocessing.divisor", 0), "\"preprocessing.divisor\" is 0: give a positive number"),
    (changed(TEXT, "validation.raw_images", ["a.jpg"]), "\"validation.raw_images\" does not apply to task "
     "\"text_classification\""),
    (changed(IMAGE, "validation.raw_images", ["absent.jpg"]), "\"validation.raw_images[0]\" names absent.jpg, "
     "which is not in"),
    (changed(IMAGE, "validation.raw_images", "a.jpg"), "\"validation.raw_images\" is \"a.jpg\": give a "
     "non-empty list of strings"),
])
def test_each_refusal_names_the_field_and_the_fix(tmp_path, sidecar, message):
    error = refusal(tmp_path, sidecar)
    assert message in error.message
    assert error.message.endswith("(see docs/model-format.md)")


def test_not_json_and_not_an_object(tmp_path):
    (tmp_path / "sidecar.json").write_text("{not json")
    with pytest.raises(ConversionError, match="sidecar.json: not valid JSON"):
        load_sidecar(tmp_path)
    (tmp_path / "sidecar.json").write_text("[1, 2]")
    with pytest.raises(ConversionError, match="holds a JSON list: write one JSON object"):
        load_sidecar(tmp_path)


def hostile_refusal(tmp_path, text: str) -> str:
    (tmp_path / "sidecar.json").write_text(text)
    with pytest.raises(ConversionError) as raised:
        load_sidecar(tmp_path)
    assert raised.value.code == "bad_sidecar" and raised.value.message.startswith("sidecar.json: ")
    assert raised.value.message.endswith("(see docs/model-format.md)")
    return raised.value.message


def test_an_integer_past_pythons_digit_limit_is_refused_in_one_line(tmp_path):
    message = hostile_refusal(tmp_path, json.dumps(IMAGE)[:-1] + ', "metrics": {"n": ' + "9" * 5000 + "}}")
    assert "holds an integer longer than the 4,300 digits convert reads" in message


@pytest.mark.parametrize("depth", [17, 900, 5000])  # past the limit; parsed, then too deep to walk; past the parser
@pytest.mark.parametrize("field", ["metrics", "labels", "name", "unknown"])
def test_nesting_too_deep_is_refused_in_one_line_wherever_it_is(tmp_path, depth, field):
    nested = "[" * depth + "]" * depth
    message = hostile_refusal(tmp_path, json.dumps(IMAGE)[:-1] + f', "{field}": {nested}}}')
    assert "nests objects or lists more than 16 levels deep" in message


def test_the_deepest_documented_field_is_well_within_the_nesting_limit(tmp_path):
    write(tmp_path, changed(IMAGE, "metrics", {"per_class": {"cat": {"precision": [0.9, 0.8]}}}))
    assert load_sidecar(tmp_path).extra["metrics"]["per_class"]["cat"]["precision"] == [0.9, 0.8]


def test_every_independent_problem_is_reported_in_one_run(tmp_path):
    sidecar = changed(changed(changed(IMAGE, "schema", 2), "name", "my model"), "validation.samples", "missing.npz")
    error = refusal(tmp_path, changed(sidecar, "preprocessing.color_mode", "rgb"))
    assert error.message.startswith("sidecar.json: 4 problems: (1) \"schema\" is 2: write 1"), error.message
    for part in ("(2) \"name\" is \"my model\"", "(3) \"preprocessing.color_mode\" is \"rgb\": write \"RGB\"",
                 "(4) \"validation.samples\" names missing.npz"):
        assert part in error.message, error.message
