"""The sidecar held against the SavedModel's serving signature (no TensorFlow: signatures are described by hand).

Every refusal is one line that names the sidecar field and says what to write instead; a good fit yields the
binding (role -> tensor name) the manifest is written from."""
from __future__ import annotations

import json

import pytest

from convert.errors import ConversionError
from convert.saved_model_inspect import SavedModelInfo, TensorInfo
from convert.sidecar_reader import load_sidecar
from convert.tasks import TASK_KINDS, WITHOUT_SIDECAR
from test_convert_sidecar import EMBEDDING, IMAGE, TENSOR, TEXT, changed


def tensor(name: str, *shape, dtype: str = "float32") -> TensorInfo:
    return TensorInfo(name, (None, *shape), dtype)


def signature(inputs: list[TensorInfo], outputs: list[TensorInfo]) -> SavedModelInfo:
    return SavedModelInfo(path=None, module=None, function=None, inputs={t.name: t for t in inputs},
                          outputs={t.name: t for t in outputs}, digest="")


IMAGE_MODEL = signature([tensor("pixels", 4, 4, 3)], [tensor("output_0", 2)])
TEXT_MODEL = signature([tensor("ids", 8, dtype="int32")], [tensor("output_0", 1)])
EMBEDDING_MODEL = signature([tensor("ids", None, dtype="int32"), tensor("mask", None, dtype="int32")],
                            [tensor("pooled", 384)])
TENSOR_MODEL = signature([tensor("a", 4), tensor("b", 2, dtype="int64")], [tensor("y", 1), tensor("z", 3)])


def bind(tmp_path, sidecar: dict, info: SavedModelInfo):
    (tmp_path / "validation.npz").write_bytes(b"")
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "sidecar.json").write_text(json.dumps(sidecar))
    loaded = load_sidecar(tmp_path)
    return TASK_KINDS[loaded.task].bind(loaded, info)


def refusal(tmp_path, sidecar: dict, info: SavedModelInfo, code: str = "sidecar_mismatch") -> str:
    with pytest.raises(ConversionError) as raised:
        bind(tmp_path, sidecar, info)
    assert raised.value.code == code and "\n" not in raised.value.message
    return raised.value.message


def test_good_fits_bind_roles_to_tensor_names(tmp_path):
    assert bind(tmp_path, IMAGE, IMAGE_MODEL).inputs == {"image": "pixels"}
    assert bind(tmp_path, IMAGE, IMAGE_MODEL).outputs == {"scores": "output_0"}
    text = changed(TEXT, "labels", ["neg", "pos"])  # one unit: binary, two labels
    assert bind(tmp_path, changed(text, "preprocessing.max_length", 8), TEXT_MODEL).inputs == {"input_ids": "ids"}
    embedding = bind(tmp_path, EMBEDDING, EMBEDDING_MODEL)
    assert embedding.inputs == {"input_ids": "ids", "attention_mask": "mask"}
    assert embedding.outputs == {"embedding": "pooled"}
    tensor_binding = bind(tmp_path, changed(TENSOR, "outputs", ["z", "y"]), TENSOR_MODEL)
    assert list(tensor_binding.inputs.items()) == [("b", "b"), ("a", "a")]  # the sidecar's order
    assert list(tensor_binding.outputs) == ["z", "y"]


def test_a_fixed_length_embedding_needs_no_attention_mask(tmp_path):
    """Every text is padded to max_length (a TextVectorization layer's ids): no batch changes a vector."""
    fixed = signature([tensor("ids", 8, dtype="int32")], [tensor("pooled", 384)])
    sidecar = changed(changed(EMBEDDING, "inputs.attention_mask", delete=True), "preprocessing.max_length", 8)
    assert bind(tmp_path, sidecar, fixed).inputs == {"input_ids": "ids"}


def test_tensor_without_lists_serves_everything_sorted_by_name(tmp_path):
    binding = bind(tmp_path, changed(changed(TENSOR, "inputs", delete=True), "outputs", delete=True), TENSOR_MODEL)
    assert list(binding.inputs) == ["a", "b"] and list(binding.outputs) == ["y", "z"]


def test_an_open_image_size_accepts_the_sidecars(tmp_path):
    open_model = signature([tensor("pixels", None, None, 3)], [tensor("output_0", 2)])
    assert bind(tmp_path, IMAGE, open_model).inputs == {"image": "pixels"}


