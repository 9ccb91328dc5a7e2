"""A tensor request stays one batch from the codec to the interpreter and back, while the result cache still keys
every instance: on the real `tabular` model (three inputs of two dtypes, two outputs)."""
from __future__ import annotations

import hashlib

import numpy as np

from function.log import Timings
from function.tasks.tensor import ComputedResult, TensorBatch, output_arrays
from tests.support.function_fixtures import call, demo_models, make_service  # noqa: F401
from tests.support.tensor_fixtures import tabular_samples, tensor_model_dir, tensor_registry, tensor_service  # noqa: F401

INPUTS, _ = tabular_samples()


def batch_of(indices: list[int]) -> TensorBatch:
    return TensorBatch({name: values[indices] for name, values in INPUTS.items()})


def infer_body(indices: list[int]) -> dict:
    return {"inputs": [{"name": name, "shape": [len(indices), *values.shape[1:]],
                        "datatype": "INT32" if values.dtype == np.int32 else "FP32",
                        "data": values[indices].ravel().tolist()} for name, values in INPUTS.items()]}


def predict_body(indices: list[int]) -> dict:
    return {"instances": [{name: values[index].tolist() for name, values in INPUTS.items()} for index in indices]}


def test_every_instance_a_miss_reaches_the_interpreter_and_the_codec_as_the_requests_own_arrays(tensor_registry):
    task = tensor_registry.tensor_task("tabular")
    batch = batch_of([0, 1, 2, 3])
    assert task.gather(batch, [0, 1, 2, 3]) is batch  # no gather when every instance is computed, in order
    tensors = task.preprocess(batch, Timings()).tensors
    assert all(tensors[spec.role] is batch.arrays[spec.name] for spec in task.inputs)  # not restacked
    results = task.predict(batch, {}, Timings())
    assert all(isinstance(result, ComputedResult) for result in results)
    arrays = output_arrays(results, task.outputs)
    assert all(arrays[spec.name] is results[0].outputs[spec.name] for spec in task.outputs)  # not decoded
    assert all(task.is_valid_result(dict(result), {}) for result in results)  # what a store keeps is a result


def test_some_misses_are_gathered_once_in_the_order_asked(tensor_registry):
    task = tensor_registry.tensor_task("tabular")
    batch = batch_of([0, 1, 2, 3])
    picked = task.gather(batch, [3, 1])
    assert len(picked) == 2 and all(
        np.array_equal(picked.arrays[name], batch.arrays[name][[3, 1]]) for name in batch.arrays)


def test_hits_misses_and_repeats_in_one_request_answer_what_a_fresh_computation_does(tensor_service,
                                                                                    tensor_registry):
    """JSON numbers print a float32 exactly, so equal answers are equal bits."""
    warm, fresh = tensor_service, make_service(tensor_registry)
    mixed = [0, 1, 2, 1, 3, 4, 0]  # misses, hits and repeats of both
    for path, body in (("/v2/models/tabular/infer", infer_body), ("/v1/models/tabular:predict", predict_body)):
        assert call(warm, "POST", path, body([1, 3]))[0] == 200  # instances 1 and 3 are now cached
        answer = call(warm, "POST", path, body(mixed))
        assert answer[0] == 200 and answer == call(fresh, "POST", path, body(mixed))
        assert call(warm, "POST", path, body(mixed)) == answer  # every instance a hit now: the same answer


def test_instances_given_one_by_one_are_stacked_once_and_answer_the_same(tensor_registry):
    task = tensor_registry.tensor_task("tabular")
    batch = batch_of([0, 1, 2])
    rows = [{name: np.array(array) for name, array in instance.items()} for instance in batch]
    picked = task.gather(rows, [2, 0])
    assert len(picked) == 2 and picked[0] is rows[2] and picked[1] is rows[0]
    tensors = task.preprocess(rows, Timings()).tensors
    assert all(np.array_equal(tensors[spec.role], batch.arrays[spec.name]) for spec in task.inputs)
    assert task.predict(rows, {}, Timings()) == task.predict(batch, {}, Timings())


def test_an_instance_keys_the_cache_as_a_standalone_array_would(tensor_registry):
    """The cache key of an instance is the digest of its own arrays, whatever batch it came in: results cached
    before the batch stayed whole are still found."""
    task = tensor_registry.tensor_task("tabular")
    batch = batch_of([5, 6, 7])
    row = batch[1]
    standalone = {name: np.array(values[6]) for name, values in INPUTS.items()}
    assert task.input_digest(row) == task.input_digest(standalone)
    digest = hashlib.sha256()
    for spec in task.inputs:
        value = standalone[spec.name]
        digest.update(f"{spec.name}\0{value.dtype.str}\0{value.shape}\0".encode() + value.tobytes())
    assert task.input_digest(row) == digest.hexdigest()
