"""The two big models of bench section 18, random weights (timing needs no training), built with TensorFlow and
converted with the project's own `python -m convert` (float32, no sidecar: served as task tensor, the fidelity gate
on generated inputs). Reused while RECIPES holds the same version.

- resnet50: keras.applications.ResNet50(weights=None), 224x224x3 float input, 25.6 M parameters.
- bert_base: a BERT-base-sized encoder, 12 layers x 768 (12 heads, 3,072 wide feed-forward, 30,522 token ids,
  128 tokens), int32 token ids in, the mean of the last hidden states out: 109 M parameters.

`python -m bench.big_models` builds both, and their ONNX conversions (section 18 builds what is missing itself).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.paths import BUILD_DIR, REPO_ROOT

BIG_DIR = BUILD_DIR / "big-models"
MODELS = ("resnet50", "bert_base")
SEQUENCE = 128
VOCAB, HIDDEN, LAYERS, HEADS, INTERMEDIATE = 30_522, 768, 12, 12, 3_072
CONVERT_RSS_LIMIT_MB = 6_000


def _keras_model(name: str):
    import keras  # noqa: PLC0415

    keras.utils.set_random_seed(0)
    if name == "resnet50":
        return keras.applications.ResNet50(weights=None, input_shape=(224, 224, 3), classes=1000)
    ids = keras.Input((SEQUENCE,), dtype="int32", name="ids")
    positions = keras.ops.arange(SEQUENCE)
    words = keras.layers.Embedding(VOCAB, HIDDEN)(ids)
    position_table = keras.layers.Embedding(SEQUENCE, HIDDEN)(positions)  # a constant: no layer of the model holds it
    hidden = words + position_table
    hidden = keras.layers.LayerNormalization(epsilon=1e-12)(hidden)
    for _ in range(LAYERS):
        attended = keras.layers.MultiHeadAttention(HEADS, HIDDEN // HEADS)(hidden, hidden)
        hidden = keras.layers.LayerNormalization(epsilon=1e-12)(hidden + attended)
        expanded = keras.layers.Dense(INTERMEDIATE, activation="gelu")(hidden)
        hidden = keras.layers.LayerNormalization(epsilon=1e-12)(hidden + keras.layers.Dense(HIDDEN)(expanded))
    pooled = keras.layers.GlobalAveragePooling1D(name="pooled")(hidden)
    model = keras.Model(ids, pooled, name="bert_base")
    model.position_table = keras.ops.convert_to_numpy(position_table)  # for bench/bert_onnx.py
    return model


def export(name: str, out: Path) -> None:
    """The Keras model's SavedModel (model.export: tf.saved_model.save converts to a weightless model)."""
    _keras_model(name).export(str(out), verbose=False)


RECIPES = {"resnet50": 1, "bert_base": 2}  # a model's recipe version: raise it when its builder changes


def stamp(name: str) -> str:
    return f"{name} recipe {RECIPES[name]}"


def saved_model_dir(name: str) -> Path:
    return BIG_DIR / f"{name}-savedmodel"


def model_dir(name: str) -> Path:
    """The converted model, alone in its parent (the MODEL_DIR the function serves it from)."""
    return BIG_DIR / f"{name}-served" / name


def onnx_file(name: str) -> Path:
    return BIG_DIR / f"{name}.onnx"


def build(name: str) -> Path:
    """BIG_DIR/<name>: the converted model directory (float32), rebuilt when its recipe version changes."""
    out, saved, stamp_file = model_dir(name), saved_model_dir(name), BIG_DIR / f"{name}.stamp"
    if stamp_file.exists() and stamp_file.read_text() == stamp(name) and (out / "manifest.json").exists():
        return out
    print(f"==> building {name} (random weights) and converting it with python -m convert", file=sys.stderr,
          flush=True)
    shutil.rmtree(saved, ignore_errors=True)
    BIG_DIR.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-c", f"from bench.big_models import export; from pathlib import Path; "
                    f"export({name!r}, Path({str(saved)!r}))"], cwd=REPO_ROOT, check=True)
    subprocess.run([sys.executable, "-m", "convert", "--quantization", "float32", "--name", name, str(saved),
                    str(out)], cwd=REPO_ROOT, check=True, stdout=subprocess.DEVNULL)
    stamp_file.write_text(stamp(name))
    return out


