"""A revision of this repository on disk, and its Lambda task root, for bench/compare_revisions.py.

A commit is checked out into a temporary detached git worktree (removed afterwards); the working tree is used as
it is, uncommitted edits included. The task root is what that revision's own Dockerfile and .dockerignore put in
the image, except models/: both revisions read the one converted models/ directory of this checkout.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.paths import REPO_ROOT
from kit.dockerfile import DockerIgnore, copy_steps

SHARED_SOURCES = ("models",)  # never copied per revision: every revision serves the same converted models


@dataclass(frozen=True)
class Revision:
    label: str  # what the table calls it: a short commit, or "working tree (<commit>)"
    source: Path  # the checkout the task root is laid out from

    def python_lines(self) -> tuple[int, int]:
        """(files, lines) of function/'s Python sources, shipped or not."""
        files = [p for p in sorted((self.source / "function").rglob("*.py")) if "__pycache__" not in p.parts]
        return len(files), sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files)


def _git(*arguments: str) -> str:
    done = subprocess.run(["git", *arguments], cwd=REPO_ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise ValueError(f"git {' '.join(arguments)}: {done.stderr.strip()}")
    return done.stdout.strip()


def commit_of(spec: str) -> str | None:
    """The full commit `spec` names, or None when it names none."""
    try:
        return _git("rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}")
    except ValueError:
        return None


@contextlib.contextmanager
def checked_out(spec: str | None, scratch: Path, role: str) -> Iterator[Revision]:
    """The revision `spec` names (None: the working tree), checked out under `scratch` while the block runs;
    `role` (base, head) keeps two checkouts of one commit apart."""
    if spec is None:
        commit = _git("rev-parse", "--short", "HEAD")
        edited = _git("status", "--porcelain", "--", "function", "Dockerfile", ".dockerignore")
        yield Revision(f"working tree ({commit}{' + edits' if edited else ''})", REPO_ROOT)
        return
    commit = _git("rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}")
    short = _git("rev-parse", "--short", commit)
    checkout = scratch / f"{role}-{short}"
    if checkout.exists():  # left by an interrupted run
        subprocess.run(["git", "worktree", "remove", "--force", str(checkout)], cwd=REPO_ROOT, capture_output=True)
        shutil.rmtree(checkout, ignore_errors=True)
    scratch.mkdir(parents=True, exist_ok=True)
    _git("worktree", "add", "--detach", "--quiet", str(checkout), commit)
    try:
        yield Revision(short if short.startswith(spec) or spec == commit else f"{spec} ({short})", checkout)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(checkout)], cwd=REPO_ROOT, capture_output=True)
        shutil.rmtree(checkout, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], cwd=REPO_ROOT, capture_output=True)


def lay_out_task_root(revision: Revision, task_root: Path, python: Path) -> Path:
    """The revision's Dockerfile COPY steps filtered by its .dockerignore, then its bytecode compilation."""
    shutil.rmtree(task_root, ignore_errors=True)
    task_root.mkdir(parents=True)
    ignore = DockerIgnore(revision.source / ".dockerignore")
    for step in copy_steps(str(task_root), revision.source / "Dockerfile"):
        for source in step.sources:
            if source.strip("/") in SHARED_SOURCES:
                continue
            origin = revision.source / source
            if origin.is_dir():
                pairs = [(f, Path(step.destination) / f.relative_to(origin)) for f in sorted(origin.rglob("*"))
                         if f.is_file()]
            else:
                pairs = [(origin, Path(step.destination) / origin.name if step.destination.endswith("/")
                          else Path(step.destination))]
            for file, target in pairs:
                if not ignore.excludes(file.relative_to(revision.source).as_posix()):
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(file, target)
    # The image's `RUN python -m compileall`, by the runtime's own Python so the bytecode is the one it loads.
    subprocess.run([str(python), "-m", "compileall", "-q", str(task_root / "function")], check=True)
    return task_root


def pinned_requirements(revision: Revision) -> list[str]:
    """requirements.txt's requirement lines, comments and blank lines left out: what a venv is built from."""
    path = revision.source / "requirements.txt"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]
