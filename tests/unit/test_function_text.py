"""The text model's tokenizer: fixed-length padding with the file's pad id, truncation, special tokens."""
from __future__ import annotations

import numpy as np
import pytest

from function.model.manifest import load_manifest
from function.preprocessing.text import TextEncoder
from tests.support.function_fixtures import demo_models  # noqa: F401


@pytest.fixture(scope="module")
def encoder(demo_models) -> TextEncoder:  # noqa: F811
    manifest = load_manifest(demo_models / "sentiment")
    spec = manifest.preprocessing
    return TextEncoder(manifest.directory / spec["tokenizer"], spec["max_length"], spec.get("lowercase", False))


def test_short_text_is_padded_to_max_length(encoder):
    [encoded] = encoder.encode(["A fine film."])
    assert not encoded.truncated
    assert encoded.attention_mask == [1] * len(encoded.ids)
    batch = encoder.batch([encoded])
    assert batch["input_ids"].shape == batch["attention_mask"].shape == (1, encoder.max_length)
    assert batch["input_ids"].dtype == np.int32
    assert batch["attention_mask"][0].sum() == len(encoded.ids)
    assert (batch["input_ids"][0, len(encoded.ids):] == encoder.pad_id).all()


def test_long_text_is_truncated_to_max_length(encoder):
    [encoded] = encoder.encode(["word " * (encoder.max_length * 3)])
    assert encoded.truncated
    assert len(encoded.ids) == encoder.max_length
    assert encoder.batch([encoded])["attention_mask"].all()


def test_batch_rows_keep_input_order(encoder):
    texts = ["bad", "a much longer and rather good sentence", "ok"]
    encoded = encoder.encode(texts)
    singles = [encoder.encode([text])[0].ids for text in texts]
    assert [item.ids for item in encoded] == singles


def test_non_ascii_text_tokenizes(encoder):
    [encoded] = encoder.encode(["Café crème, très bien 😀"])
    assert len(encoded.ids) > 3 and len(encoded.tokens) == len(encoded.ids)
