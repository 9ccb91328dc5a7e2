"""The sentences the encoder tests hold a served or exported encoder to sentence-transformers on."""
from __future__ import annotations

import numpy as np

from saved_model.recipes.vader_corpus import load_rated_sentences

SENTENCES = 200


def varied_sentences() -> list[str]:
    """SENTENCES real sentences of the VADER corpus: 160 single ones spread over every length (seeded), then 40
    documents joined from them, from ~100 to over 500 words (past 128 tokens, some past 384 and truncated)."""
    pool = sorted({s.text for s in load_rated_sentences()}, key=lambda text: (len(text), text))
    rng = np.random.default_rng(36)
    singles = [pool[i] for i in np.linspace(0, len(pool) - 1, 160).astype(int)]
    documents = []
    for count in np.linspace(4, 24, 40).astype(int):
        documents.append(" ".join(pool[i] for i in rng.choice(len(pool), size=count, replace=False)))
    return singles + documents
