"""What the init imports and defines is what every cold start pays before its first answer (bench section 17).

Two things it once paid for and no request on local models needs: the HTTP client stack (http.client, ssl, email,
socket: 12 ms, only the S3 and DynamoDB clients use it), tempfile (shutil, random, bz2, lzma: 3.5 ms, for a
directory name) and hashlib's OpenSSL (2-2.5 ms, for digests of a few KB that CPython's own sha256 takes:
function/digest.py). And dataclasses: on Python 3.12 defining one costs 0.3-1.2 ms (its methods are generated and
exec'd one by one), and the init defined twenty, 11 ms of the 50 ms `import function.app` took beyond numpy and
LiteRT. Records on the init path and on a first request's are NamedTuples made by function/records.py's
@named_tuple (typing.NamedTuple's check of each annotation took half of another 3 ms), or classes with __slots__
when they change; the AWS clients, the bulk and S3 event adapters and the OpenAPI document keep theirs (they wait on the
network anyway). And the garbage collector, which walked the init's objects 30-40 times while they were made. And
numpy's OpenBLAS thread pool, whose spinning workers took CPU from the import itself on shared cores.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.function_fixtures import REPO, demo_models  # noqa: F401

# Packages no request on the image's own models needs: loading one at init is a cost every cold start pays.
NOT_AT_INIT = ("http.client", "ssl", "email", "socket", "tempfile", "shutil", "random", "bz2", "lzma", "dataclasses",
               "hashlib", "_hashlib")

# The first request of each route on the image's own models (kit/route_events.py): the page and the
# OpenAPI document keep their dataclasses, so their GETs are not walked.
FIRST_REQUESTS = ("POST /classify", "POST /classify-text", "POST /sentiment", "POST /tokenize", "POST /embed",
                  "POST /v1/embeddings", "POST /v1/models/tabular:predict", "POST /v2/models/tabular/infer")

PROBE = r"""
import gc, json, os, sys

loaded_before = set(sys.modules)
collections = []


def count(phase, info):  # once function/app.py runs (compiling it, without a __pycache__, may collect before)
    if phase == "start" and "gc" in vars(sys.modules.get("function.app", sys)):
        collections.append(info["generation"])


gc.callbacks.append(count)
import function.app

collected_during_init = list(collections)
threads_after_init = len(os.listdir("/proc/self/task"))
loaded = sorted(set(sys.modules) - loaded_before)
from kit.route_events import route_events

events = route_events()
statuses = {route: function.app.handler(events[route], None)["statusCode"] for route in json.loads(sys.argv[1])}
classes = [(f"{name}.{attribute}", value) for name, module in list(sys.modules.items()) if name.startswith("function")
           for attribute, value in vars(module).items() if isinstance(value, type) and value.__module__ == name]
defined = sorted(name for name, cls in classes if "__dataclass_fields__" in vars(cls))
# typing.NamedTuple keeps the ForwardRef it compiled for each string annotation; @named_tuple keeps the strings.
typing_named_tuples = sorted(name for name, cls in classes if "_fields" in vars(cls) and any(
    type(annotation).__name__ == "ForwardRef" for annotation in vars(cls).get("__annotations__", {}).values()))
print("RESULT " + json.dumps({"loaded": loaded, "statuses": statuses, "dataclasses": defined,
                              "typing_named_tuples": typing_named_tuples,
                              "collected_during_init": collected_during_init, "gc_enabled": gc.isenabled(),
                              "threads_after_init": threads_after_init,
                              "frozen": gc.get_freeze_count()}))
"""


@pytest.fixture(scope="module")
def init_facts(demo_models, tmp_path_factory) -> dict:  # noqa: F811
    tmp_path = tmp_path_factory.mktemp("init")
    env = {**os.environ, "MODEL_DIR": str(demo_models), "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    for name in ("RESULTS_TABLE", "RESULTS_CACHE", "MODEL_SOURCE", "RESULTS_BUCKET", "OPENBLAS_NUM_THREADS"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(FIRST_REQUESTS)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    facts = json.loads(line[len("RESULT "):])
    assert facts["statuses"] == {route: 200 for route in FIRST_REQUESTS}  # every first request was served
    return facts


def test_the_init_loads_no_package_a_request_on_local_models_does_not_need(init_facts):
    loaded = init_facts["loaded"]
    assert "function.service" in loaded  # the probe did import the function
    assert [name for name in loaded if name.split(".")[0] in NOT_AT_INIT or name in NOT_AT_INIT] == []


def test_the_init_leaves_handing_back_mapped_model_files_to_a_later_call(init_facts):
    # function/model/resident.py works from a model's second call on (~1 ms): a cold start does not even import it.
    assert "function.model.runner" in init_facts["loaded"]
    assert "function.model.resident" not in init_facts["loaded"]


def test_neither_the_init_nor_a_first_request_defines_a_dataclass(init_facts):
    assert init_facts["dataclasses"] == []


def test_their_named_tuples_are_made_without_typings_annotation_checks(init_facts):
    # function/records.py: typing.NamedTuple compiles each string annotation, twice @named_tuple's cost to define.
    assert init_facts["typing_named_tuples"] == []


def test_the_collector_stays_out_of_the_init_and_is_on_for_requests(init_facts):
    # function/app.py: no collection while the init allocates what the container keeps, and all of it frozen after.
    assert init_facts["collected_during_init"] == []
    assert init_facts["gc_enabled"] is True
    assert init_facts["frozen"] > 10_000  # numpy's, LiteRT's and the function's objects


def test_the_init_starts_no_thread(init_facts):
    # function/app.py: numpy's OpenBLAS would start a pool of spinning worker threads (one per core beyond the first)
    # that nothing the function computes uses, and on shared cores they slowed the import itself.
    assert init_facts["threads_after_init"] == 1


def test_a_blas_thread_count_the_environment_sets_is_kept(tmp_path):
    env = {**os.environ, "MODEL_DIR": str(tmp_path), "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO),
           "RESULTS_CACHE": "off", "OPENBLAS_NUM_THREADS": "2"}
    done = subprocess.run([sys.executable, "-c", "import os, function.app; print(os.environ['OPENBLAS_NUM_THREADS'])"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "2"
