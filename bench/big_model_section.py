"""Section 18: big models (issue 35). keras.applications ResNet50 and a BERT-base-sized encoder (12 x 768), random
weights, built and converted by bench/big_models.py (float32), served by every stack at 1 and 2 threads:

- function: function.app's init (MODEL_THREADS=N; a big model loads and packs its weights there) and its runner;
- LiteRT alone: the Interpreter and its signature runner, num_threads=N;
- ONNX Runtime on the same model in ONNX (bench/big_models.build_onnx), intra_op_num_threads=N, and at its default;
- TensorFlow on the SavedModel, intra- and inter-op threads N.

Each configuration runs in a fresh process of its stack's venv (bench/big_worker.py): the function and LiteRT alone
on the Lambda runtime's (requirements.txt only), ONNX Runtime and TensorFlow on their baselines'. Cold is the spawn
to the first answer (import, load, first call), first call its own time, warm the median of batch-1 and batch-8
calls, peak RSS the process's. Each round runs every configuration once, the order rotating by one each round; the
cells are medians over the rounds. The ratios are the ones the issue's targets read: 2 threads over 1, the function
over LiteRT alone at the same threads, the first call over a warm one, ONNX Runtime over the function (in the
verdicts, with each stack's range over the rounds). GFLOP/s is one instance's matrix work (convolutions and matrix
products, counted from the served model's tensor shapes: ResNet50 7.7 GFLOP, the encoder 22.3) over the warm batch-1
time: stacks at the same rate are doing the same arithmetic equally fast. Then
`convert --compare` runs on each model and names the mode and Lambda memory size it recommends
(bench/big_model_advice.py).

`python -m bench.big_model_section [--rounds N] [--model resnet50]` runs it alone and prints it.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from bench import big_model_advice, big_models, venvs
from bench.paths import REPO_ROOT
from bench.report import SectionResult, table, verdict

NUMBER = 18
TITLE = "Big models: ResNet50 and a BERT-base-sized encoder, every stack at 1 and 2 threads"
CONFIGURATIONS = [("function", "1"), ("function", "2"), ("litert", "1"), ("litert", "2"), ("onnxruntime", "1"),
                  ("onnxruntime", "2"), ("onnxruntime", "default"), ("tensorflow", "1"), ("tensorflow", "2")]
LABELS = {"function": "function", "litert": "LiteRT alone", "onnxruntime": "ONNX Runtime", "tensorflow": "TensorFlow"}
FIELDS = ("cold_s", "first_ms", "warm_1_ms", "warm_8_ms", "peak_rss_mb")
TIMEOUT_SECONDS = 600


def stack_python(stack: str) -> str:
    """Each stack on its own venv, as section 17 runs them: the function and LiteRT alone on the Lambda runtime's
    (requirements.txt only), ONNX Runtime and TensorFlow on their baselines' (bench/setup.sh prepares them)."""
    if stack in ("function", "litert"):
        return str(venvs.litert_venv().python)
    return str(venvs.baseline_venv(stack).python)


