"""Keras preprocessing layers at a structured model's inputs, taken out of the graph.

keras.io's structured-data examples feed each column (a named Input: strings, integers or floats) through a
StringLookup, IntegerLookup, Hashing, Normalization or CategoryEncoding layer (or a lookup followed by a
CategoryEncoding) before the Dense layers. LiteRT cannot run the string ops of a lookup, so convert reads what each
chain does (the vocabulary, mask and OOV settings, the hash bins and salt, the output mode, the mean and variance)
into the manifest's `preprocessing` (`{"type": "columns"}`, function/preprocessing/columns.py, which applies it in
numpy) and converts the rest of the model: a sub-model whose inputs are the chains' outputs, each named after its
column.

A setting the function does not reproduce exactly is refused in one line naming the layer and the setting (code
`unsupported_preprocessing_layer`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from convert.errors import ConversionError

CODE = "unsupported_preprocessing_layer"
LOOKUPS = ("StringLookup", "IntegerLookup")
PREPROCESSING = (*LOOKUPS, "Normalization", "CategoryEncoding", "Hashing")
COLUMN_DTYPES = {"string": "string", "int64": "int64", "int32": "int32", "float32": "float32", "float64": "float32",
                 "float16": "float32"}
LOOKUP_MODES = ("int", "one_hot", "multi_hot", "count")
SAMPLE_ROWS = 256  # raw rows drawn from the layers' own vocabularies and statistics when none are given


@dataclass
class ColumnPlan:
    name: str  # the Keras Input's name: the column clients send
    source: object  # the Input's KerasTensor
    layers: list  # the preprocessing layers it goes through, in order
    end: object  # the tensor the rest of the model reads


def _kind(layer) -> str:
    return type(layer).__name__


def _refuse(layer, setting: str, problem: str, fix: str) -> ConversionError:
    return ConversionError(CODE, f"{_kind(layer)} layer '{layer.name}': {setting} {problem}, which the function "
                           f"cannot reproduce exactly: {fix}")


def _consumers(model) -> dict[int, list[tuple[object, object]]]:
    """id(tensor) -> the (layer, node) pairs that read it, within this model's graph."""
    consumers: dict[int, list] = {}
    for layer in model.layers:
        for node in layer._inbound_nodes:  # noqa: SLF001  (Keras keeps the graph's edges there only)
            for tensor in node.input_tensors:
                consumers.setdefault(id(tensor), []).append((layer, node))
    return consumers


def _nested(model) -> list:
    """Every layer of the model and of the models nested in it, with the model each sits in."""
    found = []
    for layer in getattr(model, "layers", []):
        found.append((layer, model))
        if hasattr(layer, "layers"):
            found += _nested(layer)
    return found


def has_lookup_layers(model) -> bool:
    """A lookup (or hashing) layer anywhere: the model cannot convert with it, so its preprocessing comes out. A
    model with only Normalization layers converts as it is (they are arithmetic) and keeps its tensor inputs."""
    return any(_kind(layer) in (*LOOKUPS, "Hashing") for layer, _ in _nested(model))


def plan_columns(model) -> list[ColumnPlan]:
    """Each Input of a functional model and the chain of preprocessing layers that reads it alone."""
    if not hasattr(model, "_inbound_nodes") or not model.inputs or _kind(model) == "Sequential":
        raise ConversionError(CODE, "a model with lookup or normalization layers is served as named columns: build "
                              "it with the functional API, one keras.Input(name=...) per column")
    inner = [(layer, owner) for layer, owner in _nested(model)
             if owner is not model and _kind(layer) in (*LOOKUPS, "Hashing")]
    if inner:
        layer, owner = inner[0]
        raise ConversionError(CODE, f"{_kind(layer)} layer '{layer.name}' sits inside the nested model "
                              f"'{owner.name}': convert takes out preprocessing layers that read the outer model's "
                              "named inputs; call them on the keras.Input tensors in the outer model (as keras.io's "
                              "encode_categorical_feature does)")
    consumers = _consumers(model)
    plans, chained = [], set()
    for tensor in model.inputs:
        name = tensor.name
        layers, end = [], tensor
        while True:
            readers = consumers.get(id(end), [])
            preprocessing = [pair for pair in readers if _kind(pair[0]) in PREPROCESSING]
            if not preprocessing:
                break
            if len(readers) > 1:
                raise ConversionError(CODE, f"input '{name}' is read by {len(readers)} layers "
                                      f"({', '.join(layer.name for layer, _ in readers)}), one of them a "
                                      f"{_kind(preprocessing[0][0])}: convert takes out one chain of preprocessing "
                                      "layers per input; read each column through one chain")
            layer, node = preprocessing[0]
            if len(node.input_tensors) != 1:
                raise ConversionError(CODE, f"{_kind(layer)} layer '{layer.name}' reads {len(node.input_tensors)} "
                                      "tensors: convert takes out layers that read one column each")
            layers.append(layer)
            chained.add(id(layer))
            end = node.output_tensors[0]
        plans.append(ColumnPlan(name, tensor, layers, end))
    # A Normalization or CategoryEncoding deeper in the graph is arithmetic LiteRT runs: it stays in the model.
    stray = [layer for layer in model.layers if _kind(layer) in (*LOOKUPS, "Hashing") and id(layer) not in chained]
    if stray:
        raise ConversionError(CODE, f"{_kind(stray[0])} layer '{stray[0].name}' does not read a model input (or a "
                              "preprocessing layer that reads one): put lookup and hashing layers right after the "
                              "keras.Input they encode")
    return plans


