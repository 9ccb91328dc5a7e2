"""Padding each batch to its own longest text vs always to the model's 256 tokens, for the served minilm model.

`python -m bench.embed_padding`: the same texts through the same task, its one tokenizer and interpreter, the two
paddings alternating run by run (10 runs, median ms), for one short sentence and a batch of 32 mixed-length
sentences. It prints the table; the vectors of both paddings are checked equal (the mask hides the padding).
"""
from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from bench.paths import MODELS_DIR
from function.catalog.registry import ModelRegistry
from saved_model.recipes import paraphrase_set

RUNS = 10


def run(task, texts: list[str], fixed: bool) -> tuple[float, np.ndarray]:
    encoder = task.encoder()
    start = time.perf_counter()
    tensors = encoder.batch(encoder.encode(texts), fixed_length=fixed)
    vectors = task.runner().run(tensors)["embedding"]
    return (time.perf_counter() - start) * 1000.0, vectors


def main() -> int:
    task = ModelRegistry(MODELS_DIR).task("minilm")
    sentences = paraphrase_set.texts(paraphrase_set.load())
    cases = {"1 short sentence": sentences[:1], "32 sentences of mixed length": sentences[:32]}
    print("| texts | padded to the batch's longest | padded to 256 | ratio |\n|---|---|---|---|")
    for label, texts in cases.items():
        longest, fixed = [], []
        for _ in range(RUNS):
            ms, short_vectors = run(task, texts, fixed=False)
            longest.append(ms)
            ms, long_vectors = run(task, texts, fixed=True)
            fixed.append(ms)
        assert np.allclose(short_vectors, long_vectors, atol=1e-3), "padding changed the vectors"
        a, b = statistics.median(longest), statistics.median(fixed)
        print(f"| {label} | {a:.1f} ms | {b:.1f} ms | {b / a:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
