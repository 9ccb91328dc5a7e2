"""How many threads a model's interpreter gets: one per vCPU the container really has, for a model big enough to
gain from them; one for the others.

What the container has is the smallest of: the CPUs this process may run on (its affinity), the CPU quota of its
cgroup (v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`) and, inside Lambda, what the configured memory
buys: Lambda allocates CPU in proportion to memory, the equivalent of one vCPU at 1,769 MB, up to 6 vCPUs at
10,240 MB. os.cpu_count() alone counts the host's cores, which neither a quota nor Lambda gives whole.

A small model keeps one thread: a second one cost the demo models up to 2.4x the CPU for the same answer, where
ResNet50 and BERT-base split their work for 3-5% more (`python -m bench.thread_line`; docs/deploy.md, "Memory and
threads"). The line is the model file's size, read with one stat (doubled for a float16 model): the demo models
(6 KB to 61 MB; EfficientNet-Lite0 float16 9.3 MB) keep one thread, keras.applications ResNet50 in float32 (102 MB)
or float16 (51 MB) and anything the size of BERT-base (434 MB) get one per vCPU. MODEL_THREADS overrides it for
every model.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

from function.config import Env, model_threads_setting

CGROUP_ROOT = Path("/sys/fs/cgroup")
LAMBDA_MB_PER_VCPU = 1769  # "At 1,769 MB, a function has the equivalent of one vCPU"
LAMBDA_MAX_VCPUS = 6  # at the most memory Lambda gives, 10,240 MB
THREADED_MODEL_BYTES = 64 * 1024 * 1024  # a model file at least this big gets one thread per vCPU


def _whole(cpus: float) -> int:
    """A CPU share as whole threads, to the nearest (1.5 vCPUs of quota: 2), never fewer than one."""
    return max(1, math.floor(cpus + 0.5))


def cgroup_cpus(root: Path | None = None) -> int | None:
    """The cgroup's CPU quota in whole CPUs, or None when it sets none (or there is no cgroup file to read)."""
    root = CGROUP_ROOT if root is None else root
    try:  # cgroup v2: "max 100000" (no quota) or "<quota> <period>"
        quota, period = (root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else _whole(int(quota) / int(period))
    except (OSError, ValueError):
        pass
    for controller in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):  # cgroup v1: a quota of -1 is none
        try:
            quota = int((root / controller / "cpu.cfs_quota_us").read_text())
            period = int((root / controller / "cpu.cfs_period_us").read_text())
        except (OSError, ValueError):
            continue
        return None if quota <= 0 or period <= 0 else _whole(quota / period)
    return None


def lambda_vcpus(memory_mb: int) -> int:
    """The vCPUs Lambda's memory setting buys: 1 per 1,769 MB, to the nearest, between 1 and 6."""
    return min(LAMBDA_MAX_VCPUS, _whole(memory_mb / LAMBDA_MB_PER_VCPU))


def available_cpus(environ: dict | None = None, cgroup_root: Path | None = None) -> int:
    """The whole CPUs this process can count on: affinity, cgroup quota and Lambda's memory rule, the least."""
    environ = os.environ if environ is None else environ
    counts = [len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1]
    quota = cgroup_cpus(cgroup_root)
    if quota is not None:
        counts.append(quota)
    memory = environ.get(Env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE, "").strip()
    if memory.isdigit() and int(memory) > 0:
        counts.append(lambda_vcpus(int(memory)))
    return max(1, min(counts))


def is_big(model_file: Path, quantization: str = "") -> bool:
    """Big enough to gain from threads, and to have its weights packed when it loads (function/model/runner.py):
    the float32 weights XNNPACK packs, THREADED_MODEL_BYTES or more. A float16 file holds half of them (LiteRT
    widens its weights to float32 before packing)."""
    widened = 2 if quantization == "float16" else 1
    return os.stat(model_file).st_size * widened >= THREADED_MODEL_BYTES


def threads_for(big: bool, environ: dict | None = None, cgroup_root: Path | None = None) -> int:
    """MODEL_THREADS when set; else one per available CPU for a big model (is_big), one for the others."""
    override = model_threads_setting(environ)
    if override is not None:
        return override
    return available_cpus(environ, cgroup_root) if big else 1
