"""One fresh process of bench section 18: one stack serving one big model at one thread count, from its first import
to its first answer (cold), then warm batches of 1 and 8. Prints one JSON line.

`python -m bench.big_worker STACK MODEL THREADS STARTED`: STACK function | litert | onnxruntime | tensorflow,
THREADS a number or `default` (the runtime's own choice), STARTED the parent's time.time() when it spawned this.

- function: `import function.app` with MODEL_DIR holding only this model and MODEL_THREADS=THREADS (so the init
  loads it and packs its weights), then its ModelRunner (the route's JSON is not part of this: a 224x224x3 float
  image is ~1.5 MB of it);
- litert: LiteRT's Interpreter and signature runner alone, num_threads=THREADS;
- onnxruntime: an InferenceSession of the tf2onnx conversion, intra_op_num_threads=THREADS (0 = default);
- tensorflow: tf.saved_model.load of the SavedModel, intra- and inter-op threads = THREADS.
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import sys
import time

WARM_1 = 10  # timed batch-1 calls
WARM_8 = 4  # timed batch-8 calls, after one untimed (the resize)


def inputs(model: str, batch: int):
    import numpy as np  # noqa: PLC0415

    rng = np.random.default_rng(batch)
    if model == "resnet50":
        return rng.uniform(-1, 1, (batch, 224, 224, 3)).astype(np.float32)
    return rng.integers(1, 30_000, (batch, 128)).astype(np.int32)


def make_call(stack: str, model: str, threads: str):
    """The stack's predict function: array in, first output out."""
    from bench import big_models  # noqa: PLC0415 (no TensorFlow: only paths)

    count = 0 if threads == "default" else int(threads)
    if stack == "function":
        os.environ.update(MODEL_DIR=str(big_models.model_dir(model).parent), RESULTS_CACHE="off",
                          LOG_LEVEL="WARNING", MODEL_THREADS=threads)
        import function.app  # noqa: PLC0415

        runner = function.app.SERVICE.registry.task(model).runner()
        role = runner.manifest.inputs[0].role
        return lambda array: next(iter(runner.run({role: array}).values()))
    if stack == "litert":
        from ai_edge_litert.interpreter import Interpreter  # noqa: PLC0415

        from function.model.manifest import load_manifest  # noqa: PLC0415

        manifest = load_manifest(big_models.model_dir(model))
        signature = Interpreter(model_path=str(manifest.model_file), num_threads=count or None).get_signature_runner(
            manifest.signature)
        name, output = manifest.inputs[0].name, manifest.outputs[0].name
        return lambda array: signature(**{name: array})[output]
    if stack == "onnxruntime":
        import onnxruntime  # noqa: PLC0415

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = count
        session = onnxruntime.InferenceSession(str(big_models.onnx_file(model)), options,
                                               providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name
        return lambda array: session.run(None, {name: array})[0]
    import tensorflow as tf  # noqa: PLC0415

    if count:
        tf.config.threading.set_intra_op_parallelism_threads(count)
        tf.config.threading.set_inter_op_parallelism_threads(count)
    serve = tf.saved_model.load(str(big_models.saved_model_dir(model))).signatures["serving_default"]
    name = next(iter(serve.structured_input_signature[1]))
    return lambda array: next(iter(serve(**{name: tf.constant(array)}).values())).numpy()


def main(stack: str, model: str, threads: str, started: float) -> dict:
    one, eight = inputs(model, 1), inputs(model, 8)
    call = make_call(stack, model, threads)
    first_started = time.perf_counter()
    call(one)
    first_ms = (time.perf_counter() - first_started) * 1e3
    cold_s = time.time() - started
    warm_1 = []
    for _ in range(WARM_1):
        begun = time.perf_counter()
        call(one)
        warm_1.append((time.perf_counter() - begun) * 1e3)
    call(eight)
    warm_8 = []
    for _ in range(WARM_8):
        begun = time.perf_counter()
        call(eight)
        warm_8.append((time.perf_counter() - begun) * 1e3)
    return {"cold_s": cold_s, "first_ms": first_ms, "warm_1_ms": statistics.median(warm_1),
            "warm_8_ms": statistics.median(warm_8),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]))))
