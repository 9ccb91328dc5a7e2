"""TensorFlow Serving's REST API (tensorflow_serving/g3doc/api_rest.md) over the tensor task: request bodies to
instances, results to the bodies TF Serving answers.

Predict takes the row format (`"instances"`: one value per instance, or one object per instance naming every
input) or the columnar format (`"inputs"`: one value for a single-input model, or an object naming every input,
each batch first). Answers mirror the request: `"predictions"` (one value per instance; an object per instance
when the model has several outputs) or `"outputs"` (the batched value; an object when several outputs).
"""
from __future__ import annotations

from function.errors import InvalidInput, refuse
from function.model.manifest import Manifest, TensorSpec
from function.protocols.tensor_values import (DTYPE_NAMES, check_bounds, check_shape, check_values, is_b64, to_array,
                                              to_json)
from function.log import Timings
from function.protocols.encoded_bytes import decoded_column, with_bytes_alias
from function.records import named_tuple
from function.tasks.base import Result
from function.tasks.tensor import TensorBatch, TensorTask, output_arrays

ROW = "instances"
COLUMNAR = "inputs"
PREDICT_METHOD = "tensorflow/serving/predict"
VERSION_HEX_DIGITS = 12  # 48 bits of the model's sha256 version: a positive int64, as TF Serving versions are


@named_tuple
class PredictRequest:
    format: str  # ROW or COLUMNAR: the answer takes the same one
    instances: TensorBatch


def version_number(manifest: Manifest) -> str:
    """TF Serving versions are integers: the first 12 hex digits of the model's version, in decimal. It changes
    whenever the model does, like the `model_version` every other route reports."""
    return str(int(manifest.version[:VERSION_HEX_DIGITS], 16))


def find_version(manifests: list[Manifest], requested: str) -> str:
    """The model_version of the version TF Serving's integer `requested` names, among the versions served."""
    for manifest in manifests:
        if requested == version_number(manifest):
            return manifest.version
    raise refuse("version_not_found", f"Model {manifests[0].name!r} has no version {requested}; it serves "
                 f"version {', '.join(version_number(manifest) for manifest in manifests)}.")


def model_status(manifests: list[Manifest]) -> dict:
    """GetModelStatusResponse: every version served (the stable one first), each AVAILABLE (its interpreter loads
    on first use)."""
    return {"model_version_status": [{"version": version_number(manifest), "state": "AVAILABLE",
                                      "status": {"error_code": "OK", "error_message": ""}}
                                     for manifest in manifests]}


def _tensor_info(name: str, shape: tuple[int, ...], dtype: str) -> dict:
    dims = [{"size": "-1", "name": ""}] + [{"size": str(dim), "name": ""} for dim in shape[1:]]
    return {"dtype": DTYPE_NAMES[dtype].tf, "tensor_shape": {"dim": dims, "unknown_rank": False}, "name": name}


def _input_info(spec: TensorSpec, task: TensorTask) -> dict:
    """An input's TensorInfo: an image model's image is DT_STRING, one encoded image per instance, as TF Serving
    shows an image-bytes input (it also takes the decoded pixels as numbers)."""
    if spec.name == task.bytes_input():
        return {"dtype": "DT_STRING", "tensor_shape": {"dim": [{"size": "-1", "name": ""}], "unknown_rank": False},
                "name": spec.name}
    return _tensor_info(spec.name, spec.shape, spec.served_dtype)


def model_metadata(task: TensorTask) -> dict:
    """GetModelMetadataResponse with the one signature a converted model has. Dimensions are strings (int64 in
    proto3 JSON), the batch is -1: any number of instances up to the batch limit."""
    manifest = task.manifest
    signature = {
        "inputs": {spec.name: _input_info(spec, task) for spec in task.inputs},
        "outputs": {spec.name: _tensor_info(spec.name, spec.shape, spec.served_dtype) for spec in task.outputs},
        "method_name": PREDICT_METHOD,
        "defaults": {},
    }
    return {"model_spec": {"name": manifest.name, "signature_name": "", "version": version_number(manifest)},
            "metadata": {"signature_def": {"signature_def": {manifest.signature: signature}}}}


@named_tuple
class EncodedImages:
    """What encoded images ({"b64": ...}) take: at most `limit` per request, decoding timed in `timings`."""

    limit: int
    timings: Timings


def parse_predict(body: dict, task: TensorTask, max_batch: int, images: EncodedImages) -> PredictRequest:
    signature = body.get("signature_name")
    if signature is not None:
        if not isinstance(signature, str):
            raise refuse("invalid_field", "'signature_name' must be a string.")
        if signature not in ("", task.manifest.signature):
            raise refuse("unknown_signature", f"Model {task.manifest.name!r} has no signature {signature!r}; "
                         f"its only signature is {task.manifest.signature!r}.")
    if (ROW in body) == (COLUMNAR in body):
        raise refuse("missing_field", "Send exactly one of 'instances' (row format) or 'inputs' (columnar "
                     "format).")
    if ROW in body:
        return PredictRequest(ROW, _row_instances(body[ROW], task, max_batch, images))
    return PredictRequest(COLUMNAR, _columnar_instances(body[COLUMNAR], task, max_batch, images))


def _is_named(value: object) -> bool:
    return isinstance(value, dict) and not is_b64(value)


