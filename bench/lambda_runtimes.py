"""The configurations as emulated Lambda environments, on the deploy harness (kit/lambda_runtime.py).

(a) is the image's task root, laid out from the Dockerfile by the harness. (b), (c) and the embedding baseline get
a task root holding only their handler, its request module and the model, and run the harness with their own
venv's Python, keeping the emulator, the Lambda environment and the REPORT parsing.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bench import encoder_onnx, minilm_onnx, onnx_export, venvs
from bench.paths import BUILD_DIR, MODELS_DIR, REPO_ROOT, SAVED_MODEL_DIR
from kit import lambda_runtime
from kit.lambda_runtime import LambdaRuntime

IMAGE_MODEL = "efficientnet_lite0"
BASELINE_FILES = ("__init__.py", "model_files.py")  # every baseline's task root has these, plus its own modules


@dataclass(frozen=True)
class Configuration:
    key: str  # litert | tensorflow | onnxruntime
    label: str
    task_root: Path
    handler: str
    venv: venvs.Venv
    environment: dict[str, str]

    def runtime(self, extra_environment: dict[str, str] | None = None) -> LambdaRuntime:
        environment = {**self.environment, **(extra_environment or {})}
        return LambdaRuntime(self.task_root, self.handler, environment, python=self.venv.python)


# No section changes a task root: each is laid out (and byte-compiled) once per run.
@functools.cache
def function_configuration() -> Configuration:
    """(a): the task root exactly as the image holds it (requirements.txt venv, function/, models/)."""
    venv = venvs.litert_venv()
    task_root = BUILD_DIR / "task-litert"
    shutil.rmtree(task_root, ignore_errors=True)
    lambda_runtime.lay_out_task_root(task_root)
    return Configuration("litert", "(a) function, LiteRT", task_root, "function.app.handler", venv, {})


def _baseline_task_root(name: str, modules: tuple[str, ...], model_source: Path | None, venv: venvs.Venv,
                        bench_modules: tuple[str, ...] = (), manifest_from: Path | None = None,
                        model_dir: str = "model") -> Path:
    """bench/baselines' shared files + the handler's modules (+ bench/ modules it imports) + the model (in
    `model_dir`), and the converted model's manifest.json and tokenizer.json when a peer preprocesses like the floor,
    byte-compiled like the image's code."""
    task_root = BUILD_DIR / f"task-{name}"
    shutil.rmtree(task_root, ignore_errors=True)
    package = task_root / "bench" / "baselines"
    package.mkdir(parents=True)
    (task_root / "bench" / "__init__.py").write_text("")
    for file in (*BASELINE_FILES, *(f"{module}.py" for module in modules)):
        shutil.copy(REPO_ROOT / "bench" / "baselines" / file, package / file)
    for module in bench_modules:
        shutil.copy(REPO_ROOT / "bench" / f"{module}.py", task_root / "bench" / f"{module}.py")
    if model_source is not None:
        shutil.copytree(model_source, task_root / model_dir, ignore=shutil.ignore_patterns("*.npz", ".*"))
    if manifest_from is not None:
        manifest = json.loads((manifest_from / "manifest.json").read_text())
        for file in ("manifest.json", (manifest.get("preprocessing") or {}).get("tokenizer")):
            if file:
                shutil.copy(manifest_from / file, task_root / model_dir / file)
    subprocess.run([str(venv.python), "-m", "compileall", "-q", str(task_root / "bench")], check=True)
    return task_root


@functools.cache
def tensorflow_configuration() -> Configuration:
    """(b): the tutorial way, tensorflow-cpu + tf.saved_model.load of the same SavedModel."""
    venv = venvs.baseline_venv("tensorflow")
    task_root = _baseline_task_root("tensorflow", ("image_request", "tensorflow_handler"),
                                    SAVED_MODEL_DIR / IMAGE_MODEL, venv)
    return Configuration("tensorflow", "(b) TensorFlow baseline", task_root,
                         "bench.baselines.tensorflow_handler.handler", venv,
                         {"BASELINE_MODEL_DIR": str(task_root / "model"), "TF_CPP_MIN_LOG_LEVEL": "2"})


@functools.cache
def onnxruntime_configuration() -> Configuration | str:
    """(c): ONNX Runtime on the tf2onnx conversion, or the converter's error line when it did not convert."""
    exported = onnx_export.export(SAVED_MODEL_DIR / IMAGE_MODEL)
    if exported.directory is None:
        return exported.error
    venv = venvs.baseline_venv("onnxruntime")
    task_root = _baseline_task_root("onnxruntime", ("image_request", "onnx_handler"), exported.directory, venv)
    return Configuration("onnxruntime", "(c) ONNX Runtime baseline", task_root, "bench.baselines.onnx_handler.handler",
                         venv, {"BASELINE_MODEL_DIR": str(task_root / "model")})


