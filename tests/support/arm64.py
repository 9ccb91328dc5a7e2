"""The function on Graviton (arm64) without arm64 hardware: Debian's qemu-user-static runs an arm64 Python from the
sysroot tools/prepare-arm64-runtime.sh unpacked, with requirements.txt's aarch64 wheels (pruned as the image is)
and the Dockerfile's task root. The same probe runs on the x86_64 Lambda runtime venv, so answers compare directly:

    machine, answers = run_handler(arm64_command(), task_root, events, tmp_path)  # machine: "aarch64"

Emulated, one EfficientNet invoke takes 5-7 s (about 300x native): keep the events few.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from kit.dockerfile import image_environment
from kit.lambda_runtime import RUNTIME_PYTHON

REPO_ROOT = Path(__file__).resolve().parents[2]
ARM64_DIR = REPO_ROOT / "build" / "arm64-runtime"
SYSROOT = ARM64_DIR / "sysroot"
SITE = ARM64_DIR / "site"  # requirements.txt's aarch64 cp311 wheels, pruned by runtime-prune.txt
PROBE = REPO_ROOT / "tests" / "support" / "handler_probe.py"
QEMU = shutil.which("qemu-aarch64-static") or "/usr/bin/qemu-aarch64-static"
# Graviton2's core; qemu's default `max` CPU runs LiteRT ~10x slower. Its cpuinfo: SYSROOT/proc/cpuinfo.
CPU = "neoverse-n1"
PROBE_TIMEOUT_SECONDS = 240


class Arm64NotPrepared(RuntimeError):
    """build/arm64-runtime or qemu is missing: run `bash tools/install-test-deps.sh` as root."""


def arm64_command() -> list[str]:
    """The arm64 Python, emulated (binfmt_misc is not assumed: qemu is called explicitly)."""
    python = SYSROOT / "usr" / "bin" / "python3.11"
    missing = [str(p) for p in (Path(QEMU), python, SYSROOT / "proc" / "cpuinfo", SITE / ".stamp") if not p.exists()]
    if missing:
        raise Arm64NotPrepared(f"missing {', '.join(missing)}: run `bash tools/install-test-deps.sh` as root")
    return [QEMU, "-cpu", CPU, "-L", str(SYSROOT), str(python)]


def x86_64_command() -> list[str]:
    return [str(RUNTIME_PYTHON)]


def run_handler(python: list[str], task_root: Path, events: list[dict], tmp: Path,
                site: Path | None = None) -> tuple[str, list[dict]]:
    """(the CPU the Python saw, the handler's answers to `events`), one fresh process; site: extra packages folder
    (the arm64 wheels)."""
    path = [str(task_root)] + ([str(site)] if site else [])
    environment = {
        "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": ":UTC", "TMPDIR": str(tmp), "HOME": str(tmp),
        "PYTHONPATH": ":".join(path), "PYTHONDONTWRITEBYTECODE": "1", "LAMBDA_TASK_ROOT": str(task_root),
        "AWS_REGION": "us-east-1", "RESULTS_CACHE": "memory", **image_environment(str(task_root)),
    }
    answers = tmp / "answers.json"
    done = subprocess.run([*python, str(PROBE), str(answers)], input=json.dumps(events), cwd=task_root,
                          env=environment, capture_output=True, text=True, timeout=PROBE_TIMEOUT_SECONDS)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    result = json.loads(answers.read_text())
    return result["machine"], result["answers"]
