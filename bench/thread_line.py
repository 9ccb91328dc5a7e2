"""Where a second interpreter thread starts to pay: each model at 1 and 2 threads, side by side in one process.

`python -m bench.thread_line [--rounds N]`: per model, two ModelRunners of the same model (num_threads 1 and 2),
warmed, then N rounds of timed calls that alternate between them (the order flips each round), batch 1. Prints the
median wall time of each and two ratios, 2 threads over 1: wall time (what a request waits; on a loaded machine the
second thread rarely finds a free core) and process CPU time (what the second thread costs in all, which the load
does not change: near 1.0x the model splits its work cleanly, well above it the second thread mostly waits).
The figures in docs/deploy.md, "Memory and threads", are its output. The big models come from bench/big_models.py
when built (`python -m bench.big_models`), the demo models from models/; `--model DIR` measures your own instead
(a dynamic sequence dimension at 128 tokens).
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

from bench import big_models
from bench.paths import MODELS_DIR
from function.model.manifest import Manifest, load_manifest
from function.model.runner import ModelRunner

# (label, model directory, tokens for a dynamic sequence dimension)
CASES = [("resnet50", big_models.model_dir("resnet50"), 0),
         ("bert_base, 128 tokens", big_models.model_dir("bert_base"), 0),
         ("efficientnet_lite0", MODELS_DIR / "efficientnet_lite0", 0),
         ("minilm, 128 tokens", MODELS_DIR / "minilm", 128), ("minilm, 16 tokens", MODELS_DIR / "minilm", 16),
         ("sentiment", MODELS_DIR / "sentiment", 0), ("digits", MODELS_DIR / "digits", 0),
         ("tabular", MODELS_DIR / "tabular", 0)]
ROUND_SECONDS = 0.2  # each timed stretch repeats the call to last about this long


def batch_of_one(manifest: Manifest, tokens: int) -> dict[str, np.ndarray]:
    rng, inputs = np.random.default_rng(0), {}
    for spec in manifest.inputs:
        shape = [1] + [tokens if size < 0 else size for size in spec.shape[1:]]
        inputs[spec.role] = (rng.uniform(-1, 1, shape).astype(np.float32) if np.dtype(spec.dtype).kind == "f"
                             else rng.integers(1, 1000, shape).astype(np.int32))
    return inputs


def compare(manifest: Manifest, inputs: dict, rounds: int) -> dict[str, float]:
    runners = {1: ModelRunner(manifest, 1), 2: ModelRunner(manifest, 2)}
    for runner in runners.values():
        runner.run(inputs)
    started = time.perf_counter()
    runners[1].run(inputs)
    repeats = max(1, int(ROUND_SECONDS / max(1e-4, time.perf_counter() - started)))
    wall: dict[int, list[float]] = {1: [], 2: []}
    cpu: dict[int, list[float]] = {1: [], 2: []}
    for index in range(rounds):
        for threads in ((1, 2) if index % 2 == 0 else (2, 1)):
            began, began_cpu = time.perf_counter(), time.process_time()
            for _ in range(repeats):
                runners[threads].run(inputs)
            wall[threads].append((time.perf_counter() - began) / repeats * 1e3)
            cpu[threads].append((time.process_time() - began_cpu) / repeats * 1e3)
    one, two = statistics.median(wall[1]), statistics.median(wall[2])
    return {"1t_ms": one, "2t_ms": two, "wall": two / one,
            "cpu": statistics.median(cpu[2]) / statistics.median(cpu[1])}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.thread_line", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--model", action="append", type=Path, metavar="DIR",
                        help="a converted model directory to measure instead of the usual ones (repeatable)")
    args = parser.parse_args()
    rounds = args.rounds
    cases = [(str(directory), directory, 128) for directory in args.model] if args.model else CASES
    print(f"1-minute load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {rounds} rounds")
    for label, directory, tokens in cases:
        if not (directory / "manifest.json").exists():
            print(f"{label}: not built")
            continue
        manifest = load_manifest(directory)
        found = compare(manifest, batch_of_one(manifest, tokens), rounds)
        size = manifest.model_file.stat().st_size
        print(f"{label} ({size / 1e6:.1f} MB" if size >= 1e6 else f"{label} ({size / 1e3:.0f} KB", end="")
        print(f"): 1 thread {found['1t_ms']:.2f} ms, 2 threads {found['2t_ms']:.2f} ms; "
              f"2 threads / 1: wall {found['wall']:.2f}x, CPU time {found['cpu']:.2f}x", flush=True)
    print(f"1-minute load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
