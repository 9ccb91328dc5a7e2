"""A Keras 3 `.keras` file made into the SavedModel directory the usual pipeline converts.

`python -m convert MODEL.keras OUT [--sidecar SIDECAR.json]` loads the file with Keras, makes the model convertible
and exports it the documented way (`model.export()`) into a temporary directory, beside a sidecar.json (inferred from
the model and the files beside it, convert/sidecar_inference.py, with SIDECAR.json's fields over it) and the
validation files found beside SIDECAR.json (or the .keras file):
- a `TextVectorization` layer at the text input is taken out (LiteRT cannot run string ops): its vocabulary and
  settings become tokenizer.json (convert/text_vectorization.py), the rest of the model takes int32 token ids
  (`input_ids`), and the sidecar gets the matching `preprocessing` and `inputs`. Validation is on raw texts
  (`raw_texts` in the .npz): convert tokenizes them with the layer itself for the tensor gate, fills `expected`
  with `model.predict(texts)` when the file has none, and refuses a tokenizer.json that gives other ids than the
  layer on any of them;
- StringLookup / IntegerLookup / Normalization / CategoryEncoding layers at named column inputs are taken out
  into the sidecar's `preprocessing` (convert/structured_keras.py);
- recurrent layers with unroll=False are rebuilt unrolled over the fixed sequence length (convert/recurrent.py).
"""
from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np

from convert.errors import ConversionError
from convert.inference_mode import export_for_inference
from convert.keras_loading import KERAS_SUFFIXES, LoadOptions, load_keras_model
from convert.lookup_layers import has_lookup_layers
from convert.npz_reader import read_arrays
from convert.quiet import import_tensorflow
from convert.recurrent import copy_weights, needs_unrolling, unrolled_copy
from convert.sidecar import SIDECAR_FILE
from convert.sidecar_inference import Inference, check, infer, keras_facts, with_given
from convert.sidecar_reader import read_sidecar_file
from convert.structured_keras import prepare_structured
from convert.text_vectorization import CODE as TEXT_VECTORIZATION_CODE
from convert.text_vectorization import check_settings, describe, write_tokenizer

TOKENIZER_FILE = "tokenizer.json"
IDS_INPUT = "input_ids"
RAW_TEXTS = "raw_texts"
EXPECTED = "expected"
PREDICT_BATCH = 64


def check_keras_path(path: Path) -> None:
    """Before TensorFlow is imported: a file that can be a Keras 3 model (.keras, or legacy .h5)."""
    if not path.is_file():
        raise ConversionError("missing_file", f"{path} does not exist: pass the file model.save(\"NAME.keras\") wrote")
    if path.suffix not in KERAS_SUFFIXES:
        raise ConversionError("not_a_keras_file", f"{path} is not a .keras (or .h5) file: save the model with "
                              "model.save(\"NAME.keras\") or export it with model.export(DIR)")


def _import_keras():
    import_tensorflow()
    import keras  # noqa: PLC0415  (after TensorFlow, quietly)

    return keras


def _load(path: Path, keras, loading: LoadOptions | None = None):
    return load_keras_model(path, keras, loading)


def _text_vectorization(model, keras):
    """The model's TextVectorization layer, which must read the model's one input directly; None if it has none."""
    layers = [layer for layer in model.layers if isinstance(layer, keras.layers.TextVectorization)]
    if not layers:
        return None
    if len(layers) > 1 or len(model.inputs) != 1:
        raise ConversionError(TEXT_VECTORIZATION_CODE, f"the model has {len(layers)} TextVectorization layer(s) and "
                              f"{len(model.inputs)} input(s): convert serves one text input vectorized by one layer")
    layer = layers[0]
    if not isinstance(model, keras.Sequential) and layer.input is not model.inputs[0]:
        raise ConversionError(TEXT_VECTORIZATION_CODE, f"TextVectorization layer '{layer.name}' does not read the "
                              "model's input directly: put it right after the string Input")
    return layer


