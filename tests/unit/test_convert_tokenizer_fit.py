"""convert refuses a text model whose tokenizer.json the function could not use: one that does not load (every
request a 503), or one whose ids run past the table the model's token-id input indexes (every text holding such a
token a 500, "gather index out of bounds"). On copies of the converted demo text models."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from convert.errors import ConversionError
from convert.tokenizer_fit import check_tokenizer_fits

MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.fixture(params=["sentiment", "minilm"])
def text_model(request, tmp_path) -> Path:
    copy = tmp_path / request.param
    shutil.copytree(MODELS / request.param, copy)
    return copy


def test_the_demo_text_models_tokenizers_fit_their_tables(text_model):
    check_tokenizer_fits(text_model)  # raises nothing
    check_tokenizer_fits(MODELS / "digits")  # no tokenizer: nothing to check


def test_a_tokenizer_with_ids_past_the_table_is_refused(text_model):
    tokenizer = json.loads((text_model / "tokenizer.json").read_text())
    tokenizer["added_tokens"].append({"id": 40_000, "content": "[FAR]", "single_word": False, "lstrip": False,
                                      "rstrip": False, "normalized": False, "special": True})
    (text_model / "tokenizer.json").write_text(json.dumps(tokenizer))
    with pytest.raises(ConversionError) as raised:
        check_tokenizer_fits(text_model)
    assert raised.value.code == "tokenizer_out_of_range"
    # The library numbers an added token past the vocabulary (30522 here): one row past the table either way.
    assert "[FAR]" in raised.value.message and "0 to 30521" in raised.value.message


@pytest.mark.parametrize("content", ['{"model": 5}', "not json", '{"version": "1.0", "model": {"type": "Nope"}}'])
def test_a_tokenizer_that_does_not_load_is_refused_in_one_line(text_model, content):
    (text_model / "tokenizer.json").write_text(content)
    with pytest.raises(ConversionError) as raised:
        check_tokenizer_fits(text_model)
    assert raised.value.code == "bad_tokenizer" and "\n" not in raised.value.message
