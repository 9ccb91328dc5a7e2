"""A big model under a 2-CPU quota: two threads, its weights packed when it loads (so its first answer does not pack),
and the same answers as one thread and as a plain interpreter's first call.

No model of ResNet50's size is built for the tests (TensorFlow would take minutes): the size line is lowered to let
EfficientNet-Lite0 (9 MB) stand for a big model; the cgroup quota is a fake cgroup v2 directory. XNNPACK splits the
work of a layer between its threads by output tiles, not within a sum: measured here, EfficientNet-Lite0 and
ResNet50 answer bit for bit the same at 1 and 2 threads, so the test demands equality."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from function.catalog.registry import ModelRegistry
from function.model import threads
from function.model.manifest import load_manifest
from function.model.packing import load_at_init
from function.model.runner import ModelRunner
from tests.support.function_fixtures import demo_models  # noqa: F401
from tests.support.resident import resident_bytes

BIG = "efficientnet_lite0"


@pytest.fixture
def two_cpu_quota(tmp_path, monkeypatch, demo_models):  # noqa: F811
    (tmp_path / "cpu.max").write_text("200000 100000\n")
    monkeypatch.setattr(threads, "CGROUP_ROOT", tmp_path)
    monkeypatch.setattr(threads, "THREADED_MODEL_BYTES", (demo_models / BIG / "model.tflite").stat().st_size)
    monkeypatch.delenv("MODEL_THREADS", raising=False)
    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", raising=False)
    return min(2, len(os.sched_getaffinity(0)))


def images(count: int) -> np.ndarray:
    return np.random.default_rng(7).uniform(-1, 1, (count, 224, 224, 3)).astype(np.float32)


def test_a_big_model_gets_every_cpu_of_the_quota_and_answers_as_one_thread(demo_models, two_cpu_quota):  # noqa: F811
    manifest = load_manifest(demo_models / BIG)
    threaded = ModelRunner(manifest)
    assert threaded.num_threads == two_cpu_quota
    single = ModelRunner(manifest, num_threads=1)
    for batch in (1, 8):
        inputs = {"image": images(batch)}
        np.testing.assert_array_equal(threaded.run(inputs)["scores"], single.run(inputs)["scores"])


def test_a_big_model_packs_when_it_loads_and_answers_as_a_plain_first_call(demo_models, two_cpu_quota,  # noqa: F811
                                                                         monkeypatch):
    monkeypatch.setenv("MODEL_THREADS", "1")  # today's interpreter, to compare bit for bit
    manifest = load_manifest(demo_models / BIG)
    runner = ModelRunner(manifest)
    assert runner.weights_packed  # the first request will not pack
    plain = Interpreter(model_path=str(manifest.model_file), num_threads=1).get_signature_runner(manifest.signature)
    batch = images(2)
    expected = plain(**{manifest.input("image").name: batch})[manifest.output_spec("scores").name]
    np.testing.assert_array_equal(runner.run({"image": batch})["scores"], expected)


def test_the_init_of_a_container_serving_several_loads_and_packs_the_big_models_only(demo_models, two_cpu_quota):  # noqa: F811
    registry = ModelRegistry(demo_models)
    big = sorted(name for name, task in registry.tasks.items() if threads.is_big(task.manifest.model_file,
                                                                                         task.manifest.quantization))
    assert BIG in big and "tabular" not in big  # the line is EfficientNet-Lite0's size here
    assert load_at_init(registry) == big
    assert all(registry.task(name).runner().weights_packed for name in big)
    file = registry.task(BIG).manifest.model_file  # packed, so its mapped pages were handed back at init
    assert resident_bytes(file) < file.stat().st_size // 4
    assert sorted(name for name, task in registry.tasks.items() if task.loaded) == big


def test_a_container_serving_one_model_loads_it_at_init_however_small(demo_models, tmp_path):  # noqa: F811
    shutil.copytree(demo_models / "tabular", tmp_path / "tabular")  # 6 KB: far under the line
    registry = ModelRegistry(tmp_path)
    assert load_at_init(registry) == ["tabular"]
    assert registry.task("tabular").loaded and registry.task("tabular").runner().weights_packed