def _fixed_inputs(model, keras, max_length: int | None):
    """New Inputs like the model's, with an open sequence length fixed to max_length (unrolling needs it)."""
    inputs = []
    for tensor in model.inputs:
        shape = list(tensor.shape[1:])
        if any(dim is None for dim in shape):
            if max_length is None or len(shape) != 1:
                raise ConversionError("recurrent_open_length", f"input '{tensor.name}' has an open length "
                                      f"{tuple(tensor.shape)} and the model has recurrent layers, which unroll over "
                                      "a fixed length: give the Input a fixed shape, e.g. keras.Input((64,)), or "
                                      "\"preprocessing.max_length\" in the sidecar")
            shape = [max_length]
        inputs.append(keras.Input(tuple(shape), dtype=tensor.dtype, name=tensor.name))
    return inputs


def _servable(model, vectorizer, keras, max_length: int | None):
    """The model without its TextVectorization layer (int32 ids in) and with recurrent layers unrolled."""
    layers = model.layers if isinstance(model, keras.Sequential) else [
        layer for layer in model.layers if not isinstance(layer, keras.layers.InputLayer)]
    if vectorizer is None and not any(needs_unrolling(layer, keras) for layer in layers):
        return model
    if vectorizer is not None:
        length = int(vectorizer.get_config()["output_sequence_length"])
        inputs = [keras.Input((length,), dtype="int32", name=IDS_INPUT)]
    else:
        inputs = _fixed_inputs(model, keras, max_length)
    pairs = []

    def rebuilt(layer):
        copy = unrolled_copy(layer, keras)
        pairs.append((layer, copy))
        return copy

    if isinstance(model, keras.Sequential):
        tensor = inputs[0]
        for layer in layers[layers.index(vectorizer) + 1:] if vectorizer is not None else layers:
            tensor = rebuilt(layer)(tensor)
        servable = keras.Model(inputs[0], tensor, name=model.name)
    else:
        outputs = model.outputs[0] if len(model.outputs) == 1 else model.outputs
        body = keras.Model(vectorizer.output, outputs) if vectorizer is not None else model
        servable = keras.models.clone_model(body, input_tensors=inputs if len(inputs) > 1 else inputs[0],
                                            clone_function=rebuilt)
    copy_weights(pairs)
    return servable


def _strings(model, texts: np.ndarray):
    """Raw texts shaped as the model's string input takes them ((N,) or (N, 1))."""
    tf = import_tensorflow()
    rank = len(model.inputs[0].shape)
    return tf.constant(texts.reshape(-1, *([1] * (rank - 1))))


def _vectorized_npz(source: Path, target: Path, model, vectorizer, expected: bool) -> np.ndarray:
    """The .npz with `inputs_input_ids` added (the layer's own ids) and, for the samples, `expected` =
    model.predict(raw_texts) unless given; returns the raw texts."""
    arrays = read_arrays(source)
    texts = arrays.get(RAW_TEXTS)
    if texts is None or texts.ndim != 1 or texts.dtype.kind != "U" or not len(texts):
        raise ConversionError("bad_samples", f"{source.name}: a model with a TextVectorization layer is checked on "
                              f"raw texts: save them as {RAW_TEXTS} = np.array(list_of_str), one text per sample")
    arrays[f"inputs_{IDS_INPUT}"] = np.asarray(vectorizer(_strings(model, texts))).astype(np.int32)
    if expected and EXPECTED not in arrays:
        predicted = model.predict(_strings(model, texts), batch_size=PREDICT_BATCH, verbose=0)
        arrays[EXPECTED] = np.asarray(predicted, dtype=np.float32)
    np.savez(target, **arrays)
    return texts


def check_tokenizer(tokenizer_file: Path, max_length: int, texts: np.ndarray, ids: np.ndarray) -> None:
    """The function's own tokenization of every raw text must give the layer's ids, exactly."""
    from function.preprocessing.text import TextEncoder  # noqa: PLC0415

    encoder = TextEncoder(tokenizer_file, max_length)
    got = encoder.batch(encoder.encode([str(text) for text in texts]), fixed_length=True)["input_ids"]
    differ = np.flatnonzero((got != ids).any(axis=1))
    if len(differ):
        row = int(differ[0])
        raise ConversionError("tokenizer_mismatch", f"the tokenizer.json written from the TextVectorization layer "
                              f"gives other ids than the layer on {len(differ)} of {len(texts)} validation texts, "
                              f"first {str(texts[row])[:60]!r}: {got[row].tolist()[:12]} vs {ids[row].tolist()[:12]} "
                              "(a convert bug: report it with that text)")


