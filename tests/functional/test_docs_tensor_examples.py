"""The tensor protocols' examples in docs/api.md run as written against the real local server and print what the
document shows: TF Serving's encoded image request ("Encoded images") with requests and curl, and Triton's
repository, configuration and statistics extensions with tritonclient. Only the documented address, 127.0.0.1:8080,
becomes the test server's."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from tests.support.function_fixtures import REPO, demo_models, make_service, registry  # noqa: F401
from tests.support.local_api import serving
from kit.photos import cat_jpeg

DOC = REPO / "docs" / "api.md"
ADDRESS = "127.0.0.1:8080"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def subsection(title: str) -> list[tuple[str, str]]:
    """The fenced blocks (language, text) of docs/api.md's "### <title>" subsection."""
    doc = DOC.read_text(encoding="utf-8")
    start = doc.index(f"\n### {title}\n")
    end = min(found for found in (doc.find("\n## ", start + 1), doc.find("\n### ", start + 1)) if found != -1)
    return FENCE.findall(doc[start:end])


@pytest.fixture(scope="module")
def api(registry):  # noqa: F811
    with serving(make_service(registry)) as url:  # its own empty result cache
        yield url.removeprefix("http://")


@pytest.mark.parametrize("title", ["Encoded images: `{\"b64\": ...}`",
                                   "Triton's repository, configuration and statistics extensions"])
def test_the_python_example_prints_what_the_document_shows(api, tmp_path, title):
    blocks = subsection(title)
    (program, expected), = [(text, blocks[i + 1][1]) for i, (language, text) in enumerate(blocks)
                            if language == "python"]
    assert blocks[blocks.index(("python", program)) + 1][0] == "text"
    (tmp_path / "cat.jpg").write_bytes(cat_jpeg())  # docs/api.md: scikit-image's chelsea as JPEG, quality 90
    (tmp_path / "example.py").write_text(program.replace(ADDRESS, api), encoding="utf-8")
    run = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected


def test_the_curl_example_answers_what_the_document_shows(api, tmp_path):
    assert shutil.which("curl"), "curl runs the documented command"
    (console,) = [text for language, text in subsection("Encoded images: `{\"b64\": ...}`") if language == "console"]
    command, expected = console.rstrip("\n").split("\n")
    run = subprocess.run(["bash", "-c", command.removeprefix("$ ").replace(ADDRESS, api)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.rstrip("\n") == expected
