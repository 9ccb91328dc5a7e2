"""What the Lambda image contains, read from the Dockerfile and .dockerignore themselves.

The runtime harness lays out its task root from these, so the tests run exactly what the image would hold and
cannot drift from it. Only the subset of Dockerfile syntax this repo uses is understood (FROM, ENV, COPY, RUN, CMD).
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = REPO_ROOT / "Dockerfile"
DOCKERIGNORE = REPO_ROOT / ".dockerignore"
# The Lambda base image's own ENV: where the function's files go.
BASE_IMAGE_ENV = {"LAMBDA_TASK_ROOT": "/var/task", "LAMBDA_RUNTIME_DIR": "/var/runtime"}


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper case: FROM, ENV, COPY, RUN, CMD...
    arguments: str


def read_instructions(path: Path = DOCKERFILE) -> list[Instruction]:
    """Instructions in order, comments dropped and backslash continuations joined."""
    instructions, pending = [], ""
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        keyword, _, arguments = (pending + stripped).partition(" ")
        instructions.append(Instruction(keyword.upper(), arguments.strip()))
        pending = ""
    return instructions


def substitute(text: str, variables: dict[str, str]) -> str:
    """Docker's ${VAR} / $VAR expansion (unknown variables become empty, as in docker build)."""
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: variables.get(m.group(1) or m.group(2), ""), text)


def image_environment(task_root: str, path: Path = DOCKERFILE) -> dict[str, str]:
    """The ENV the Dockerfile sets, with the base image's LAMBDA_TASK_ROOT replaced by `task_root`."""
    variables = {**BASE_IMAGE_ENV, "LAMBDA_TASK_ROOT": task_root}
    declared = {}
    for instruction in read_instructions(path):
        if instruction.keyword != "ENV":
            continue
        for assignment in shlex.split(instruction.arguments):
            name, _, value = assignment.partition("=")
            declared[name] = variables[name] = substitute(value, variables)
    return declared


def handler_command(path: Path = DOCKERFILE) -> list[str]:
    """The CMD in exec form: the handler the runtime client is started with."""
    commands = [i for i in read_instructions(path) if i.keyword == "CMD"]
    return json.loads(commands[-1].arguments)


@dataclass(frozen=True)
class CopyStep:
    sources: tuple[str, ...]  # relative to the build context
    destination: str  # with ${LAMBDA_TASK_ROOT} already expanded


def copy_steps(task_root: str, path: Path = DOCKERFILE) -> list[CopyStep]:
    variables = {**BASE_IMAGE_ENV, "LAMBDA_TASK_ROOT": task_root}
    steps = []
    for instruction in read_instructions(path):
        if instruction.keyword == "ENV":
            variables.update(image_environment(task_root, path))
        if instruction.keyword != "COPY":
            continue
        words = [w for w in shlex.split(instruction.arguments) if not w.startswith("--")]
        steps.append(CopyStep(tuple(words[:-1]), substitute(words[-1], variables)))
    return steps


class DockerIgnore:
    """`.dockerignore` semantics: the last matching pattern wins, `!` re-includes, a matched directory covers its
    files."""

    def __init__(self, path: Path = DOCKERIGNORE):
        self.rules: list[tuple[re.Pattern, bool]] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            included = line.startswith("!")
            self.rules.append((self._compile(line.lstrip("!").strip("/")), included))

    @staticmethod
    def _compile(pattern: str) -> re.Pattern:
        parts = re.split(r"(\*\*/|\*\*|\*|\?)", pattern)
        wildcard = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}
        return re.compile("".join(wildcard.get(part, re.escape(part)) for part in parts) + r"\Z")

    def excludes(self, relative: str) -> bool:
        parts = relative.strip("/").split("/")
        candidates = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
        excluded = False
        for pattern, included in self.rules:
            if any(pattern.match(candidate) for candidate in candidates):
                excluded = not included
        return excluded


def build_context_files(task_root: Path, context: Path = REPO_ROOT, path: Path = DOCKERFILE) -> list[tuple[Path, Path]]:
    """(file in the build context, where the Dockerfile's COPY steps put it under `task_root`) for every file the
    image would hold, in COPY order: what .dockerignore leaves out never appears."""
    ignore = DockerIgnore(context / ".dockerignore")
    placed = []
    for step in copy_steps(str(task_root), path):
        destination = Path(step.destination)
        for source in step.sources:
            origin = context / source
            if origin.is_dir():
                files = sorted(p for p in origin.rglob("*") if p.is_file())
                targets = [(f, destination / f.relative_to(origin)) for f in files]
            else:
                target = destination / origin.name if step.destination.endswith("/") else destination
                targets = [(origin, target)]
            placed += [(file, target) for file, target in targets
                       if not ignore.excludes(file.relative_to(context).as_posix())]
    return placed


def copy_build_context(task_root: Path, context: Path = REPO_ROOT, path: Path = DOCKERFILE) -> list[Path]:
    """Do the Dockerfile's COPY steps into `task_root` (standing in for /var/task); returns the files copied."""
    copied = []
    for file, target in build_context_files(task_root, context, path):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(file, target)
        copied.append(target)
    return copied
