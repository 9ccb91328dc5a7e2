"""The client programs in docs/api.md ("Clients") run against the real local server and print exactly what the
document says they print: Python with requests, JavaScript with Node's own fetch."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.support.function_fixtures import REPO, demo_models, registry  # noqa: F401
from tests.support.local_api import demo_api  # noqa: F401
from kit.photos import cat_jpeg

# (how a fence names the language, the file the program is saved as, how to run it)
RUNNERS = {"python": ("client.py", [sys.executable]), "js": ("client.mjs", ["node"])}
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def client_examples() -> list[tuple[str, str, str]]:
    """[(language, program, the output the document shows)]: each program block and the ```text block after it."""
    doc = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    start = doc.index("\n## Clients\n")
    section = doc[start:doc.index("\n## ", start + 1)]
    blocks = FENCE.findall(section)
    examples = []
    for (language, program), (kind, output) in zip(blocks, blocks[1:]):
        if language in RUNNERS:
            assert kind == "text", f"the {language} example in docs/api.md needs its output in a ```text block after it"
            examples.append((language, program, output))
    return examples


def test_the_document_has_both_clients():
    assert sorted(language for language, _, _ in client_examples()) == ["js", "python"]


@pytest.mark.parametrize("language,program,expected", client_examples(), ids=lambda value: str(value)[:10])
def test_the_documented_client_prints_what_the_document_says(demo_api, tmp_path, language, program, expected):
    file_name, command = RUNNERS[language]
    assert shutil.which(command[0]), f"{command[0]} is needed to run the {language} example"
    (tmp_path / "cat.jpg").write_bytes(cat_jpeg())  # docs/api.md: scikit-image's chelsea as JPEG, quality 90
    (tmp_path / file_name).write_text(program, encoding="utf-8")
    run = subprocess.run([*command, file_name], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "API_URL": demo_api})
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected
