"""Threads from what the container really has: the cgroup quota (v2 and v1, on fake cgroup files), Lambda's
memory-to-vCPU rule, the MODEL_THREADS override, and one thread for every demo model whatever the CPUs."""
from __future__ import annotations

import pytest

from function.config import ServiceSettings, model_threads_setting
from function.model import threads
from function.model.manifest import load_manifest
from function.model.runner import ModelRunner
from tests.support.function_fixtures import demo_models  # noqa: F401

DEMO_MODELS = ("digits", "efficientnet_lite0", "minilm", "sentiment", "tabular")


def cgroup_v2(tmp_path, cpu_max: str):
    (tmp_path / "cpu.max").write_text(cpu_max + "\n")
    return tmp_path


def cgroup_v1(tmp_path, quota: int, period: int, controller: str = "cpu,cpuacct"):
    (tmp_path / controller).mkdir()
    (tmp_path / controller / "cpu.cfs_quota_us").write_text(f"{quota}\n")
    (tmp_path / controller / "cpu.cfs_period_us").write_text(f"{period}\n")
    return tmp_path


@pytest.mark.parametrize(("cpu_max", "cpus"), [("200000 100000", 2), ("150000 100000", 2), ("100000 100000", 1),
                                                ("50000 100000", 1), ("600000 100000", 6), ("max 100000", None)])
def test_cgroup_v2_quota_in_whole_cpus(tmp_path, cpu_max, cpus):
    assert threads.cgroup_cpus(cgroup_v2(tmp_path, cpu_max)) == cpus


@pytest.mark.parametrize(("quota", "period", "cpus"), [(200000, 100000, 2), (-1, 100000, None), (30000, 100000, 1)])
def test_cgroup_v1_quota_in_whole_cpus(tmp_path, quota, period, cpus):
    assert threads.cgroup_cpus(cgroup_v1(tmp_path, quota, period)) == cpus


def test_no_cgroup_files_is_no_quota(tmp_path):
    (tmp_path / "cpu.max").write_text("garbage\n")
    assert threads.cgroup_cpus(tmp_path) is None
    assert threads.cgroup_cpus(tmp_path / "missing") is None


@pytest.mark.parametrize(("memory_mb", "vcpus"), [(128, 1), (1769, 1), (3008, 2), (3538, 2), (5307, 3),
                                                  (8845, 5), (10240, 6)])
def test_lambda_memory_buys_one_vcpu_per_1769_mb_up_to_six(memory_mb, vcpus):
    assert threads.lambda_vcpus(memory_mb) == vcpus


def test_the_least_of_affinity_quota_and_lambda_memory(tmp_path):
    affinity = len(__import__("os").sched_getaffinity(0))
    root = cgroup_v2(tmp_path, "100000 100000")
    assert threads.available_cpus({}, root) == 1
    (root / "cpu.max").write_text("max 100000\n")
    assert threads.available_cpus({}, root) == affinity
    assert threads.available_cpus({"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1769"}, root) == 1
    assert threads.available_cpus({"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "10240"}, root) == min(affinity, 6)


def test_big_models_get_every_cpu_small_ones_one(tmp_path):
    root = cgroup_v2(tmp_path, "200000 100000")
    expected = min(2, len(__import__("os").sched_getaffinity(0)))
    assert threads.threads_for(True, {}, root) == expected
    assert threads.threads_for(False, {}, root) == 1


def test_a_float16_file_counts_the_float32_weights_it_is_widened_to(tmp_path):
    model_file = tmp_path / "model.tflite"
    with open(model_file, "wb") as sparse:  # 40 MiB of nothing: a size without the disk space
        sparse.truncate(40 * 1024 * 1024)
    assert not threads.is_big(model_file, "float32")
    assert not threads.is_big(model_file, "dynamic")
    assert threads.is_big(model_file, "float16")


@pytest.mark.parametrize("big", [True, False])
def test_model_threads_overrides_for_every_model(tmp_path, big):
    root = cgroup_v2(tmp_path, "100000 100000")
    assert threads.threads_for(big, {"MODEL_THREADS": "3"}, root) == 3
    assert threads.threads_for(big, {"MODEL_THREADS": "auto"}, root) == 1


@pytest.mark.parametrize("raw", ["0", "-2", "two", "1.5"])
def test_a_wrong_model_threads_stops_the_init_with_its_name(raw):
    with pytest.raises(ValueError, match="MODEL_THREADS must be auto or a positive number of threads"):
        ServiceSettings.from_env({"MODEL_THREADS": raw})
    assert model_threads_setting({"MODEL_THREADS": ""}) is None


@pytest.mark.parametrize("name", DEMO_MODELS)
def test_the_demo_models_keep_one_thread_on_a_six_vcpu_lambda(demo_models, name, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setattr(threads, "CGROUP_ROOT", cgroup_v2(tmp_path, "600000 100000"))
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "10240")
    monkeypatch.delenv("MODEL_THREADS", raising=False)
    manifest = load_manifest(demo_models / name)
    assert not threads.is_big(manifest.model_file, manifest.quantization)
    runner = ModelRunner(manifest)
    assert runner.num_threads == 1
    assert runner.weights_packed  # every runner packs when it is made; a small one is made on first use