def _named_files(validation: dict) -> list[str]:
    """Every file name the sidecar's validation section lists (strings, or lists of strings)."""
    names = []
    for value in validation.values():
        values = value if isinstance(value, list) else [value]
        names += [item for item in values if isinstance(item, str)]
    return names


def _copy_beside(source_dir: Path, target_dir: Path, name: str) -> None:
    source = source_dir / name
    if source.is_file() and not Path(name).is_absolute() and ".." not in Path(name).parts:
        (target_dir / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target_dir / name)


def _text_sidecar(sidecar: dict, preprocessing: dict) -> dict:
    for key in ("preprocessing", "inputs"):
        if key in sidecar:
            raise ConversionError("bad_sidecar", f"sidecar.json: \"{key}\" comes from the model's TextVectorization "
                                  "layer (convert writes tokenizer.json and the input from it): remove it "
                                  "(see docs/model-format.md)")
    return {**sidecar, "preprocessing": preprocessing, "inputs": {IDS_INPUT: IDS_INPUT}}


def infer_keras_sidecar(keras_path: Path, sidecar_path: Path | None, model) -> Inference:
    """The sidecar inferred from the model and the files beside it (convert/sidecar_inference.py), the given
    sidecar's fields over it; every problem found in one refusal."""
    given = read_sidecar_file(sidecar_path) if sidecar_path is not None else {}
    folder = sidecar_path.parent if sidecar_path is not None else keras_path.parent
    inference = with_given(infer(keras_facts(model), folder, keras_path.stem), given)
    check(inference)
    return inference


def prepare_keras_file(keras_path: Path, sidecar_path: Path | None, workdir: Path,
                       log: Callable[[str], None] = print,
                       loading: LoadOptions | None = None) -> tuple[Path, Inference]:
    """A SavedModel directory under `workdir` (named after the file) that the pipeline converts as it is, and the
    sidecar inferred for it (the given sidecar's fields over the inferred ones)."""
    check_keras_path(keras_path)
    keras = _import_keras()
    model = _load(keras_path, keras, loading)
    vectorizer = _text_vectorization(model, keras)
    if vectorizer is None and has_lookup_layers(model):  # named columns through lookup layers
        return prepare_structured(keras_path, sidecar_path, workdir, model, keras, log)
    if vectorizer is not None:
        check_settings(vectorizer.name, vectorizer.get_config())  # before the model is rebuilt around its settings
    inference = infer_keras_sidecar(keras_path, sidecar_path, model)
    sidecar = inference.data
    for line in inference.describe():
        log(f"  sidecar {line}")
    preprocessing = sidecar.get("preprocessing")
    max_length = preprocessing.get("max_length") if isinstance(preprocessing, dict) else None
    servable = _servable(model, vectorizer, keras, max_length if isinstance(max_length, int) else None)
    directory = workdir / keras_path.stem
    export_for_inference(servable, directory, keras, keras_path.name)
    source_dir = sidecar_path.parent if sidecar_path is not None else keras_path.parent
    validation = sidecar.get("validation") if isinstance(sidecar.get("validation"), dict) else {}
    if vectorizer is not None:
        log(f"  TextVectorization layer '{vectorizer.name}' taken out: {describe(vectorizer.get_config())}")
        text_preprocessing = write_tokenizer(vectorizer, directory / TOKENIZER_FILE)
        sidecar = _text_sidecar(sidecar, text_preprocessing)
        for key in ("samples", "representative"):
            name = validation.get(key)
            if isinstance(name, str) and (source_dir / name).is_file():
                texts = _vectorized_npz(source_dir / name, directory / name, model, vectorizer, key == "samples")
                ids = np.load(directory / name)[f"inputs_{IDS_INPUT}"]
                check_tokenizer(directory / TOKENIZER_FILE, text_preprocessing["max_length"], texts, ids)
    else:
        for name in _named_files(validation):
            _copy_beside(source_dir, directory, name)
        tokenizer = preprocessing.get("tokenizer") if isinstance(preprocessing, dict) else None
        if isinstance(tokenizer, str):
            _copy_beside(source_dir, directory, tokenizer)
    (directory / SIDECAR_FILE).write_text(json.dumps(sidecar, indent=2, ensure_ascii=False), encoding="utf-8")
    return directory, inference