def _check_batch(count: int, where: str, max_batch: int) -> None:
    if count == 0:
        raise refuse("empty_batch", f"{where} holds no instances; send at least one.")
    if count > max_batch:
        raise refuse("batch_too_large", f"{where} holds {count} instances; the limit is {max_batch} "
                     "(MAX_TENSOR_BATCH).")


def _row_instances(rows: object, task: TensorTask, max_batch: int, images: EncodedImages) -> TensorBatch:
    if not isinstance(rows, list):
        raise refuse("invalid_field", "'instances' must be a list: one value (or one object of named inputs) "
                     "per instance.")
    _check_batch(len(rows), "'instances'", max_batch)
    rows = [with_bytes_alias(row, task) if _is_named(row) else row for row in rows]
    specs = task.inputs
    names = [spec.name for spec in specs]
    named = _is_named(rows[0])
    if named:
        wanted = set(names)
        for index, row in enumerate(rows):
            if not _is_named(row):
                raise refuse("invalid_field", f"'instances[{index}]' is not an object like 'instances[0]': "
                             "every instance must name every input.")
            if set(row) != wanted:
                raise refuse("invalid_field", f"'instances[{index}]' names {sorted(row)}; model "
                             f"{task.manifest.name!r} takes exactly {names}.")
        columns = {name: [row[name] for row in rows] for name in names}
    elif len(names) > 1:
        raise refuse("invalid_field", f"'instances' is a plain list, but model {task.manifest.name!r} has "
                     f"{len(names)} inputs: send one object per instance naming {names}.")
    else:
        if any(_is_named(row) for row in rows):
            raise refuse("invalid_field", "'instances' mixes objects and plain values.")
        columns = {names[0]: rows}
    arrays = {}
    for spec in specs:
        column = columns[spec.name]
        where = f"'instances[*].{spec.name}'" if named else "'instances'"
        decoded = decoded_column(column, spec, task, where, _row_where(spec, named), images.limit, images.timings)
        if decoded is not None:
            arrays[spec.name] = decoded
            continue
        try:
            array = to_array(column, spec, where)
            check_shape(array.shape, spec, where, batched=True)
        except InvalidInput:
            _raise_for_first_bad_row(column, spec, names, rows)
            raise
        check_bounds(array.shape, spec, where)
        check_values(array, spec, where)
        arrays[spec.name] = array
    return TensorBatch(arrays)


def _row_where(spec: TensorSpec, named: bool):
    return (lambda index: f"'instances[{index}].{spec.name}'") if named else (lambda index: f"'instances[{index}]'")


def _raise_for_first_bad_row(column: list, spec, names: list[str], rows: list) -> None:
    """A batch that failed as a whole: the error names the first instance that fails on its own, if one does."""
    for index, value in enumerate(column):
        where = f"'instances[{index}].{spec.name}'" if _is_named(rows[0]) else f"'instances[{index}]'"
        check_shape(to_array(value, spec, where).shape, spec, where, batched=False)


def _columnar_instances(value: object, task: TensorTask, max_batch: int, images: EncodedImages) -> TensorBatch:
    names = [spec.name for spec in task.inputs]
    if _is_named(value):
        value = with_bytes_alias(value, task)
        missing = [name for name in names if name not in value]
        unknown = sorted(set(value) - set(names))
        if missing or unknown:
            raise refuse("invalid_field", f"'inputs' names {sorted(value)}; model {task.manifest.name!r} "
                         f"takes exactly {names}.")
        columns = {name: (value[name], f"'inputs.{name}'") for name in names}
    elif len(names) > 1:
        raise refuse("invalid_field", f"'inputs' is a plain value, but model {task.manifest.name!r} has "
                     f"{len(names)} inputs: send an object naming {names}.")
    else:
        columns = {names[0]: (value, "'inputs'")}
    arrays = {}
    for spec in task.inputs:
        column, where = columns[spec.name]
        array = decoded_column(column, spec, task, where, lambda index, where=where: f"{where[:-1]}[{index}]'",
                               images.limit, images.timings)
        if array is not None:
            arrays[spec.name] = array
            continue
        array = to_array(column, spec, where)
        check_shape(array.shape, spec, where, batched=True)
        check_bounds(array.shape, spec, where)
        check_values(array, spec, where)
        arrays[spec.name] = array
    sizes = {name: len(array) for name, array in arrays.items()}
    if len(set(sizes.values())) > 1:
        raise refuse("batch_mismatch", f"The inputs hold different numbers of instances ({sizes}); every "
                     "input's first dimension is the batch and must be the same.")
    _check_batch(next(iter(sizes.values())), "'inputs'", max_batch)
    return TensorBatch(arrays)


def predict_response(task: TensorTask, request: PredictRequest, results: list[Result]) -> dict:
    """As TF Serving answers: a single output is written bare, several as an object keyed by output name."""
    outputs = task.outputs
    columns = {name: to_json(array) for name, array in output_arrays(results, outputs).items()}
    if request.format == ROW:
        if len(outputs) == 1:
            return {"predictions": columns[outputs[0].name]}
        return {"predictions": [{name: column[row] for name, column in columns.items()}
                                for row in range(len(results))]}
    return {"outputs": columns[outputs[0].name] if len(outputs) == 1 else columns}
