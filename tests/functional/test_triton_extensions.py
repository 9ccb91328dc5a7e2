"""Triton's repository index, model configuration and statistics extensions through tritonclient.http against the
local server (127.0.0.1, an ephemeral port), with the assertions of Triton's own tests of these paths ported
(qa/L0_http/python_http_aio_test.py, qa/L0_lifecycle/lifecycle_test.py, qa/L0_server_status/server_status_test.py):
the index lists every model and says which cannot be served, the config names the model, statistics count only
what ran, per version, and a version that is not served is an error."""
from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import numpy as np
import pytest
import requests
import tritonclient.http as triton
from tritonclient.utils import InferenceServerException

from function.catalog.registry import ModelRegistry
from tests.support.local_api import serving
from tests.support.function_fixtures import demo_models, make_service  # noqa: F401
from tests.support.tensor_fixtures import tensor_model_dir  # noqa: F401

BROKEN = "broken"


@pytest.fixture(scope="module")
def model_dir(tensor_model_dir, tmp_path_factory) -> Path:
    """The demo models (linked, not copied) and one directory whose manifest cannot be read."""
    directory = tmp_path_factory.mktemp("models")
    for model in tensor_model_dir.iterdir():
        if (model / "manifest.json").is_file():
            os.symlink(model, directory / model.name)
    (directory / BROKEN).mkdir()
    (directory / BROKEN / "manifest.json").write_text("{}")
    return directory


@pytest.fixture(scope="module")
def registry(model_dir) -> ModelRegistry:
    """Its own registry: the statistics are this container's, counted from zero."""
    return ModelRegistry(model_dir)


@pytest.fixture(scope="module")
def server(registry):
    service = make_service(registry)
    with serving(service) as url:
        yield url.removeprefix("http://"), service  # tritonclient takes host:port


@pytest.fixture()
def client(server):
    with triton.InferenceServerClient(url=server[0], network_timeout=60.0) as connection:
        yield connection


def digit_input(value: float) -> triton.InferInput:
    tensor = triton.InferInput("image", [1, 8, 8, 1], "FP32")
    tensor.set_data_from_numpy(np.full((1, 8, 8, 1), value, np.float32))
    return tensor


def test_the_server_metadata_names_the_extensions(client):
    extensions = client.get_server_metadata()["extensions"]
    assert {"model_repository", "model_configuration", "statistics"} <= set(extensions)


# ---- repository index ---------------------------------------------------------------------------------------

def test_the_index_lists_every_model_version_ready_and_the_broken_one_unavailable(client, registry):
    index = client.get_model_repository_index()
    assert len(index) == len(registry.tasks) + 1  # python_http_aio_test: one entry per model of the repository
    ready = {entry["name"]: entry for entry in index if entry["state"] == "READY"}
    assert set(ready) == set(registry.tasks)
    for name, entry in ready.items():
        assert entry == {"name": name, "version": registry.task(name).manifest.version, "state": "READY",
                         "reason": ""}
    broken = next(entry for entry in index if entry["name"] == BROKEN)  # lifecycle_test: a model that failed
    assert broken["state"] == "UNAVAILABLE" and broken["reason"] == registry.unservable[BROKEN].reason != ""


def test_the_index_of_ready_models_leaves_the_broken_one_out(server, registry):
    answer = requests.post(f"http://{server[0]}/v2/repository/index", json={"ready": True}, timeout=60)
    assert answer.status_code == 200
    assert sorted(entry["name"] for entry in answer.json()) == sorted(registry.tasks)


@pytest.mark.parametrize("body", ['{"ready": "yes"}', "[1]", "{broken"])
def test_a_malformed_index_request_is_a_400(server, body):
    answer = requests.post(f"http://{server[0]}/v2/repository/index", data=body, timeout=60)
    assert answer.status_code == 400 and set(answer.json()) == {"error"}


# ---- model configuration ------------------------------------------------------------------------------------

def test_the_config_names_the_model_and_gives_its_tensors_without_the_batch(client, server, registry):
    config = client.get_model_config("digits")
    assert config["name"] == "digits"  # python_http_aio_test
    assert config["platform"] == "litert_tflite" and config["backend"] == "litert"
    assert config["max_batch_size"] == server[1].settings.max_tensor_batch
    assert config["input"] == [{"name": "image", "data_type": "TYPE_FP32", "dims": [8, 8, 1]}]
    assert config["output"] == [{"name": "output_0", "data_type": "TYPE_FP32", "dims": [10]}]
    version = registry.task("digits").manifest.version
    assert client.get_model_config("digits", model_version=version) == config


def test_every_demo_models_config_agrees_with_its_metadata(client, registry):
    for name in registry.tasks:
        config, metadata = client.get_model_config(name), client.get_model_metadata(name)
        for side, tensors in (("input", metadata["inputs"]), ("output", metadata["outputs"])):
            assert [(t["name"], t["data_type"], t["dims"]) for t in config[side]] == [
                (t["name"], f"TYPE_{t['datatype']}", t["shape"][1:] or [1]) for t in tensors], (name, side)


