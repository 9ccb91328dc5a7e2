"""One batch padded to its longest text vs the same batch in groups of similar length, for the served minilm model.

`python -m bench.embed_groups`: the 32 mixed-length sentences of the embedding sections (3-128 tokens) through the
function's own task, tokenizer and interpreter: the whole batch padded to its longest text in one call, against
`TextEmbedding.invoke` sorting it into groups of N texts each padded to its own longest (N = 4, 8, 16), every
variant once per run in turn (5 runs, median ms). It prints the table; every variant's vectors are checked
against the one-batch ones (the mask hides the padding, so they agree to float rounding).
"""
from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from bench import inputs
from bench.paths import MODELS_DIR
from function.catalog.registry import ModelRegistry
from function.tasks import text_embedding

RUNS = 5
GROUP_SIZES = (4, 8, 16)


def timed(call) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    vectors = call()["embedding"]
    return (time.perf_counter() - start) * 1000.0, vectors


def main() -> int:
    task = ModelRegistry(MODELS_DIR).task(inputs.EMBEDDING_MODEL)
    encoder = task.encoder()
    tensors = encoder.batch(encoder.encode(list(inputs.embed_batch_texts())), fixed_length=False)
    served = text_embedding.GROUP_ROWS
    variants = {"one batch, padded to the longest": lambda: task.runner().run(tensors)}

    def grouped(size: int):
        def call():
            text_embedding.GROUP_ROWS = size
            try:
                return task.invoke(tensors)
            finally:
                text_embedding.GROUP_ROWS = served
        return call

    variants.update({f"groups of {size}" + (" (served)" if size == served else ""): grouped(size)
                     for size in GROUP_SIZES})
    times: dict[str, list[float]] = {name: [] for name in variants}
    expected = variants["one batch, padded to the longest"]()["embedding"]
    for _ in range(RUNS + 1):  # the first run of each is discarded: it sizes the interpreter for each shape
        for name, call in variants.items():
            ms, vectors = timed(call)
            times[name].append(ms)
            assert np.allclose(vectors, expected, atol=1e-4), f"{name} changed the vectors"
    base = statistics.median(times["one batch, padded to the longest"][1:])
    print("| 32 texts of 3-128 tokens | median ms | vs one batch |\n|---|---|---|")
    for name, samples in times.items():
        ms = statistics.median(samples[1:])
        print(f"| {name} | {ms:.0f} | {base / ms:.1f}x faster |" if name != "one batch, padded to the longest"
              else f"| {name} | {ms:.0f} | 1.0x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
