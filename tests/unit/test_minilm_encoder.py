"""MiniLM rebuilt in Keras from the shipped safetensors: the weights land where BERT expects them."""
import numpy as np
import pytest

from saved_model.recipes import minilm_encoder

MAX_LENGTH = 24


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer  # noqa: PLC0415

    return Tokenizer.from_str(minilm_encoder.tokenizer_json(MAX_LENGTH))


@pytest.fixture(scope="module")
def sentence_encoder():
    import keras  # noqa: PLC0415

    weights = minilm_encoder.load_weights()
    embeddings, blocks, mask_bias, mean_pool = minilm_encoder.make_layers(MAX_LENGTH, weights, dropout=0.0)
    ids = keras.Input((None,), dtype="int32")
    mask = keras.ops.cast(keras.ops.not_equal(ids, 0), "int32")
    hidden, bias = embeddings(ids), mask_bias(mask)
    for block in blocks:
        hidden = block(hidden, bias)
    return keras.Model(ids, mean_pool(hidden, mask))


def test_tokenizer_file_pads_and_truncates_to_max_length(tokenizer):
    short = tokenizer.encode("A fine film.")
    long = tokenizer.encode("word " * 200)
    assert short.tokens[0] == "[CLS]" and "[SEP]" in short.tokens and short.ids[-1] == 0
    assert len(short.ids) == len(long.ids) == MAX_LENGTH
    assert long.tokens[-1] == "[SEP]"


def unit_vectors(encoder, ids):
    vectors = np.asarray(encoder(ids))
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_sentence_embeddings_put_paraphrases_together(tokenizer, sentence_encoder):
    """A transposed or misplaced weight matrix scrambles this; the real MiniLM separates it clearly."""
    texts = ["I love this movie, it is wonderful", "What a great film, I enjoyed it",
             "The tax policy of the government is flawed"]
    ids, _ = minilm_encoder.encode(tokenizer, texts)
    vectors = unit_vectors(sentence_encoder, ids)
    paraphrase, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert paraphrase > 0.5
    assert unrelated < 0.2


def test_padding_is_masked_out(tokenizer, sentence_encoder):
    """Cutting trailing padding (what the bucketed precompute does) must not change a sentence's vector."""
    ids, _ = minilm_encoder.encode(tokenizer, ["Short and sweet."])
    full = np.asarray(sentence_encoder(ids))
    trimmed = np.asarray(sentence_encoder(ids[:, :8]))
    np.testing.assert_allclose(full, trimmed, atol=1e-4)