def capped(command: list[str]) -> None:
    """Runs `command`, killed when its RSS passes CONVERT_RSS_LIMIT_MB (tf2onnx took 11 GB on the BERT-base-sized
    encoder, and on a shared machine the kernel's OOM killer may pick another process than the culprit)."""
    process = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while process.poll() is None:
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
            rss_mb = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))) / 1024
        except (OSError, StopIteration):
            rss_mb = 0
        if rss_mb > CONVERT_RSS_LIMIT_MB:
            process.kill()
            process.wait()
            raise MemoryError(f"tf2onnx passed {CONVERT_RSS_LIMIT_MB} MB of RSS and was stopped")
        time.sleep(0.5)
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, command)


def build_onnx(name: str) -> Path:
    """The same model in ONNX, for the ONNX Runtime stack: ResNet50's SavedModel converted by tf2onnx
    (requirements-bench.txt); the BERT-base-sized encoder's graph written by bench/bert_onnx.py."""
    build(name)
    out = onnx_file(name)
    if not out.exists() or out.stat().st_mtime < (BIG_DIR / f"{name}.stamp").stat().st_mtime:
        print(f"==> converting {name} to ONNX with tf2onnx", file=sys.stderr, flush=True)
        partial = out.with_suffix(".partial.onnx")
        if name == "bert_base":  # tf2onnx took 11 GB on it: written from its Keras weights, checked against TFLite
            subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; from bench import bert_onnx; "
                            "bert_onnx.write(Path(sys.argv[1])); bert_onnx.check(Path(sys.argv[1]))", str(partial)],
                           cwd=REPO_ROOT, check=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
            partial.rename(out)
            return out
        capped([sys.executable, "-m", "tf2onnx.convert", "--saved-model", str(saved_model_dir(name)),
                "--signature_def", "serving_default", "--opset", "17", "--output", str(partial)])
        partial.rename(out)
    return out


MATRIX_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL")


def gflop_per_instance(name: str) -> float:
    """One instance's matrix work in the served model of `name`: what the warm times are divided by to compare
    stacks by compute rate."""
    return count_gflop(model_dir(name) / "model.tflite")


def count_gflop(model_file: Path) -> float:
    """The floating-point operations of one instance's convolutions and matrix products (a multiply-add is two), read
    from the model's tensor shapes after one batch-1 run."""
    import numpy as np  # noqa: PLC0415
    from ai_edge_litert.interpreter import Interpreter, OpResolverType  # noqa: PLC0415

    interpreter = Interpreter(model_path=str(model_file),
                              experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interpreter.allocate_tensors()  # no delegate: nothing packed
    for tensor in interpreter.get_input_details():
        interpreter.set_tensor(tensor["index"], np.zeros(tensor["shape"], tensor["dtype"]))
    interpreter.invoke()  # once: shapes computed at run time (BERT's reshapes) become known

    def shape(index: int) -> list[int]:
        return [int(size) for size in interpreter._get_tensor_details(index, 0)["shape"]]

    multiply_adds = 0
    for op in interpreter._get_ops_details():
        if op["op_name"] not in MATRIX_OPS:
            continue
        outputs = int(np.prod(shape(op["outputs"][0])))
        if op["op_name"] == "CONV_2D":  # weights [out, height, width, in]
            multiply_adds += outputs * int(np.prod(shape(op["inputs"][1])[1:]))
        elif op["op_name"] == "DEPTHWISE_CONV_2D":  # weights [1, height, width, channels]
            multiply_adds += outputs * int(np.prod(shape(op["inputs"][1])[1:3]))
        else:  # FULLY_CONNECTED, BATCH_MATMUL: each output sums over the first input's last axis
            multiply_adds += outputs * shape(op["inputs"][0])[-1]
    return 2 * multiply_adds / 1e9


if __name__ == "__main__":
    for requested in sys.argv[1:] or MODELS:
        print(build(requested), build_onnx(requested))
