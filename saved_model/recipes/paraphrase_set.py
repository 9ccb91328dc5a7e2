"""The labelled paraphrase set (data/paraphrases.json): does an embedding rank each anchor's paraphrase above an
unrelated sentence? Word overlap alone ranks 9 of its 32 triples right; all-MiniLM-L6-v2 ranks all 32."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PATH = Path(__file__).resolve().parent / "data" / "paraphrases.json"
FIELDS = ("anchor", "paraphrase", "unrelated")


@dataclass(frozen=True)
class Triple:
    anchor: str
    paraphrase: str
    unrelated: str


@dataclass(frozen=True)
class Ranking:
    correct: int
    total: int
    margins: np.ndarray  # cos(anchor, paraphrase) - cos(anchor, unrelated), one per triple

    def text(self) -> str:
        return (f"paraphrase ranked above the unrelated sentence in {self.correct}/{self.total} triples "
                f"(smallest margin {self.margins.min():+.3f}, mean {self.margins.mean():+.3f})")


def load(path: Path = PATH) -> list[Triple]:
    triples = json.loads(path.read_text(encoding="utf-8"))["triples"]
    for index, triple in enumerate(triples):
        if set(triple) != set(FIELDS) or not all(isinstance(triple[f], str) and triple[f].strip() for f in FIELDS):
            raise ValueError(f"{path.name}: triple {index} needs exactly the non-empty strings {FIELDS}")
    return [Triple(**triple) for triple in triples]


def texts(triples: list[Triple]) -> list[str]:
    """Every sentence of the set once, in file order."""
    return list(dict.fromkeys(getattr(t, f) for t in triples for f in FIELDS))


def rank(triples: list[Triple], embed: Callable[[list[str]], np.ndarray]) -> Ranking:
    """`embed` maps texts to one vector each (normalised or not: cosine is taken here)."""
    def unit(sentences: list[str]) -> np.ndarray:
        vectors = np.asarray(embed(sentences), dtype=np.float64)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    anchors, paraphrases, unrelated = (unit([getattr(t, f) for t in triples]) for f in FIELDS)
    margins = (anchors * paraphrases).sum(axis=1) - (anchors * unrelated).sum(axis=1)
    return Ranking(int((margins > 0).sum()), len(triples), margins)