def test_a_value_per_instance_is_dims_one_reshaped_to_a_scalar_as_triton_writes_it(client):
    sex = next(tensor for tensor in client.get_model_config("tabular")["input"] if tensor["name"] == "sex")
    assert sex == {"name": "sex", "data_type": "TYPE_INT32", "dims": [1], "reshape": {"shape": []}}


@pytest.mark.parametrize("model,version,status", [("nope", "", "404"), ("digits", "ab" * 32, "404"),
                                                  (BROKEN, "", "503")])
def test_the_config_of_a_model_not_served_is_an_error(client, model, version, status):
    with pytest.raises(InferenceServerException) as refused:
        client.get_model_config(model, model_version=version)
    assert refused.value.status() == status and model in refused.value.message()


# ---- statistics -----------------------------------------------------------------------------------------------

def inference_stats(client, model: str = "", version: str = "") -> list[dict]:
    return client.get_inference_statistics(model, model_version=version)["model_stats"]


def test_statistics_count_what_ran_per_version_and_what_the_cache_answered(client, registry):
    version = registry.task("sentiment").manifest.version
    before = inference_stats(client, "sentiment")
    # server_status_test: a version that never ran has its entry, with a success count of 0
    assert [(stat["name"], stat["version"]) for stat in before] == [("sentiment", version)]
    assert before[0]["inference_stats"]["success"] == {"count": 0, "ns": 0}
    assert before[0]["inference_count"] == before[0]["execution_count"] == before[0]["last_inference"] == 0

    start = inference_stats(client, "digits")[0]
    for value in (0.1, 0.2, 0.3):
        client.infer("digits", [digit_input(value)])
    client.infer("digits", [digit_input(0.1)])  # the same instance again: from the result cache
    stat = inference_stats(client, "digits", registry.task("digits").manifest.version)[0]
    counts = stat["inference_stats"]
    assert counts["success"]["count"] - start["inference_stats"]["success"]["count"] == 4
    assert stat["inference_count"] - start["inference_count"] == 3  # cache hits are not inferences
    assert stat["execution_count"] - start["execution_count"] == 3
    assert counts["cache_hit"]["count"] - start["inference_stats"]["cache_hit"]["count"] == 1
    assert counts["cache_miss"]["count"] - start["inference_stats"]["cache_miss"]["count"] == 3
    assert counts["compute_infer"]["count"] == stat["execution_count"] and counts["compute_infer"]["ns"] > 0
    assert counts["success"]["ns"] >= counts["compute_infer"]["ns"] and stat["last_inference"] > 0
    assert counts["fail"]["count"] == 0


def test_every_route_counts_for_the_model_that_answered(server, client):
    start = inference_stats(client, "sentiment")[0]["inference_stats"]["success"]["count"]
    answer = requests.post(f"http://{server[0]}/sentiment", json={"text": "A fine, warm film."}, timeout=60)
    assert answer.status_code == 200
    assert inference_stats(client, "sentiment")[0]["inference_stats"]["success"]["count"] == start + 1


def test_a_failed_inference_is_counted_as_a_failure(server, client):
    start = inference_stats(client, "digits")[0]["inference_stats"]["fail"]["count"]
    body = {"model": "digits", "image": base64.b64encode(b"not an image").decode()}
    answer = requests.post(f"http://{server[0]}/classify", json=body, timeout=60)
    assert answer.status_code == 415
    assert inference_stats(client, "digits")[0]["inference_stats"]["fail"]["count"] == start + 1


def test_statistics_of_every_model_list_every_served_version(client, registry):
    stats = inference_stats(client)  # server_status_test's test_infer_stats_no_model: every ready version
    assert sorted((stat["name"], stat["version"]) for stat in stats) == sorted(
        (name, task.manifest.version) for name in registry.tasks for task in registry.versions(name))


def test_statistics_of_a_version_not_served_is_an_error(client):
    with pytest.raises(InferenceServerException) as refused:  # server_status_test: a version not available
        client.get_inference_statistics("digits", model_version="ab" * 32)
    assert refused.value.status() == "404" and "has no version" in refused.value.message()
    with pytest.raises(InferenceServerException) as refused:
        client.get_inference_statistics("nope")
    assert refused.value.status() == "404"


def test_the_statistics_are_triton_json(server):
    stat = json.loads(requests.get(f"http://{server[0]}/v2/models/digits/stats", timeout=60).text)["model_stats"][0]
    assert set(stat) == {"name", "version", "last_inference", "inference_count", "execution_count",
                         "inference_stats", "response_stats", "batch_stats", "memory_usage"}
    assert set(stat["inference_stats"]) == {"success", "fail", "queue", "compute_input", "compute_infer",
                                            "compute_output", "cache_hit", "cache_miss"}
