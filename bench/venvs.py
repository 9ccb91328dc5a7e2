"""The isolated venvs each configuration runs in, built under build/bench/ and reused while their inputs match.

The LiteRT venv is the deploy harness's (tools/prepare-lambda-runtime.sh: requirements.txt alone). The baselines
get the same interpreter and the same runtime client, so only the inference stack differs between them.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.paths import BUILD_DIR, REPO_ROOT

LAMBDA_RUNTIME_DIR = REPO_ROOT / "build" / "lambda-runtime"
LITERT_VENV = LAMBDA_RUNTIME_DIR / "venv"
BASELINES_DIR = REPO_ROOT / "bench" / "baselines"
PREPARE_LAMBDA_RUNTIME = REPO_ROOT / "tools" / "prepare-lambda-runtime.sh"
# What the Lambda python base image ships beside the function; kept equal to tools/prepare-lambda-runtime.sh.
BASE_IMAGE_PACKAGES = ("awslambdaric==4.2.2", "simplejson==4.3.0", "snapshot-restore-py==1.0.0")


@dataclass(frozen=True)
class Venv:
    name: str
    path: Path

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def site_packages(self) -> Path:
        found = sorted(self.path.glob("lib/python3*/site-packages"))
        if not found:
            raise FileNotFoundError(f"no site-packages under {self.path}")
        return found[0]


@functools.cache  # the prepare script is idempotent but not free: once per run is enough
def litert_venv() -> Venv:
    """The requirements.txt-only venv of the deploy harness, prepared by its own script when missing or stale."""
    subprocess.run(["bash", str(PREPARE_LAMBDA_RUNTIME)], check=True, cwd=REPO_ROOT)
    return Venv("litert", LITERT_VENV)


@functools.cache
def lambda_interpreter() -> Path:
    """The base interpreter behind the LiteRT venv, so every baseline runs on the very same Python."""
    out = subprocess.run(
        [str(litert_venv().python), "-c", "import sys; print(sys._base_executable)"],
        check=True, capture_output=True, text=True,
    )
    return Path(out.stdout.strip())


# A stack whose wheels need another Python than the Lambda one: torch's CPU wheel is cp311 here.
DEV_PYTHON_STACKS = frozenset({"sentence-transformers"})


def baseline_venv(name: str) -> Venv:
    """build/bench/venv-<name> from bench/baselines/requirements-<name>.txt + the base image's runtime client, on
    the Lambda venv's Python (the dev venv's for DEV_PYTHON_STACKS)."""
    requirements = BASELINES_DIR / f"requirements-{name}.txt"
    venv = Venv(name, BUILD_DIR / f"venv-{name}")
    interpreter = Path(sys._base_executable) if name in DEV_PYTHON_STACKS else lambda_interpreter()
    version = subprocess.run([str(interpreter), "-VV"], check=True, capture_output=True, text=True).stdout
    stamp = hashlib.sha256(
        (requirements.read_text() + "\n".join(BASE_IMAGE_PACKAGES) + version).encode()
    ).hexdigest()
    stamp_file = venv.path / ".stamp"
    if stamp_file.exists() and stamp_file.read_text().strip() == stamp:
        return venv
    print(f"==> building the {name} baseline venv ({version.split()[1]}) under {venv.path.relative_to(REPO_ROOT)}",
          file=sys.stderr, flush=True)
    shutil.rmtree(venv.path, ignore_errors=True)
    subprocess.run([str(interpreter), "-m", "venv", str(venv.path)], check=True)
    subprocess.run(
        [str(venv.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-r", str(requirements), *BASE_IMAGE_PACKAGES],
        check=True,
    )
    stamp_file.write_text(stamp + "\n")
    return venv


if __name__ == "__main__":
    # `python -m bench.venvs tensorflow onnxruntime` prepares venvs ahead of a run (bench/setup.sh does this).
    for requested in sys.argv[1:]:
        built = litert_venv() if requested == "litert" else baseline_venv(requested)
        print(f"{built.name}: {built.path.relative_to(REPO_ROOT)}")
