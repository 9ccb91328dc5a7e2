"""The Dockerfile, checked without Docker: hadolint, and what the image would contain (no image can be built here)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kit.dockerfile import (DockerIgnore, build_context_files, copy_steps, handler_command, image_environment,
                            read_instructions)
from tests.support.import_graph import import_graph, modules, reachable

REPO_ROOT = Path(__file__).resolve().parents[2]
HADOLINT = Path(sys.executable).parent / "hadolint"
TASK_ROOT = "/var/task"
# Packages that would bring TensorFlow (or its dead runtime) into the image.
FORBIDDEN_PACKAGES = {"tensorflow", "tensorflow-cpu", "tf-keras", "keras", "tflite-runtime", "tf-nightly"}


def test_hadolint_passes():
    done = subprocess.run([str(HADOLINT), str(REPO_ROOT / "Dockerfile")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_base_image_is_the_lambda_python_image_of_3_12_or_newer():
    (base,) = [i.arguments for i in read_instructions() if i.keyword == "FROM"]
    match = re.fullmatch(r"public\.ecr\.aws/lambda/python:(\d+)\.(\d+)(@sha256:[0-9a-f]{64})?", base)
    assert match, base
    assert (int(match.group(1)), int(match.group(2))) >= (3, 12)


def install_run() -> str:
    """The one RUN that installs the dependencies."""
    runs = [i.arguments for i in read_instructions() if i.keyword == "RUN"]
    installs = [run for run in runs if re.search(r"\bpip3? install\b", run)]
    assert len(installs) == 1, runs
    return installs[0]


def test_the_only_install_is_requirements_txt_without_dependencies():
    pip_command = install_run().split("&&")[0]
    words = pip_command.replace('"', "").split()
    assert "--no-deps" in words
    requirement_files = [words[i + 1] for i, word in enumerate(words) if word in ("-r", "--requirement")]
    assert requirement_files == ["${LAMBDA_TASK_ROOT}/requirements.txt"]
    options_with_values = {"-r", "--requirement", "--target", "-t"}
    positional = [w for i, w in enumerate(words[2:], 2)
                  if not w.startswith("-") and words[i - 1] not in options_with_values]
    assert positional == [], f"packages installed beside requirements.txt: {positional}"


def test_no_tensorflow_in_the_runtime_lock_or_the_dockerfile():
    names = {
        re.split(r"[=<>!~\[; ]", line.strip())[0].lower().replace("_", "-")
        for line in (REPO_ROOT / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    }
    assert "ai-edge-litert" in names
    assert not names & FORBIDDEN_PACKAGES
    assert not [i for i in read_instructions() if "tensorflow" in i.arguments.lower()]


def test_the_install_step_prunes_by_runtime_prune_txt_in_the_same_layer():
    # In the same RUN as pip: a later RUN would delete files that an earlier layer still carries.
    commands = [command.replace('"', "").split() for command in install_run().split("&&")]
    assert len(commands) == 2 and commands[1][:2] == ["python", "${LAMBDA_TASK_ROOT}/prune_runtime.py"], commands
    assert commands[1][2:] == ["${LAMBDA_TASK_ROOT}", "--list", "${LAMBDA_TASK_ROOT}/runtime-prune.txt"]


def test_layers_go_requirements_then_install_then_models_then_code():
    steps = copy_steps(TASK_ROOT)
    assert [step.sources for step in steps] == [("requirements.txt", "runtime-prune.txt", "tools/prune_runtime.py"),
                                                ("models/",), ("function/",)]
    assert [step.destination for step in steps] == [f"{TASK_ROOT}/", f"{TASK_ROOT}/models/", f"{TASK_ROOT}/function/"]
    # Cache-friendly order: a code edit must not reinstall the dependencies or re-add the models.
    order = [(i.keyword, i.arguments.split()[0]) for i in read_instructions() if i.keyword in ("COPY", "RUN")]
    assert order[:4] == [("COPY", "requirements.txt"), ("RUN", "pip"), ("COPY", "models/"), ("COPY", "function/")]


def test_model_dir_points_at_the_copied_models_and_cmd_names_the_handler():
    assert image_environment(TASK_ROOT)["MODEL_DIR"] == f"{TASK_ROOT}/models"
    assert handler_command() == ["function.app.handler"]
    module, _, attribute = handler_command()[0].rpartition(".")
    source = (REPO_ROOT / Path(*module.split("."))).with_suffix(".py").read_text()
    assert re.search(rf"^(def {attribute}\(|{attribute} = )", source, re.MULTILINE), f"{module} has no {attribute}"


def test_dockerignore_keeps_the_context_to_what_the_image_copies():
    ignore = DockerIgnore()
    for kept in ("requirements.txt", "runtime-prune.txt", "tools/prune_runtime.py", "function/app.py",
                 "function/cache/dynamodb.py", "models/digits/model.tflite", "models/digits/manifest.json",
                 "models/sentiment/tokenizer.json"):
        assert not ignore.excludes(kept), kept
    for dropped in (".venv/bin/python", "saved_model/digits/saved_model.pb", "convert/__main__.py", "build/x",
                    "tools/node_modules/osls/package.json", "tools/prepare-lambda-runtime.sh",
                    "function/__pycache__/app.cpython-312.pyc",
                    "models/digits/report.md", "tests/__init__.py", ".git/HEAD", "requirements-build.txt",
                    "function/devserver/__main__.py", "function/devserver/server.py",
                    "function/devserver/framing.py"):
        assert ignore.excludes(dropped), dropped


def test_the_image_holds_every_module_the_handler_imports_and_no_development_server():
    """The build context as .dockerignore leaves it, against the handler's imports read from the sources (lazy ones
    too; a module found by importlib is covered by the second check: every function/ module but the dev server)."""
    shipped = {file.relative_to(REPO_ROOT).as_posix() for file, _ in build_context_files(Path(TASK_ROOT))}
    known = modules()
    graph = import_graph()
    imported = reachable(graph, handler_command()[0].rpartition(".")[0])
    imported |= {".".join(name.split(".")[:end]) for name in imported for end in range(1, name.count(".") + 1)}
    assert {"function", "function.service", "function.tasks.tensor"} <= imported
    needed = {known[name].relative_to(REPO_ROOT).as_posix() for name in imported}
    assert needed <= shipped, f"the image would lack {sorted(needed - shipped)}"
    development = {name for name in known if name.startswith("function.devserver")}
    assert {"function.devserver.__main__", "function.devserver.server", "function.devserver.framing"} <= development
    served = {known[name].relative_to(REPO_ROOT).as_posix() for name in known
              if name.startswith("function") and name not in development}
    assert served <= shipped, f"the image would lack {sorted(served - shipped)}"
    assert not any(path.startswith("function/devserver") for path in shipped), "the development server ships"
    users = {name for name, targets in graph.items() if name not in development and targets & development}
    assert not users, f"{sorted(users)} import the development server, which the image leaves out"
