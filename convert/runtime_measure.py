"""`convert --compare`'s runtime measurement: each mode's model served by the function itself, in fresh processes.

Per mode, its model directory is written as convert writes the served one (model.tflite, manifest.json, a text
model's tokenizer), and `python -m convert.runtime_worker` runs the function's init and answers on it
(convert/runtime_worker.py): once with MODEL_THREADS=1 (cold start, first invoke, warm p50, peak RSS) and once with
MODEL_THREADS=2 (warm p50). Those processes import no TensorFlow: what they pay is what a Lambda cold start pays.
The modes take turns at each thread count, after one discarded process that warms the disk cache. The numbers feed
convert/memory_advice.py.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import convert
from convert import manifest
from convert.errors import ConversionError
from convert import runtime_report
from convert.memory_advice import ModeRuntime, advise
from convert.progress import progress
from function.model.threads import is_big

THREAD_COUNTS = (1, 2)
TIMEOUT_S = 600  # per process: a BERT-base-sized model's init and warm answers take seconds, not minutes
PACKAGE_ROOT = Path(convert.__file__).resolve().parent.parent  # what holds convert/ and function/


def worker_environment(model_parent: Path, threads: int) -> dict[str, str]:
    """The function's settings for a lone model, nothing else of this process's environment: no cache, no S3."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(PACKAGE_ROOT),
            "MODEL_DIR": str(model_parent), "MODEL_THREADS": str(threads), "RESULTS_CACHE": "off",
            "LOG_LEVEL": "WARNING", "OPENBLAS_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def run_worker(model_parent: Path, name: str, inputs_file: Path, threads: int) -> dict:
    command = [sys.executable, "-m", "convert.runtime_worker", name, str(inputs_file), repr(time.time())]
    done = subprocess.run(command, env=worker_environment(model_parent, threads), capture_output=True, text=True,
                          timeout=TIMEOUT_S, cwd=model_parent)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ConversionError("runtime_measure_failed", f"the function could not serve the {model_parent.name} model "
                              f"in a fresh process ({last}): convert again, or drop --compare")
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    if measured["tensorflow_imported"]:  # the function never imports it: its numbers would not be a Lambda's
        raise RuntimeError(f"serving the {model_parent.name} model imported TensorFlow")
    return measured


def write_mode_dir(job, result, parent: Path) -> Path:
    """The mode's model directory as convert writes the served one (no report files), alone in `parent`."""
    directory = parent / job.name
    directory.mkdir(parents=True)
    model_manifest = manifest.build_manifest(
        name=job.name, sidecar=job.sidecar, output_kind=job.output_kind, binding=job.binding, content=result.content,
        model=result.model, mode=result.mode, saved_model_digest=job.info.digest, converter=job.converter_version,
        fidelity=result.as_manifest(), bounds={})
    manifest.write_model_files(directory, result.content, model_manifest, job.sidecar)
    return directory


def role_inputs(job) -> dict[str, np.ndarray]:
    """Validation sample 0, by role, as the function's runner takes it."""
    one = job.validation.one(0)
    return {role: one[name] for role, name in job.binding.inputs.items()}


def measure_modes(job, results: dict) -> list[ModeRuntime]:
    """results: mode -> ModeResult (convert/pipeline.py). One ModeRuntime per mode, in the order given."""
    with tempfile.TemporaryDirectory(prefix="convert-runtime-") as work:
        root = Path(work)
        inputs_file = root / "inputs.npz"
        np.savez(inputs_file, **role_inputs(job))
        parents = {}
        for mode, result in results.items():
            parents[mode] = root / mode
            write_mode_dir(job, result, parents[mode])
        measured: dict[tuple[str, int], dict] = {}
        with progress().step("--compare: runtime", total=1 + len(THREAD_COUNTS) * len(results)) as step:
            run_worker(parents[next(iter(results))], job.name, inputs_file, 1)  # warms the disk cache; discarded
            step.advance()
            for threads in THREAD_COUNTS:
                for mode in results:
                    measured[mode, threads] = run_worker(parents[mode], job.name, inputs_file, threads)
                    step.advance()
        big = {mode: is_big(parents[mode] / job.name / manifest.MODEL_FILE, mode) for mode in results}
    return [ModeRuntime(mode=mode, passed=result.gate_error is None,
                        cold_start_s=round(measured[mode, 1]["cold_start_s"], 4),
                        first_invoke_ms=round(measured[mode, 1]["first_invoke_ms"], 3),
                        warm_1_thread_ms=round(measured[mode, 1]["warm_p50_ms"], 3),
                        warm_2_threads_ms=round(measured[mode, 2]["warm_p50_ms"], 3),
                        peak_rss_mb=round(measured[mode, 1]["peak_rss_mb"], 1), over_thread_line=big[mode])
            for mode, result in results.items()]


def compare_runtime(job, results: dict) -> dict:
    """report.json's "runtime" block: every mode measured, the memory sizes looked at, the recommendation."""
    runtimes = measure_modes(job, results)
    arch = runtime_report.architecture()
    return runtime_report.section(runtimes, advise(runtimes, arch), arch)