@pytest.mark.parametrize(("sidecar", "info", "message"), [
    # image size and channels
    (changed(IMAGE, "preprocessing.size", [64, 64]), IMAGE_MODEL, "\"preprocessing.size\" is [64, 64] but input "
     "'pixels' takes 4x4 images (N, 4, 4, 3): write \"size\": [4, 4]"),
    (changed(changed(changed(IMAGE, "preprocessing.color_mode", "L"), "preprocessing.mean", [0]),
             "preprocessing.std", [1]), IMAGE_MODEL,
     "\"preprocessing.color_mode\" is \"L\" (1 channel) but input 'pixels' takes 3 (N, 4, 4, 3): write "
     "\"color_mode\": \"RGB\""),
    (IMAGE, signature([tensor("pixels", 4, 4, 4)], [tensor("output_0", 2)]), "\"preprocessing.color_mode\" is "
     "\"RGB\" (3 channels) but input 'pixels' takes 4 (N, 4, 4, 4): the function feeds RGB (3 channels) or BGR "
     "(3 channels) or L "
     "(1 channel) images"),
    # labels against the output width
    (changed(IMAGE, "labels", ["a", "b", "c"]), IMAGE_MODEL, "\"labels\" has 3 labels but output 'output_0' has 2 "
     "unit(s): give 2 labels (one per unit, in output order)"),
    (changed(TEXT, "labels", ["positive"]), TEXT_MODEL, "\"labels\" has 1 label but output 'output_0' has 1 unit(s): "
     "give 2 labels (a 1-unit output is binary: the label for 0, then the label for 1)"),
    (IMAGE, signature([tensor("pixels", 4, 4, 3)], [tensor("output_0", None)]), "\"labels\" cannot be matched to "
     "output 'output_0' (float32 (N, ?)), whose width is open"),
    (IMAGE, signature([tensor("pixels", 4, 4, 3)], [tensor("output_0", 2, dtype="int64")]), "\"task\" is a "
     "classification task but output 'output_0' (int64 (N, 2)) is not float scores"),
    # inputs: names, coverage, dtype and rank for the task
    (changed(IMAGE, "inputs.image", "image"), IMAGE_MODEL, "\"inputs.image\" names 'image', which the serving "
     "signature does not have: use one of its inputs: 'pixels'"),
    (IMAGE, signature([tensor("pixels", 4, 4, 3), tensor("depth", 4, 4, 1)], [tensor("output_0", 2)]),
     "\"inputs\" gives no role to signature input 'depth': task \"image_classification\" takes only image; use "
     "\"task\": \"tensor\""),
    (changed(IMAGE, "inputs.image", "features"), signature([tensor("features", 4)], [tensor("output_0", 2)]),
     "\"task\" is \"image_classification\" but input 'features' (float32 (N, 4)) is not an image (N, height, width, "
     "channels): use \"task\": \"tensor\" for a model over feature vectors"),
    (IMAGE, signature([tensor("pixels", 4, 4, 3, dtype="uint8")], [tensor("output_0", 2)]), "\"inputs.image\" names "
     "'pixels' (uint8 (N, 4, 4, 3)), but the function feeds images as float32 pixels"),
    (TEXT, signature([tensor("ids", 8)], [tensor("output_0", 1)]), "\"inputs.input_ids\" names 'ids' (float32 "
     "(N, 8)), but input_ids are integer token ids: use \"task\": \"tensor\" for a model over float features"),
    (TEXT, signature([tensor("ids", 8, 2, dtype="int32")], [tensor("output_0", 1)]), "\"inputs.input_ids\" names "
     "'ids' (int32 (N, 8, 2)), but input_ids are (N, sequence)"),
    (changed(TEXT, "preprocessing.max_length", 256), TEXT_MODEL, "\"preprocessing.max_length\" is 256 but input "
     "'ids' has a fixed length of 8: write \"max_length\": 8"),
    # more outputs than the task serves
    (IMAGE, signature([tensor("pixels", 4, 4, 3)], [tensor("aux", 1), tensor("scores", 2)]), "\"class_output\" is "
     "missing, and the signature has 2 outputs ('aux', 'scores'): name the one the labels score"),
    (changed(IMAGE, "class_output", "aux"), signature([tensor("pixels", 4, 4, 3)], [tensor("aux", 2),
                                                                                     tensor("scores", 1)]),
     "\"class_output\" is 'aux', so output 'scores' would be answered beside the labels, but 'scores' is the class "
     "output's own name in the manifest"),
    (changed(EMBEDDING, "outputs", delete=True), signature(list(EMBEDDING_MODEL.inputs.values()),
                                                          [tensor("pooled", 384), tensor("tokens", None, 384)]),
     "\"task\" is \"text_embedding\", which serves one output, but the signature has 2 ('pooled', 'tokens'): outputs "
     "'tokens' would be dropped: add \"outputs\": {\"embedding\": \"<name>\"} to serve one of them, or use "
     "\"task\": \"tensor\" to serve all"),
    # embeddings
    (changed(EMBEDDING, "outputs.embedding", "cls"), EMBEDDING_MODEL, "\"outputs.embedding\" names 'cls', which the "
     "serving signature does not have: use one of its outputs: 'pooled'"),
    (EMBEDDING, signature(list(EMBEDDING_MODEL.inputs.values()), [tensor("pooled", None, 384)]),
     "\"outputs.embedding\" leads to output 'pooled' (float32 (N, ?, 384)), which is not one float vector of fixed "
     "size per text (N, dimensions): pool the tokens inside the model"),
    (changed(EMBEDDING, "inputs.attention_mask", delete=True), signature([tensor("ids", None, dtype="int32")],
                                                                        [tensor("pooled", 384)]),
     "\"inputs.attention_mask\" is missing and input 'ids' (int32 (N, ?)) has an open length: add the model's "
     "attention_mask input (the function pads each batch to its longest text), or export the model with a fixed "
     "sequence length"),
    # tensor lists
    (changed(TENSOR, "inputs", ["a"]), TENSOR_MODEL, "\"inputs\" leaves out signature input 'b': list every input"),
    (changed(TENSOR, "inputs", ["a", "b", "c"]), TENSOR_MODEL, "\"inputs\" names 'c', which the serving signature "
     "does not have: its inputs are 'a', 'b'"),
    (changed(TENSOR, "outputs", ["y"]), TENSOR_MODEL, "\"outputs\" leaves out signature output 'z', which would be "
     "dropped: list every output, or remove \"outputs\" to serve them all, sorted by name"),
])
def test_each_mismatch_names_the_field_and_the_fix(tmp_path, sidecar, info, message):
    error = refusal(tmp_path, sidecar, info)
    assert error.startswith("sidecar.json: \"")
    assert message in error


