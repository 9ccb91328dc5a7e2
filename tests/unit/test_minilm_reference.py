"""The numpy reference of all-MiniLM-L6-v2 (saved_model/recipes/minilm_reference.py) is right on its own, before
anything is compared with it: it reproduces sentence-transformers' published vector, it keeps padding out of
attention, and it ranks the hand-written paraphrase set. Also the tokenizer.json the `minilm` model ships."""
from __future__ import annotations

import re

import numpy as np
import pytest

from saved_model.recipes import minilm, minilm_encoder, paraphrase_set
from saved_model.recipes.minilm_reference import MiniLMReference, cosine

# The first 8 dimensions sentence-transformers' quickstart prints for all-MiniLM-L6-v2 and this sentence
# (SentenceTransformer("all-MiniLM-L6-v2").encode("This is an example sentence"), normalised).
EXAMPLE_SENTENCE = "This is an example sentence"
PUBLISHED_START = [6.76569119e-02, 6.34959713e-02, 4.87131029e-02, 7.93049708e-02,
                   3.74480560e-02, 2.65275687e-03, 3.93749326e-02, -7.09843030e-03]


@pytest.fixture(scope="module")
def reference() -> MiniLMReference:
    return MiniLMReference()


@pytest.fixture(scope="module")
def tokenizer():
    return minilm.make_tokenizer()


def unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_reference_reproduces_the_vector_sentence_transformers_publishes(reference, tokenizer):
    ids, mask = minilm_encoder.encode(tokenizer, [EXAMPLE_SENTENCE])
    vector = unit(reference.embed(ids, mask))[0]
    assert vector.shape == (384,)
    np.testing.assert_allclose(vector[:8], PUBLISHED_START, atol=2e-6)


def test_padding_changes_nothing_and_ignoring_the_mask_would_be_caught(reference, tokenizer):
    texts = ["Short.", "A somewhat longer sentence, so that the first one gets plenty of padding in the batch."]
    ids, mask = minilm_encoder.encode(tokenizer, texts)
    assert mask[0].sum() < mask.shape[1] // 3  # the short text is mostly padding
    padded = reference.embed(ids, mask)
    alone = reference.embed(ids[:1, : mask[0].sum()], mask[:1, : mask[0].sum()])
    np.testing.assert_allclose(padded[0], alone[0], atol=1e-12)
    # Attending to the padding (pooling still over real tokens) moves the short text's vector far away.
    ignored = reference.last_hidden_state(ids, np.ones_like(mask))[0, : mask[0].sum()].mean(axis=0)
    assert np.abs(ignored - alone[0]).max() > 1e-2
    assert cosine(ignored[None], alone)[0] < 0.99


def test_paraphrase_set_is_well_formed_and_not_solvable_by_word_overlap():
    triples = paraphrase_set.load()
    assert 20 <= len(triples) <= 40
    assert len(paraphrase_set.texts(triples)) == 3 * len(triples)  # no sentence used twice

    def words(text: str) -> set[str]:
        return set(re.findall(r"[a-z]+", text.lower()))

    def overlap(a: str, b: str) -> float:
        return len(words(a) & words(b)) / len(words(a) | words(b))

    by_overlap = sum(overlap(t.anchor, t.paraphrase) > overlap(t.anchor, t.unrelated) for t in triples)
    assert by_overlap <= len(triples) // 2, "the unrelated sentences should share words with their anchors"


def test_reference_ranks_every_paraphrase_above_the_unrelated_sentence(reference, tokenizer):
    triples = paraphrase_set.load()
    ranking = paraphrase_set.rank(triples, lambda texts: reference.embed(*minilm_encoder.encode(tokenizer, texts)))
    print(ranking.text())
    assert ranking.correct == ranking.total == len(triples)


def test_tokenizer_pads_to_the_longest_text_and_truncates_at_256_keeping_sep(tokenizer):
    encodings = tokenizer.encode_batch(["hello world", "a rather longer sentence than the first one"])
    assert len(encodings[0].ids) == len(encodings[1].ids) == sum(encodings[1].attention_mask)
    assert encodings[0].tokens[:4] == ["[CLS]", "hello", "world", "[SEP]"] and encodings[0].ids[-1] == 0
    long = tokenizer.encode("Caf\u00e9 NOIR, please. " * 200)
    assert len(long.ids) == minilm.MAX_LENGTH == 256
    assert long.tokens[0] == "[CLS]" and long.tokens[-1] == "[SEP]" and long.overflowing
    assert long.tokens[1:4] == ["cafe", "noir", ","]  # lowercased, accent stripped by the file itself