@functools.cache
def onnx_embedding_configuration() -> Configuration:
    """The /embed baseline: ONNX Runtime + tokenizers on all-MiniLM-L6-v2 built by bench/minilm_onnx.py."""
    exported = minilm_onnx.export()
    venv = venvs.baseline_venv("onnxruntime-tokenizers")
    task_root = _baseline_task_root("onnxruntime-tokenizers", ("text_request", "onnx_embed_handler"), exported, venv)
    return Configuration("onnxruntime-tokenizers", "ONNX Runtime + tokenizers", task_root,
                         "bench.baselines.onnx_embed_handler.handler", venv,
                         {"BASELINE_MODEL_DIR": str(task_root / "model")})


@functools.cache
def floor_configuration(model: str) -> Configuration:
    """The floor of a route on `model`: bench/baselines/floor_handler.py (the libraries alone) in the function's
    own venv, on the converted model directory the function serves."""
    venv = venvs.litert_venv()
    task_root = _baseline_task_root(f"floor-{model}", ("route_answers", "floor_handler"), MODELS_DIR / model, venv,
                                    bench_modules=("raw_pipeline",))
    return Configuration("floor", "floor (libraries alone)", task_root, "bench.baselines.floor_handler.handler", venv,
                         {"BASELINE_MODEL_DIR": str(task_root / "model")})


@functools.cache
def onnx_route_configuration(model: str) -> Configuration | str:
    """ONNX Runtime on `model` (tf2onnx of its SavedModel; bench/minilm_onnx.py for minilm) with the floor's
    preprocessing, or the converter's error line. Text models get the tokenizers venv, the others the image one."""
    if model == "minilm":
        exported = minilm_onnx.export()
    else:
        conversion = onnx_export.export(SAVED_MODEL_DIR / model)
        if conversion.directory is None:
            return conversion.error
        exported = conversion.directory
    manifest = json.loads((MODELS_DIR / model / "manifest.json").read_text())
    is_text = (manifest.get("preprocessing") or {}).get("type") == "text"
    venv = venvs.baseline_venv("onnxruntime-tokenizers" if is_text else "onnxruntime")
    task_root = _baseline_task_root(f"onnx-{model}", ("route_answers", "onnx_route_handler"), exported, venv,
                                    bench_modules=("raw_pipeline",), manifest_from=MODELS_DIR / model)
    return Configuration("onnxruntime", "ONNX Runtime", task_root, "bench.baselines.onnx_route_handler.handler", venv,
                         {"BASELINE_MODEL_DIR": str(task_root / "model")})


@functools.cache
def sentence_transformers_configuration() -> Configuration:
    """The seed-era embedding stack: PyTorch + sentence-transformers on the same weights, from its own venv."""
    venv = venvs.baseline_venv("sentence-transformers")
    task_root = _baseline_task_root("sentence-transformers", ("route_answers", "sentence_transformers_handler"),
                                    None, venv)
    return Configuration("sentence-transformers", "sentence-transformers (PyTorch)", task_root,
                         "bench.baselines.sentence_transformers_handler.handler", venv, {})


# A sentence-transformers model a user brings (bench/byo_encoder.py): its directory and its conversion, each stack
# on that one model. Laid out once per run, like the others.
@functools.cache
def encoder_function_configuration(converted: Path) -> Configuration:
    """The image's task root with the converted model alone in models/: a user's image holding their own model."""
    venv = venvs.litert_venv()
    task_root = BUILD_DIR / f"task-litert-{converted.name}"
    shutil.rmtree(task_root, ignore_errors=True)
    lambda_runtime.lay_out_task_root(task_root)
    shutil.rmtree(task_root / "models")
    shutil.copytree(converted, task_root / "models" / converted.name, ignore=shutil.ignore_patterns("*.npz", ".*"))
    return Configuration("litert", "function, LiteRT", task_root, "function.app.handler", venv, {})


@functools.cache
def encoder_onnx_configuration(source: Path, converted: Path) -> Configuration:
    """ONNX Runtime + tokenizers on the directory's own graph (bench/encoder_onnx.py), with the floor's
    preprocessing (the converted model's tokenizer.json and manifest.json)."""
    exported = encoder_onnx.cached_export(source)
    venv = venvs.baseline_venv("onnxruntime-tokenizers")
    task_root = _baseline_task_root(f"onnx-{converted.name}", ("route_answers", "onnx_route_handler"), exported, venv,
                                    bench_modules=("raw_pipeline",), manifest_from=converted)
    return Configuration("onnxruntime", "ONNX Runtime + tokenizers", task_root,
                         "bench.baselines.onnx_route_handler.handler", venv,
                         {"BASELINE_MODEL_DIR": str(task_root / "model")})


@functools.cache
def encoder_sentence_transformers_configuration(source: Path) -> Configuration:
    """sentence-transformers on PyTorch loading the directory itself, from its own venv."""
    venv = venvs.baseline_venv("sentence-transformers")
    task_root = _baseline_task_root(f"sentence-transformers-{source.name}",
                                    ("route_answers", "sentence_transformers_handler"), source, venv,
                                    model_dir=source.name)
    return Configuration("sentence-transformers", "sentence-transformers (PyTorch)", task_root,
                         "bench.baselines.sentence_transformers_handler.handler", venv,
                         {"BASELINE_MODEL_DIR": str(task_root / source.name)})
