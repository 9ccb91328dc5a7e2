"""The `minilm` demo SavedModel: its sidecar and samples follow docs/model-format.md for a text_embedding model, and
TensorFlow running it matches the independent numpy reference of all-MiniLM-L6-v2 (to ~1e-6) on padded batches
of real sentences from 4 to 256 tokens, and ranks the paraphrase set.

Uses saved_model/minilm when it is built, else builds it into a temporary directory (~1-2 min on 2 cores)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from saved_model import __main__ as saved_model_cli
from saved_model.recipes import minilm, minilm_encoder, paraphrase_set
from saved_model.recipes.minilm_reference import MiniLMReference, cosine

REPO = Path(__file__).resolve().parents[2]
BUILT = REPO / "saved_model" / "minilm"
SIDECAR_KEYS = {"schema", "name", "task", "labels", "output", "preprocessing", "inputs", "outputs", "validation",
                "metrics", "description"}
SEP_ID = 102

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    if (BUILT / "saved_model.pb").is_file() and (BUILT / "sidecar.json").is_file():
        return BUILT
    out = tmp_path_factory.mktemp("minilm") / "minilm"
    minilm.build(out)
    return out


@pytest.fixture(scope="module")
def sidecar(model_dir) -> dict:
    return json.loads((model_dir / "sidecar.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def samples(model_dir) -> dict[str, np.ndarray]:
    return dict(np.load(model_dir / "validation.npz"))


@pytest.fixture(scope="module")
def embed(model_dir):
    return minilm.saved_model_embedder(model_dir)


@pytest.fixture(scope="module")
def reference() -> MiniLMReference:
    return MiniLMReference()


def test_sidecar_is_a_text_embedding_sidecar(sidecar, model_dir):
    assert set(sidecar) <= SIDECAR_KEYS
    assert sidecar["schema"] == 1 and sidecar["name"] == "minilm" and sidecar["task"] == "text_embedding"
    assert "labels" not in sidecar and "output" not in sidecar
    assert sidecar["preprocessing"] == {"type": "text", "tokenizer": "tokenizer.json", "max_length": 256,
                                        "lowercase": False}
    assert sidecar["inputs"] == {"input_ids": "input_ids", "attention_mask": "attention_mask"}
    assert sidecar["validation"] == {"samples": "validation.npz", "representative": "representative.npz"}
    tokenizer = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    assert tokenizer["truncation"]["max_length"] == 256 and tokenizer["padding"]["pad_id"] == 0
    assert tokenizer["normalizer"]["lowercase"] is True


def test_signature_has_a_dynamic_sequence_and_one_384_d_output(model_dir, sidecar):
    import tensorflow as tf  # noqa: PLC0415

    signature = tf.saved_model.load(str(model_dir)).signatures["serving_default"]
    _, inputs = signature.structured_input_signature
    assert {name: (spec.dtype, spec.shape.as_list()) for name, spec in inputs.items()} == {
        "input_ids": (tf.int32, [None, None]), "attention_mask": (tf.int32, [None, None])}
    outputs = signature.structured_outputs
    assert list(outputs) == [sidecar["outputs"]["embedding"]]
    assert outputs[sidecar["outputs"]["embedding"]].shape.as_list() == [None, 384]


def test_samples_are_right_padded_real_texts_of_many_lengths(samples, model_dir):
    for name in ("validation.npz", "representative.npz"):
        arrays = dict(np.load(model_dir / name))
        ids, mask = arrays["inputs_input_ids"], arrays["inputs_attention_mask"]
        lengths = mask.sum(axis=1)
        assert ids.dtype == mask.dtype == np.int32 and ids.shape == mask.shape
        assert np.array_equal(mask, np.arange(mask.shape[1]) < lengths[:, None])  # 1s then 0s
        assert mask.shape[1] == lengths.max()  # padded to the longest text, as the function pads a batch
        assert (ids[mask == 0] == 0).all() and (ids[:, 0] == 101).all()
        assert (ids[np.arange(len(ids)), lengths - 1] == SEP_ID).all()
    lengths = samples["inputs_attention_mask"].sum(axis=1)
    assert lengths.max() == 256 and lengths.min() <= 8  # a truncated document and short sentences together
    assert len(np.unique(np.digitize(lengths, [9, 17, 33, 65, 129, 256]))) == 7


def test_savedmodel_matches_the_numpy_reference_and_check_prints_it(model_dir, capsys):
    agreement = minilm.check(model_dir)
    printed = capsys.readouterr().out
    assert "max abs diff" in printed and "cosine min" in printed and "32/32" in printed
    assert agreement.samples >= 40
    assert agreement.max_abs_diff < 1e-4
    assert agreement.min_cosine > 0.99999
    assert agreement.faithful


def test_the_comparison_fails_when_the_attention_mask_is_ignored(samples, embed, reference):
    """A stack that lets padding into attention must not pass: same check, reference fed an all-ones mask."""
    ids, mask = samples["inputs_input_ids"], samples["inputs_attention_mask"]
    short = np.flatnonzero(mask.sum(axis=1) <= 16)[:4]
    ids, mask = ids[short, :48], mask[short, :48]  # short texts padded to 48: mostly padding
    served = embed(ids, mask)
    weights = mask[:, :, None].astype(np.float64)
    attends_to_padding = ((reference.last_hidden_state(ids, np.ones_like(mask)) * weights).sum(axis=1)
                          / weights.sum(axis=1))
    wrong = minilm.agreement(attends_to_padding, served)
    assert not wrong.faithful
    assert wrong.max_abs_diff > 1e-2 and wrong.min_cosine < 0.99
    assert minilm.agreement(reference.embed(ids, mask), served).faithful


def test_savedmodel_ranks_every_paraphrase_above_the_unrelated_sentence(embed):
    tokenizer = minilm.make_tokenizer()
    triples = paraphrase_set.load()
    ranking = paraphrase_set.rank(triples, lambda texts: embed(*minilm_encoder.encode(tokenizer, texts)))
    assert ranking.correct == ranking.total == len(triples)


def test_vectors_are_mean_pooled_not_normalised(embed, samples, reference):
    ids, mask = samples["inputs_input_ids"][:3, :16], samples["inputs_attention_mask"][:3, :16]
    vectors = embed(ids[:, : mask.sum(axis=1).max()], mask[:, : mask.sum(axis=1).max()])
    norms = np.linalg.norm(vectors, axis=1)
    assert vectors.shape == (3, 384) and not np.allclose(norms, 1.0, atol=1e-3)
    assert cosine(vectors, reference.embed(ids, mask)).min() > 0.99999


def test_check_command_refuses_a_directory_without_a_savedmodel(tmp_path, capsys):
    assert saved_model_cli.main(["check", "minilm", "--dir", str(tmp_path)]) == 2
    assert "no SavedModel" in capsys.readouterr().err