def _lookup_step(layer, previous: str) -> dict:
    config = layer.get_config()
    if config.get("invert"):
        raise _refuse(layer, "invert", "is True (indices back to tokens)", "serve the forward lookup")
    if config.get("sparse"):
        raise _refuse(layer, "sparse", "is True", "set sparse=False")
    mode = config.get("output_mode", "int")
    if mode not in LOOKUP_MODES:
        raise _refuse(layer, "output_mode", f"is {mode!r}", f"use one of {', '.join(LOOKUP_MODES)}")
    oov = int(config.get("num_oov_indices", 1))
    if str(config.get("encoding", "utf-8")).lower().replace("_", "-") not in ("utf-8", "utf8"):
        raise _refuse(layer, "encoding", f"is {config['encoding']!r}", "use encoding=\"utf-8\"")
    cast = str if previous == "string" else int
    vocabulary = [cast(token) for token in layer.get_vocabulary(include_special_tokens=False)]
    mask = config.get("mask_token")
    depth = int(config["max_tokens"]) if config.get("pad_to_max_tokens") else int(layer.vocabulary_size())
    return {"kind": "lookup", "layer": layer.name, "vocabulary": vocabulary,
            "mask_token": None if mask is None else cast(mask), "num_oov_indices": oov, "output_mode": mode,
            "depth": depth, "oov_method": config.get("oov_method", "floormod"), "salt": _salt(layer)}


def _salt(layer) -> list[int] | None:
    salt = getattr(layer, "salt", None)
    return None if salt is None else [int(word) for word in salt]


def _hashing_step(layer, previous: str) -> dict:
    config = layer.get_config()
    if config.get("sparse"):
        raise _refuse(layer, "sparse", "is True", "set sparse=False")
    mode = config.get("output_mode", "int")
    if mode not in LOOKUP_MODES:
        raise _refuse(layer, "output_mode", f"is {mode!r}", f"use one of {', '.join(LOOKUP_MODES)}")
    mask = config.get("mask_value")
    if mask is not None:
        mask = str(mask) if previous == "string" else int(mask)
    return {"kind": "hashing", "layer": layer.name, "num_bins": int(config["num_bins"]), "mask_value": mask,
            "salt": _salt(layer), "output_mode": mode}


def _normalization_step(layer) -> dict:
    if layer.get_config().get("invert"):
        raise _refuse(layer, "invert", "is True", "serve the forward normalization")
    mean, variance = (np.asarray(layer.mean, dtype=np.float32), np.asarray(layer.variance, dtype=np.float32))
    return {"kind": "normalization", "layer": layer.name, "mean": mean.tolist(), "variance": variance.tolist()}


def _encoding_step(layer) -> dict:
    config = layer.get_config()
    if config.get("sparse"):
        raise _refuse(layer, "sparse", "is True", "set sparse=False")
    if config.get("output_mode") not in ("one_hot", "multi_hot", "count"):
        raise _refuse(layer, "output_mode", f"is {config.get('output_mode')!r}", "use one_hot, multi_hot or count")
    return {"kind": "category_encoding", "layer": layer.name, "num_tokens": int(config["num_tokens"]),
            "output_mode": config["output_mode"]}


def column_entry(plan: ColumnPlan) -> dict:
    """The manifest entry of one column (function/preprocessing/columns.py reads it)."""
    dtype = COLUMN_DTYPES.get(str(plan.source.dtype))
    if dtype is None:
        raise ConversionError(CODE, f"input '{plan.name}' is {plan.source.dtype}: structured columns are strings, "
                              "integers or floats")
    steps, kind = [], dtype
    for layer in plan.layers:
        name = _kind(layer)
        if name in LOOKUPS:
            if (name == "StringLookup") != (kind == "string"):
                raise _refuse(layer, "its input", f"is {kind}", "feed a StringLookup strings and an IntegerLookup "
                              "integers")
            steps.append(_lookup_step(layer, kind))
            kind = "int" if steps[-1]["output_mode"] == "int" else "float"
        elif name == "Normalization":
            if kind == "string":
                raise _refuse(layer, "its input", "is strings", "normalize numbers")
            steps.append(_normalization_step(layer))
            kind = "float"
        elif name == "CategoryEncoding":
            if kind in ("string", "float", "float32"):
                raise _refuse(layer, "its input", f"is {kind}", "feed it integer indices (an IntegerLookup's "
                              "int output, or an integer Input)")
            steps.append(_encoding_step(layer))
            kind = "float"
        elif name == "Hashing":
            if kind not in ("string", "int64", "int32", "float32"):
                raise _refuse(layer, "its input", f"is the {kind} output of another layer", "hash a column's raw "
                              "values (put the Hashing layer right after the Input)")
            steps.append(_hashing_step(layer, kind))
            kind = "int" if steps[-1]["output_mode"] == "int" else "float"
    if not plan.layers and dtype == "string":
        raise ConversionError("needs_flex", f"string input '{plan.name}' is not read by a StringLookup layer: "
                              "LiteRT cannot run string ops; put a StringLookup right after it")
    shape = [-1, *[int(dim) if dim is not None else -1 for dim in plan.source.shape[1:]]]
    sent = [-1] if shape[1:] in ([], [1]) else shape  # a (1,) column is sent one value per instance
    return {"name": plan.name, "dtype": dtype, "shape": sent, "keras_shape": shape, "input": plan.name,
            "steps": steps}


