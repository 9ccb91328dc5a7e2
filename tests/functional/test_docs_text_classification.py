"""The curl commands of docs/api.md's "POST /classify-text" section, run as written (bash, real curl) against the
local server, print what the document shows, but for the model version, which each build has its own."""
from __future__ import annotations

import re
import shutil
import subprocess

import requests

from tests.support.function_fixtures import REPO, demo_models, registry  # noqa: F401
from tests.support.local_api import demo_api  # noqa: F401

SECTION = "\n## POST /classify-text\n"
BLOCK = re.compile(r"^```console\n\$ (.*?)\n(.*?)\n```$", re.M | re.S)
VERSION = re.compile(r'"model_version":"[0-9a-f]{64}"')


def documented_commands() -> list[tuple[str, str]]:
    doc = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    start = doc.index(SECTION)
    return BLOCK.findall(doc[start:doc.index("\n## ", start + 1)])


def test_the_documented_commands_print_what_the_document_says(demo_api):  # noqa: F811
    assert shutil.which("curl"), "curl is needed to run docs/api.md's commands"
    commands = documented_commands()
    assert len(commands) >= 4 and any('"top_k": "all"' in command for command, _ in commands)
    served = requests.get(f"{demo_api}/models", timeout=30).json()
    version = next(model["version"] for model in served["models"] if model["name"] == "sentiment")
    for command, expected in commands:
        assert command.startswith("curl ") and "127.0.0.1:8080" in command, command
        ran = subprocess.run(["bash", "-c", command.replace("127.0.0.1:8080", demo_api.removeprefix("http://"))],
                             capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.strip() == VERSION.sub(f'"model_version":"{version}"', expected), command
