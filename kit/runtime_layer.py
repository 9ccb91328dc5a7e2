"""The image's dependency layer, built without Docker, and the pruned runtime venv the e2e tests run.

- `prune_tool()`: tools/prune_runtime.py itself (the Dockerfile's and tools/prepare-lambda-runtime.sh's pruner).
- `install_layer(target, arch)`: what the Dockerfile's install RUN leaves in /var/task: `pip install --no-deps
  --target` of requirements.txt's manylinux cp312 wheels for arch (cached under build/lambda-runtime/wheels/ by
  tools/download-wheels.sh), by a CPython 3.12 pip as in the base image, then the prune.
- `recording_venv(target)`: the pruned runtime venv with its pruned files put back (hard links where it can), so a
  test can record whether anything opens them.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from kit.lambda_runtime import RUNTIME_DIR, RUNTIME_PYTHON
from kit.script_module import load_script

REPO_ROOT = Path(__file__).resolve().parents[1]
PRUNE_LIST = REPO_ROOT / "runtime-prune.txt"
PRUNE_TOOL = REPO_ROOT / "tools" / "prune_runtime.py"
PRUNED_STORE = RUNTIME_DIR / "pruned"  # what tools/prepare-lambda-runtime.sh dropped from the venv, same layout
WHEELS = RUNTIME_DIR / "wheels"
# pip's tags for Lambda's manylinux (tools/download-wheels.sh lists the same: all are needed).
MANYLINUX_TAGS = ("manylinux_2_28", "manylinux_2_27", "manylinux_2_17", "manylinux2014")
# The runtime client and what the Lambda base image ships beside it: in the venv, not in the image's own layer.
BASE_IMAGE_DISTRIBUTIONS = ("awslambdaric", "simplejson", "snapshot_restore_py", "pip")


@functools.cache
def prune_tool():
    return load_script(PRUNE_TOOL)


def site_packages(venv: Path) -> Path:
    (site,) = Path(venv).glob("lib/python3.*/site-packages")
    return site


def wheels_dir(arch: str, python: str = "3.12") -> Path:
    return WHEELS / f"{arch}-cp{python.replace('.', '')}"


def install_layer(target: Path, arch: str = "x86_64", prune: bool = True) -> Path:
    """The Dockerfile's install step for `arch`, offline; returns target (the stand-in for /var/task)."""
    wheels = wheels_dir(arch)
    assert any(wheels.glob("*.whl")), f"no wheels in {wheels}: run `bash tools/install-test-deps.sh`"
    platforms = [word for tag in MANYLINUX_TAGS for word in ("--platform", f"{tag}_{arch}")]
    subprocess.run([str(RUNTIME_PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", "--no-index", "--find-links", str(wheels), "--only-binary=:all:",
                    "--implementation", "cp", "--python-version", "3.12", *platforms,
                    "--target", str(target), "-r", str(REPO_ROOT / "requirements.txt")],
                   check=True, capture_output=True, text=True, timeout=300)
    if prune:
        tool = prune_tool()
        tool.prune(target, tool.read_patterns(PRUNE_LIST))
    return target


def _link_or_copy(source: str, destination: str) -> None:
    try:
        os.link(source, destination)
    except OSError:  # another filesystem
        shutil.copy2(source, destination)


def recording_venv(target: Path) -> Path:
    """A copy of the pruned runtime venv with everything pruned put back; returns its python."""
    venv = RUNTIME_PYTHON.parent.parent
    assert PRUNED_STORE.is_dir(), f"{PRUNED_STORE} is missing: run `bash tools/prepare-lambda-runtime.sh`"
    shutil.copytree(venv, target, symlinks=True, copy_function=_link_or_copy)
    shutil.copytree(PRUNED_STORE, site_packages(target), symlinks=True, copy_function=_link_or_copy,
                    dirs_exist_ok=True)
    return target / "bin" / "python"