def servable_body(model, plans: list[ColumnPlan], keras):
    """The model after its preprocessing layers: one Input per column, named after it, shaped as the chain's end."""
    outputs = model.outputs[0] if len(model.outputs) == 1 else model.outputs
    body = keras.Model([plan.end for plan in plans], outputs)
    inputs = [keras.Input(tuple(plan.end.shape[1:]), dtype=plan.end.dtype, name=plan.name) for plan in plans]
    return keras.Model(inputs, body(inputs), name=model.name)  # the same layers and weights, inputs named


def generated_rows(columns: list[dict], seed: int = 0) -> dict[str, np.ndarray]:
    """Raw rows from the layers' own vocabularies (every token, the mask token and an unseen value among them) and
    statistics (mean +- 2 standard deviations): what the gate checks the whole served path on when no raw samples
    are given."""
    rng = np.random.default_rng(seed)
    rows = {}
    for column in columns:
        shape = (SAMPLE_ROWS, *[max(dim, 1) for dim in column["shape"][1:]])
        first = column["steps"][0] if column["steps"] else None
        if first is not None and first["kind"] == "lookup":
            choices = list(first["vocabulary"])
            unseen = "an unseen value" if column["dtype"] == "string" else max(choices, default=0) + 7919
            choices.append(unseen)
            if first["mask_token"] is not None:
                choices.append(first["mask_token"])
            values = np.array(choices, dtype=str if column["dtype"] == "string" else column["dtype"])
            rows[column["name"]] = values[rng.integers(0, len(values), size=shape)]
        elif first is not None and first["kind"] == "hashing":
            made_up = [f"value {index}" for index in range(40)] if column["dtype"] == "string" else range(-20, 80)
            values = np.array(list(made_up), dtype=str if column["dtype"] == "string" else column["dtype"])
            rows[column["name"]] = values[rng.integers(0, len(values), size=shape)]
        elif first is not None and first["kind"] == "category_encoding":
            rows[column["name"]] = rng.integers(0, first["num_tokens"], size=shape).astype(column["dtype"])
        else:
            mean = np.asarray(first["mean"]).reshape(-1)[0] if first else 0.0
            std = np.sqrt(np.asarray(first["variance"]).reshape(-1)[0]) if first else 1.0
            values = rng.normal(mean, 2 * std + 1e-3, size=shape)
            rows[column["name"]] = (np.round(values) if column["dtype"].startswith("int") else values).astype(
                column["dtype"])
    return rows


def keras_inputs(model, columns: list[dict], rows: dict[str, np.ndarray]) -> dict:
    """Raw rows as the model's own Inputs take them (strings as tf strings), keyed by Input name."""
    import tensorflow as tf  # noqa: PLC0415  (imported by convert's Keras path already; kept off the module's import)

    fed = {}
    for column in columns:
        values = rows[column["name"]].reshape([len(rows[column["name"]]), *column["keras_shape"][1:]])
        fed[column["name"]] = tf.constant(values.astype(object) if column["dtype"] == "string" else values)
    return fed


def check_columns(model, plans: list[ColumnPlan], columns: list[dict], rows: dict[str, np.ndarray], keras) -> None:
    """The function's own numpy preprocessing of every raw row must give the layers' own tensors: exactly for
    lookups and encodings, within float32 rounding for a normalization."""
    from function.model.manifest import TensorSpec  # noqa: PLC0415  (the function's own code, as it serves)
    from function.preprocessing.columns import apply_column, parse_columns  # noqa: PLC0415

    specs = [TensorSpec(name=entry["input"], shape=(-1,), dtype="float32", scale=None, zero_point=None)
             for entry in columns]
    parsed = parse_columns({"type": "columns", "columns": columns}, specs)
    ends = keras.Model(model.inputs, [plan.end for plan in plans])
    theirs = ends(keras_inputs(model, columns, rows))
    theirs = theirs if isinstance(theirs, (list, tuple)) else [theirs]
    for column, plan, layer_output in zip(parsed, plans, theirs):
        ours = apply_column(column, rows[column.spec.name])
        wanted = np.asarray(layer_output)
        close = ours.shape == wanted.shape and np.allclose(ours, wanted, rtol=1e-6, atol=1e-6)
        if not close:
            raise ConversionError("preprocessing_mismatch", f"column '{plan.name}': the function's preprocessing "
                                  f"gives {ours.shape} values other than the layers' {wanted.shape} on the "
                                  "validation rows (a convert bug: report it with the model)")
