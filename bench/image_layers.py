"""Section 12: the image's own layers, and the bytes a cold start actually opens, per route.

The layers are assembled without Docker, as the Dockerfile builds them: the dependency layer is `pip install --no-deps
--target` of requirements.txt's manylinux cp312 wheels for each architecture, before and after runtime-prune.txt
(kit/runtime_layer.py); models/ and function/ are the Dockerfile's COPY steps, with function/'s bytecode
(kit/lambda_runtime.py's task root). Sizes are uncompressed bytes and gzip -6 of the layer's tar, as a
registry stores it.

Bytes opened: one fresh emulated Lambda environment per route (the pruned runtime venv, as shipped), recorded by
strace; every regular file the process opened (Python's imports and the native libraries' dlopen alike) counted
once at its full size, per layer. Lambda loads an image lazily, chunk by chunk, so this is an upper bound on what
a cold start reads: a mapped library is rarely read whole.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import tempfile
import time
from pathlib import Path

from bench.report import SectionResult, table, verdict
from kit import runtime_layer
from kit.file_access import opened_files, strace_prefix
from kit.lambda_runtime import LambdaRuntime, lay_out_task_root
from kit.route_events import PAGE_ENVIRONMENT, route_events

NUMBER = 12
TITLE = "Image: layers, and the bytes a cold start opens"
LAYER_TARGET_MB = 120
MB = 1e6


def files_bytes(root: Path) -> int:
    return sum(p.lstat().st_size for p in Path(root).rglob("*") if p.is_file() and not p.is_symlink())


def gzip_bytes(root: Path) -> int:
    """gzip -6 of a tar of root: roughly what the registry stores and Lambda pulls for that layer."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as archive:
        archive.add(root, arcname=".")
    return len(gzip.compress(raw.getvalue(), compresslevel=6))


def layer_rows(work: Path, task_root: Path) -> tuple[list[list[str]], dict[str, int]]:
    sizes, rows = {}, []
    for arch in ("x86_64", "aarch64"):
        for pruned in (False, True):
            layer = runtime_layer.install_layer(work / f"{arch}-{pruned}", arch, prune=pruned)
            sizes[f"deps {arch} {'pruned' if pruned else 'as installed'}"] = files_bytes(layer)
            label = f"dependencies, {arch}, " + ("pruned (runtime-prune.txt)" if pruned else "as pip installs them")
            rows.append([label, f"{files_bytes(layer) / MB:.1f} MB", f"{gzip_bytes(layer) / MB:.1f} MB"])
    for name in ("models", "function"):
        rows.append([f"{name}/", f"{files_bytes(task_root / name) / MB:.1f} MB",
                     f"{gzip_bytes(task_root / name) / MB:.1f} MB"])
    return rows, sizes


def opened_by_layer(files: set[Path], task_root: Path, site: Path, deps_top_level: set[str]) -> dict[str, int]:
    """Bytes of the opened files, by the layer that holds them in the image."""
    totals = {"deps": 0, "models": 0, "function": 0, "base image": 0}
    for path in files:
        size = path.stat().st_size
        if task_root in path.parents:
            part = path.relative_to(task_root).parts[0]
            totals["models" if part == "models" else "function" if part == "function" else "base image"] += size
        elif site in path.parents and path.relative_to(site).parts[0] in deps_top_level:
            totals["deps"] += size
        else:  # Python, the runtime client, system libraries: the Lambda base image
            totals["base image"] += size
    return totals


def cold_start_rows(work: Path, task_root: Path, deps_top_level: set[str]) -> list[list[str]]:
    site = runtime_layer.site_packages(runtime_layer.RUNTIME_PYTHON.parent.parent).resolve()
    events = route_events()
    rows = []
    for route in [name for name in events if "(" not in name]:  # each route once (the JPEG for /classify)
        log = work / f"opens-{len(rows)}.log"
        with LambdaRuntime(task_root, environment={"RESULTS_CACHE": "memory", **PAGE_ENVIRONMENT},
                           command_prefix=strace_prefix(log)) as runtime:
            status = runtime.invoke(events[route]).status
        files = opened_files(log)
        totals = opened_by_layer(files, task_root.resolve(), site, deps_top_level)
        own = totals["deps"] + totals["models"] + totals["function"]
        rows.append([f"`{route}`", str(status), str(len(files))] +
                    [f"{totals[name] / MB:.1f} MB" for name in ("deps", "models", "function")] +
                    [f"**{own / MB:.1f} MB**", f"{totals['base image'] / MB:.1f} MB"])
    return rows


def run(context) -> SectionResult:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-image-") as scratch:
        work = Path(scratch)
        task_root = lay_out_task_root(work / "task")
        layers, sizes = layer_rows(work / "layers", task_root)
        deps_top_level = {p.name for p in (work / "layers" / "x86_64-True").iterdir()}
        cold = cold_start_rows(work, task_root, deps_top_level)
    before, after = sizes["deps x86_64 as installed"], sizes["deps x86_64 pruned"]
    arm64 = sizes["deps aarch64 pruned"]
    patterns = runtime_layer.prune_tool().read_patterns(runtime_layer.PRUNE_LIST)
    markdown = "\n".join([
        "The image's own layers (the base image `public.ecr.aws/lambda/python:3.12` comes on top), assembled "
        "offline as the Dockerfile builds them; MB = 10^6 bytes. The dependency layer is pip's install of "
        "requirements.txt for each architecture, then the same RUN deletes the "
        f"{len(patterns)} patterns of runtime-prune.txt (each with its reason; "
        "tests/e2e/test_runtime_prune.py proves no route opens any of it).",
        "",
        table(["layer", "uncompressed", "gzip"], layers),
        "",
        "**Bytes a cold start opens**, per route: a fresh emulated Lambda environment (the pruned runtime venv, as "
        "shipped), its first request on that route, every file the process opened recorded by strace and counted "
        "once at its full size, by the layer that holds it. An upper bound on what is read: Lambda loads the image "
        "lazily, and a mapped library is rarely read whole. The last column is what this machine's Python and system "
        "libraries take (pyenv's libpython alone is 30 MB, unstripped): the base image's own differ and are shared "
        "by every function on it. No pruned file is opened, so the prune leaves these bytes as they were: it cuts "
        "what is stored, pushed and pulled, not what a cold start reads.",
        "",
        table(["route", "status", "files", "deps", "models", "function", "image's own layers",
               "Python + system (here)"], cold),
        "",
        f"arm64 (Graviton): the pruned dependency layer is {arm64 / MB:.1f} MB vs {after / MB:.1f} MB for x86_64. "
        "Speed on Graviton needs real hardware: the arm64 test runs the handler under qemu emulation, which proves "
        "the answers (tests/e2e/test_arm64.py) and says nothing of the timing.",
    ])
    verdicts = [verdict(after <= LAYER_TARGET_MB * MB,
                        f"dependency layer {before / MB:.0f} MB -> {after / MB:.0f} MB "
                        f"(target <= {LAYER_TARGET_MB} MB)")]
    return SectionResult(NUMBER, TITLE, markdown, verdicts, time.perf_counter() - started)
