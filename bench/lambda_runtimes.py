"""The configurations as emulated Lambda environments, on the deploy harness (tests/support/lambda_runtime.py).

(a) is the image's task root, laid out from the Dockerfile by the harness. (b), (c) and the embedding baseline get
a task root holding only their handler, its request module and the model, and run the harness with their own
venv's Python, keeping the emulator, the Lambda environment and the REPORT parsing.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bench import minilm_onnx, onnx_export, venvs
from bench.paths import BUILD_DIR, REPO_ROOT, SAVED_MODEL_DIR
from tests.support import lambda_runtime
from tests.support.lambda_runtime import LambdaRuntime

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


def _baseline_task_root(name: str, modules: tuple[str, ...], model_source: Path, venv: venvs.Venv) -> Path:
    """bench/baselines' shared files + the handler's modules + the model, byte-compiled like the image's code."""
    task_root = BUILD_DIR / f"task-{name}"
    shutil.rmtree(task_root, ignore_errors=True)
    package = task_root / "bench" / "baselines"
    package.mkdir(parents=True)
    (task_root / "bench" / "__init__.py").write_text("")
    for file in (*BASELINE_FILES, *(f"{module}.py" for module in modules)):
        shutil.copy(REPO_ROOT / "bench" / "baselines" / file, package / file)
    shutil.copytree(model_source, task_root / "model", ignore=shutil.ignore_patterns("*.npz", ".*"))
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
