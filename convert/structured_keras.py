"""A structured `.keras` model (named column Inputs read by lookup and normalization layers) made into the
SavedModel directory the pipeline converts: the layers' work goes into the sidecar's `preprocessing` (`{"type":
"columns"}`, convert/lookup_layers.py), the rest of the model is exported, and the validation file holds raw rows
(`raw_<column>` arrays, strings as np.array(list_of_str)) with `expected` = model.predict on them, so the gate
checks the function's whole path (raw values -> its numpy preprocessing -> LiteRT) against the Keras model.

Raw rows come from the validation file the sidecar names (or validation.npz beside the model); without one, convert
draws them from the layers' own vocabularies and statistics (convert/lookup_layers.py, generated_rows).
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from convert import lookup_layers
from convert.errors import ConversionError
from convert.inference_mode import export_for_inference
from convert.npz_reader import read_arrays
from convert.sidecar import SCHEMA, SIDECAR_FILE
from convert.sidecar_inference import VALIDATION_FILE, Inference
from convert.sidecar_reader import read_sidecar_file

RAW_PREFIX = "raw_"
EXPECTED = "expected"
PREDICT_BATCH = 256
FROM_LAYERS = ("preprocessing", "inputs")


def _given_sidecar(sidecar_path: Path | None) -> dict:
    given = read_sidecar_file(sidecar_path) if sidecar_path is not None else {}
    for key in FROM_LAYERS:
        if key in given:
            raise ConversionError("bad_sidecar", f"sidecar.json: \"{key}\" comes from the model's lookup and "
                                  "normalization layers (convert writes the columns from them): remove it "
                                  "(see docs/tensor-models.md)")
    if given.get("task", "tensor") != "tensor":
        raise ConversionError("bad_sidecar", f"sidecar.json: \"task\" is {given['task']!r}, but a model with "
                              "lookup layers at named inputs is served as task \"tensor\" (its raw columns in, its "
                              "outputs as tensors): write \"tensor\" or remove it")
    return given


def _raw_rows(path: Path, columns: list[dict]) -> dict[str, np.ndarray]:
    """The file's raw_<column> arrays, one per column, as many rows each."""
    arrays = read_arrays(path)
    rows, names = {}, [column["name"] for column in columns]
    missing = [name for name in names if RAW_PREFIX + name not in arrays]
    if missing:
        raise ConversionError("bad_samples", f"{path.name}: a structured model is checked on raw rows: save "
                              f"{', '.join(RAW_PREFIX + name for name in missing)} (one array per column, strings as "
                              "np.array(list_of_str))")
    for column in columns:
        array = arrays[RAW_PREFIX + column["name"]]
        if column["dtype"] == "string" and array.dtype.kind != "U":
            raise ConversionError("bad_samples", f"{path.name}: {RAW_PREFIX}{column['name']} is {array.dtype}: save "
                                  "the column's strings as np.array(list_of_str)")
        if column["dtype"] != "string" and array.dtype.kind not in "iuf":
            raise ConversionError("bad_samples", f"{path.name}: {RAW_PREFIX}{column['name']} is {array.dtype}: "
                                  f"save the column's {column['dtype']} values")
        rows[column["name"]] = array if column["dtype"] == "string" else array.astype(column["dtype"])
    counts = {len(array) for array in rows.values()}
    if len(counts) != 1 or 0 in counts:
        raise ConversionError("bad_samples", f"{path.name}: the raw_<column> arrays hold different numbers of rows "
                              f"({sorted(counts)}): give every column one value per row")
    rows[EXPECTED] = arrays.get(EXPECTED)
    return rows


def _validation_rows(folder: Path, given: dict, columns: list[dict], log: Callable[[str], None]
                     ) -> dict[str, np.ndarray]:
    validation = given.get("validation") if isinstance(given.get("validation"), dict) else {}
    name = validation.get("samples") or VALIDATION_FILE
    path = folder / str(name)
    if path.is_file():
        log(f"  structured: raw rows from {path.name}")
        return _raw_rows(path, columns)
    if "samples" in validation:
        raise ConversionError("missing_file", f"sidecar.json: validation.samples names {name}, which is not beside "
                              "it: save the raw rows there")
    log(f"  structured: no {VALIDATION_FILE}: {lookup_layers.SAMPLE_ROWS} raw rows drawn from the layers' "
        "vocabularies and statistics (unseen values and mask tokens among them)")
    return {**lookup_layers.generated_rows(columns), EXPECTED: None}


def prepare_structured(keras_path: Path, sidecar_path: Path | None, workdir: Path, model, keras,
                       log: Callable[[str], None] = print) -> tuple[Path, Inference]:
    """The SavedModel directory of the model after its preprocessing layers, with the sidecar and raw rows."""
    given = _given_sidecar(sidecar_path)
    plans = lookup_layers.plan_columns(model)
    columns = [lookup_layers.column_entry(plan) for plan in plans]
    if len(model.outputs) != 1:
        raise ConversionError(lookup_layers.CODE, f"the model has {len(model.outputs)} outputs: convert checks a "
                              "structured model's served path on one output; give it one")
    folder = sidecar_path.parent if sidecar_path is not None else keras_path.parent
    rows = _validation_rows(folder, given, columns, log)
    expected = rows.pop(EXPECTED)
    lookup_layers.check_columns(model, plans, columns, rows, keras)
    if expected is None:
        predicted = model.predict(lookup_layers.keras_inputs(model, columns, rows), batch_size=PREDICT_BATCH,
                                  verbose=0)
        expected = np.asarray(predicted, dtype=np.float32)
    body = lookup_layers.servable_body(model, plans, keras)
    directory = workdir / keras_path.stem
    export_for_inference(body, directory, keras, keras_path.name)
    for plan in plans:
        described = " -> ".join(f"{type(layer).__name__} '{layer.name}'" for layer in plan.layers) or "as sent"
        log(f"  column '{plan.name}': {described}")
    np.savez(directory / VALIDATION_FILE, **{RAW_PREFIX + name: array for name, array in rows.items()},
             expected=np.asarray(expected, dtype=np.float32))
    sidecar = {"schema": SCHEMA, "name": keras_path.stem, **given, "task": "tensor",
               "preprocessing": {"type": "columns", "columns": columns},
               "validation": {"samples": VALIDATION_FILE}}
    (directory / SIDECAR_FILE).write_text(json.dumps(sidecar, indent=2, ensure_ascii=False), encoding="utf-8")
    return directory, Inference(sidecar, {"preprocessing": "the model's lookup and normalization layers"})