def run_worker(stack: str, model: str, threads: str) -> dict:
    env = {"PYTHONPATH": str(REPO_ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "OPENBLAS_NUM_THREADS": "1", "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = subprocess.run([stack_python(stack), "-m", "bench.big_worker", stack, model, threads, repr(time.time())],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
    if done.returncode != 0:
        raise RuntimeError(f"{stack} {model} {threads}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def onnx_problems(models: tuple[str, ...]) -> dict[str, str]:
    """model -> why it has no ONNX conversion (tf2onnx failed or was killed), for the models that have none."""
    problems = {}
    for model in models:
        try:
            big_models.build_onnx(model)
        except subprocess.CalledProcessError as error:
            problems[model] = f"tf2onnx exited with {error.returncode}"
        except MemoryError as error:
            problems[model] = str(error)
    return problems


def measure(rounds: int, models: tuple[str, ...], skipped: dict[str, str]) -> dict:
    """(model, stack, threads) -> field -> the samples over the rounds; ONNX Runtime not on the models in
    `skipped` (model -> why)."""
    samples: dict = {}
    for index in range(rounds):
        for model in models:
            shift = index % len(CONFIGURATIONS)
            for stack, threads in CONFIGURATIONS[shift:] + CONFIGURATIONS[:shift]:
                if stack == "onnxruntime" and model in skipped:
                    continue
                print(f"==> round {index + 1}/{rounds}: {model} {stack} {threads}", file=sys.stderr, flush=True)
                result = run_worker(stack, model, threads)
                for name in FIELDS:
                    samples.setdefault((model, stack, threads), {}).setdefault(name, []).append(result[name])
    return samples


def median_of(samples: dict, model: str, stack: str, threads: str) -> dict:
    return {name: statistics.median(values) for name, values in samples[(model, stack, threads)].items()}


def model_table(samples: dict, model: str, gflop: float) -> str:
    """gflop: one instance's matrix work (big_models.gflop_per_instance), for each stack's compute rate."""
    rows = []
    for stack, threads in CONFIGURATIONS:
        if (model, stack, threads) not in samples:
            rows.append([f"{LABELS[stack]}, {threads} thread{'s' if threads != '1' else ''}", "not measured", "",
                         "", "", "", "", "", ""])
            continue
        cell = median_of(samples, model, stack, threads)
        alone = median_of(samples, model, "litert", threads if threads != "default" else "1")
        rows.append([f"{LABELS[stack]}, {threads} thread{'s' if threads != '1' else ''}", f"{cell['cold_s']:.2f}",
                     f"{cell['first_ms']:.0f}", f"{cell['warm_1_ms']:.1f}", f"{cell['warm_8_ms']:.0f}",
                     f"{cell['peak_rss_mb']:.0f}", f"{cell['first_ms'] / cell['warm_1_ms']:.2f}x",
                     f"{cell['warm_1_ms'] / alone['warm_1_ms']:.2f}x", f"{gflop / cell['warm_1_ms'] * 1e3:.0f}"])
    return table(["stack", "cold, s", "first call, ms", "warm batch 1, ms", "warm batch 8, ms", "peak RSS, MB",
                  "first / warm", "warm 1 / LiteRT alone's", "GFLOP/s, warm batch 1"], rows)


def spread(samples: dict, key: tuple, name: str, style: str) -> str:
    """The median and, in brackets, the range over the rounds: two stacks whose ranges overlap are a tie."""
    values = samples[key][name]
    return f"{statistics.median(values):{style}} ({min(values):{style}}-{max(values):{style}})"


def verdicts(samples: dict, models: tuple[str, ...] = big_models.MODELS) -> list[str]:
    found = []
    if "resnet50" in models:
        resnet = {threads: median_of(samples, "resnet50", "function", threads) for threads in ("1", "2")}
        speedup = resnet["2"]["warm_1_ms"] / resnet["1"]["warm_1_ms"]
        found.append(verdict(speedup <= 0.65, f"ResNet50 float32 warm batch 1, 2 threads over 1: {speedup:.2f}x "
                             "(target <= 0.65x)"))
    for model in models:
        for threads in ("1", "2"):
            function = median_of(samples, model, "function", threads)
            alone = median_of(samples, model, "litert", threads)
            over = function["warm_1_ms"] / alone["warm_1_ms"]
            found.append(verdict(over <= 1.05, f"{model} {threads}t: function over LiteRT alone, warm batch 1 "
                                 f"{over:.2f}x (target <= 1.05x)"))
            first = function["first_ms"] / function["warm_1_ms"]
            found.append(verdict(first <= 1.3, f"{model} {threads}t: the function's first call over a warm one "
                                 f"{first:.2f}x (target <= 1.3x)"))
            if (model, "onnxruntime", threads) not in samples:
                found.append(verdict(False, f"{model} {threads}t: ONNX Runtime not measured"))
                continue
            onnx = median_of(samples, model, "onnxruntime", threads)
            ahead = function["warm_1_ms"] < onnx["warm_1_ms"] and function["cold_s"] < onnx["cold_s"]
            found.append(verdict(ahead, f"{model} {threads}t: function ahead of ONNX Runtime, warm "
                                 f"{spread(samples, (model, 'function', threads), 'warm_1_ms', '.1f')} vs "
                                 f"{spread(samples, (model, 'onnxruntime', threads), 'warm_1_ms', '.1f')} ms, cold "
                                 f"{spread(samples, (model, 'function', threads), 'cold_s', '.2f')} vs "
                                 f"{spread(samples, (model, 'onnxruntime', threads), 'cold_s', '.2f')} s"))
    return found


def measured_section(rounds: int, models: tuple[str, ...] = big_models.MODELS) -> SectionResult:
    skipped = onnx_problems(models)
    load_before = os.getloadavg()[0]
    samples = measure(rounds, models, skipped)
    load_after = os.getloadavg()[0]
    markdown = (__doc__.split("\n\n", 1)[1].rsplit("\n\n", 1)[0].strip()
                + f"\n\n{rounds} rounds; 1-minute load average {load_before:.1f} at the start, {load_after:.1f} at "
                f"the end, on {os.cpu_count()} CPUs.\n")
    markdown += "".join(f"\nONNX Runtime on {model} not measured: {why}.\n" for model, why in skipped.items())
    for model in models:
        markdown += f"\n### {model}\n\n" + model_table(samples, model, big_models.gflop_per_instance(model)) + "\n"
    advised = big_model_advice.recommendations(models)  # after the timed runs: its conversions never overlap them
    advice_markdown, advice_verdicts = big_model_advice.advice_part(advised)
    return SectionResult(NUMBER, TITLE, markdown + advice_markdown,
                         verdicts=verdicts(samples, models) + advice_verdicts)


def run(context) -> SectionResult:
    return measured_section(max(1, context.runs))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.big_model_section")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model", action="append", choices=big_models.MODELS, help="only this model (repeatable)")
    args = parser.parse_args()
    result = measured_section(args.rounds, tuple(args.model or big_models.MODELS))
    print(result.markdown + "\n" + "\n".join(f"- {line}" for line in result.verdicts))