def test_tensor_string_inputs_need_flex(tmp_path):
    info = signature([tensor("text", 1, dtype="object")], [tensor("y", 1)])
    message = refusal(tmp_path, changed(TENSOR, "inputs", delete=True) | {"outputs": ["y"]}, info, "needs_flex")
    assert "'text' (object (N, 1)) is a string" in message and "tokenize outside the model" in message


# Without a sidecar: roles guessed from dtypes and names, as before any sidecar existed.

FLOAT = TensorInfo("x", (None, 8, 8, 1), "float32")
ONE_OUTPUT = [tensor("output_0", 10)]


def guessed(inputs: list[TensorInfo], outputs: list[TensorInfo] = ONE_OUTPUT):
    return WITHOUT_SIDECAR.bind(None, signature(inputs, outputs))


def test_single_inputs_map_by_dtype():
    assert guessed([FLOAT]).inputs == {"image": "x"}
    assert guessed([tensor("tokens", 16, dtype="int32")]).inputs == {"input_ids": "tokens"}
    assert guessed([FLOAT]).outputs == {"scores": "output_0"}


def test_ids_and_mask_map_by_name():
    binding = guessed([tensor("ids", 16, dtype="int32"), tensor("padding_mask", 16, dtype="int32")])
    assert binding.inputs == {"input_ids": "ids", "attention_mask": "padding_mask"}


def test_unmappable_inputs_and_outputs_say_how_to_declare_them():
    with pytest.raises(ConversionError, match=r"\(a, b\) is which: add a sidecar.json with \"inputs\"") as raised:
        guessed([TensorInfo("a", (None, 4), "float32"), TensorInfo("b", (None, 4), "float32")])
    assert raised.value.code == "unmappable_inputs" and "\"task\": \"tensor\"" in raised.value.message
    with pytest.raises(ConversionError, match="has 2 outputs \\('y', 'z'\\) and no sidecar.json") as raised:
        guessed([FLOAT], [tensor("y", 1), tensor("z", 3)])
    assert raised.value.code == "unmappable_outputs"
