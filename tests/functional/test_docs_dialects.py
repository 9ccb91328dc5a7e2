"""The embedding dialects' client examples in docs/api.md (OpenAI's client, LangChain's OpenAIEmbeddings,
huggingface_hub's InferenceClient) run as written against `python -m function.devserver` on the demo models, the
documented address 127.0.0.1:8080 replaced by the test server's, and print exactly what the document says."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.support.function_fixtures import REPO, demo_models  # noqa: F401
from tests.support.serve_process import serving

SECTIONS = ("## POST /v1/embeddings (OpenAI compatible)\n",
            "## Hugging Face Text Embeddings Inference: /embed, /tokenize, /info\n")
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
DOCUMENTED_URL = "http://127.0.0.1:8080"


def examples() -> list[tuple[str, str]]:
    """[(program, the output the document shows)]: each python block of SECTIONS and the ```text block after it."""
    doc = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    found = []
    for heading in SECTIONS:
        start = doc.index(heading)
        section = doc[start:doc.index("\n## ", start + 1)]
        blocks = FENCE.findall(section)
        for (language, program), (kind, output) in zip(blocks, blocks[1:]):
            if language == "python":
                assert kind == "text", f"the python example under {heading.strip()} needs its output in a ```text block"
                found.append((program, output))
    return found


def test_the_sections_hold_the_three_clients():
    programs = [program for program, _ in examples()]
    assert len(programs) == 3
    assert [name in text for name, text in zip(("OpenAI(", "OpenAIEmbeddings(", "InferenceClient("), programs)] == [
        True] * 3


@pytest.fixture(scope="module")
def base_url(demo_models, tmp_path_factory):  # noqa: F811
    with serving(demo_models, tmp_path_factory.mktemp("serve")) as url:
        yield url


@pytest.mark.parametrize("program,expected", examples(), ids=["openai", "langchain", "huggingface_hub"])
def test_the_documented_example_prints_what_the_document_says(base_url, tmp_path, program, expected):
    assert DOCUMENTED_URL in program
    (tmp_path / "example.py").write_text(program.replace(DOCUMENTED_URL, base_url), encoding="utf-8")
    run = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected
