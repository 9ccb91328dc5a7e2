"""`python -m convert HF_DIR OUT_DIR` on real sentence-transformers directories from registry packages, served by the
function and held against sentence-transformers' own `encode` (run in .venv-reference, on PyTorch):

- the demo's all-MiniLM-L6-v2 (BERT, 6 layers, 384-d) through this path equals the minilm recipe's model;
- all-mpnet-base-v2 (MPNet: another family and size, 12 layers, 768-d, relative-position attention bias) and the
  MiniLM both answer /embed with cosine >= 0.9999 to sentence-transformers on 200 real sentences of 3 to over 384
  tokens, and rank the paraphrase set exactly as sentence-transformers does;
- both are listed in /models under their own names and dimensions and answer /v1/embeddings.

Converted in float32 (the other modes' cosines are convert --compare's report). The MPNet conversion takes ~4 min of CPU
on 2 cores, most of it the TFLite converter on 110M parameters."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from convert.__main__ import main as convert_main
from convert.transformer.reference import cosine
from function.catalog.registry import ModelRegistry
from saved_model.recipes import minilm, paraphrase_set
from saved_model.recipes.encoder_packages import MPNET_NAME, minilm_directory, mpnet_directory
from saved_model.recipes.vader_corpus import load_rated_sentences
from tests.support.function_fixtures import call, make_service
from tests.support.encoder_sentences import SENTENCES, varied_sentences
from tests.support.sentence_transformers_reference import reference_vectors

REPO = Path(__file__).resolve().parents[2]
RECIPE_MINILM = REPO / "saved_model" / "minilm"
MINILM_NAME = "minilm-st"
MIN_COSINE = 0.9999
BATCH = 32

pytestmark = pytest.mark.slow


def convert(source: Path, out: Path, *options: str) -> Path:
    assert convert_main([str(source), str(out), "--quantization", "float32", *options]) == 0
    return out


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory) -> Path:
    """Both models converted side by side into one model directory, as the function serves them."""
    root = tmp_path_factory.mktemp("encoders")
    convert(minilm_directory(), root / "models" / MINILM_NAME, "--name", MINILM_NAME)
    convert(mpnet_directory(root), root / "models" / MPNET_NAME)
    return root / "models"


@pytest.fixture(scope="module")
def source_dirs(models_dir) -> dict[str, Path]:
    return {MINILM_NAME: minilm_directory(), MPNET_NAME: models_dir.parent / MPNET_NAME}


@pytest.fixture(scope="module")
def service(models_dir):
    return make_service(ModelRegistry(models_dir))


def embed(service, model: str, texts: list[str], normalize: bool = True) -> np.ndarray:
    vectors = []
    for start in range(0, len(texts), BATCH):
        status, body = call(service, "POST", "/embed", {"texts": texts[start:start + BATCH], "model": model,
                                                        "normalize": normalize})
        assert status == 200, body
        vectors += [item["embedding"] for item in body["embeddings"]]
    return np.array(vectors, dtype=np.float32)


@pytest.fixture(scope="module")
def sentences() -> list[str]:
    return varied_sentences()


def test_demo_minilm_through_convert_equals_the_recipe_model(service, models_dir):
    """The recipe's own validation texts (4 to 256 tokens) answered by the converted directory equal the recipe
    model's vectors (its validation.npz holds model.predict of the recipe's Keras model), with the same ids."""
    manifest = json.loads((models_dir / MINILM_NAME / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["preprocessing"]["max_length"] == minilm.MAX_LENGTH
    if (RECIPE_MINILM / "validation.npz").is_file():
        with np.load(RECIPE_MINILM / "validation.npz") as samples:
            texts, expected = [str(t) for t in samples["raw_texts"]], samples["expected"]
    else:
        from saved_model.recipes import minilm_encoder  # noqa: PLC0415

        tokenizer = minilm.make_tokenizer()
        texts = minilm.validation_texts(tokenizer, [s.text for s in load_rated_sentences()])
        model = minilm.build_model(minilm_encoder.load_weights())
        expected = model.predict(list(minilm_encoder.encode(tokenizer, texts)), verbose=0)
    actual = embed(service, MINILM_NAME, texts, normalize=False)
    assert len(texts) == len(expected) > 40
    assert cosine(expected, actual).min() > 0.99999
    assert np.abs(expected - actual).max() < 1e-4


def test_models_lists_each_model_under_its_name_and_dimension(service):
    status, body = call(service, "GET", "/models")
    assert status == 200
    listed = {m["name"]: m for m in body["models"]}
    assert listed[MPNET_NAME]["task"] == listed[MINILM_NAME]["task"] == "text_embedding"
    assert listed[MPNET_NAME]["outputs"][0]["shape"][-1] == 768
    assert listed[MINILM_NAME]["outputs"][0]["shape"][-1] == 384
    status, body = call(service, "POST", "/v1/embeddings", {"input": ["A man is playing a guitar."],
                                                            "model": MPNET_NAME})
    assert status == 200 and body["model"] == MPNET_NAME and len(body["data"][0]["embedding"]) == 768


@pytest.mark.parametrize("model", [MPNET_NAME, MINILM_NAME])
def test_vectors_equal_sentence_transformers_on_200_sentences(service, source_dirs, sentences, model):
    tokens = [item["count"] for start in range(0, len(sentences), BATCH)
              for item in call(service, "POST", "/tokenize", {"texts": sentences[start:start + BATCH],
                                                               "model": model})[1]["results"]]
    assert len(sentences) == SENTENCES and min(tokens) <= 8 and sum(t > 128 for t in tokens) >= 30
    expected = reference_vectors(source_dirs[model], sentences)
    actual = embed(service, model, sentences)
    cosines = cosine(expected, actual)
    assert cosines.min() >= MIN_COSINE, f"worst: sentence {cosines.argmin()} of {tokens[cosines.argmin()]} tokens"
    # Both directories have 2_Normalize: sentence-transformers' vectors are unit vectors, as /embed's are.
    np.testing.assert_allclose(np.linalg.norm(expected, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("model", [MPNET_NAME, MINILM_NAME])
def test_paraphrase_ranking_equals_sentence_transformers(service, source_dirs, model):
    triples = paraphrase_set.load()
    texts = paraphrase_set.texts(triples)
    ours = dict(zip(texts, embed(service, model, texts), strict=True))
    theirs = dict(zip(texts, reference_vectors(source_dirs[model], texts), strict=True))
    ranked = paraphrase_set.rank(triples, lambda batch: np.array([ours[t] for t in batch]))
    reference = paraphrase_set.rank(triples, lambda batch: np.array([theirs[t] for t in batch]))
    assert ranked.correct == reference.correct
    np.testing.assert_array_equal(ranked.margins > 0, reference.margins > 0)
    np.testing.assert_allclose(ranked.margins, reference.margins, atol=1e-3)


def documented_command() -> str:
    """The one command of docs/model-format.md's "Bring a sentence-transformers model" (README.md shows it too)."""
    doc = (REPO / "docs" / "model-format.md").read_text(encoding="utf-8")
    start = doc.index("\n### Bring a sentence-transformers model\n")
    section = doc[start:doc.index("\n### ", start + 1)]
    block = section[section.index("```bash\n") + len("```bash\n"):]
    commands = block[:block.index("```")].strip().splitlines()
    assert len(commands) == 1
    return commands[0]


def test_the_documented_command_converts_a_directory_as_written(tmp_path):
    """Run exactly as docs/model-format.md (and README.md) write it, on the MiniLM directory copied under the
    documented name; the mode chosen by measurement passes its gate and the model is served."""
    command = documented_command()
    assert f"`{command}`" in (REPO / "README.md").read_text(encoding="utf-8")
    source, copy = minilm_directory(), tmp_path / "my-sentence-transformer"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("model.safetensors", "__pycache__"))
    os.symlink(source / "model.safetensors", copy / "model.safetensors")
    program, *arguments = shlex.split(command)
    assert program == "lambda-tflite"  # the installed command (tests/e2e/test_package_install.py): its module here
    run = subprocess.run([sys.executable, "-m", "convert.cli", *arguments], cwd=tmp_path, capture_output=True,
                         text=True, timeout=1800,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 0, run.stderr
    manifest = json.loads((tmp_path / "models" / "my-sentence-transformer" / "manifest.json").read_text())
    report = json.loads((tmp_path / "models" / "my-sentence-transformer" / "report.json").read_text())
    # No --quantization: every mode measured, the chosen one written (dynamic-range weights miss the cosine gate).
    assert manifest["name"] == "my-sentence-transformer"
    assert manifest["quantization"] == report["choice"]["chosen"] != "dynamic"
    status, body = call(make_service(ModelRegistry(tmp_path / "models")), "POST", "/embed",
                        {"text": "A man is playing a guitar.", "model": "my-sentence-transformer"})
    assert status == 200 and body["dimensions"] == 384
