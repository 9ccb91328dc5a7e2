"""The requests every section sends: one real photo as JPEG (kit/photos.py), real review sentences; kit/events.py
makes them API Gateway v2 events.

The same bytes go to every configuration, so a difference in a number is a difference in the stack.
"""

from __future__ import annotations

import base64
from functools import lru_cache

from kit.photos import cat_jpeg

SENTENCES = (
    "The acting was superb and the story kept me hooked until the very last scene.",
    "Worst purchase I have made this year: it broke after two days and support never answered.",
)


def classify_body(model: str | None = None) -> dict:
    body = {"image": base64.b64encode(cat_jpeg()).decode("ascii")}
    if model:
        body["model"] = model
    return body


def sentiment_body() -> dict:
    return {"text": SENTENCES[0]}


def tokenize_body() -> dict:
    return {"text": SENTENCES[1]}


ROUTE_BODIES = {"/classify": classify_body, "/sentiment": sentiment_body, "/tokenize": tokenize_body}

EMBEDDING_MODEL = "minilm"
EMBED_SHORT_SENTENCE = "How do I reset my password?"
# The mixed-length embedding batch: 8 VADER sentences from each token-length band (seeded), so the batch is padded
# to its longest text (65-128 tokens) while most texts are short, as a client's batch of chunks often is.
EMBED_BATCH_BANDS = ((3, 16), (17, 32), (33, 64), (65, 128))
EMBED_BATCH_PER_BAND = 8


@lru_cache(maxsize=1)
def embed_batch_texts() -> tuple[str, ...]:
    import numpy as np  # noqa: PLC0415
    from tokenizers import Tokenizer  # noqa: PLC0415

    from saved_model.recipes import minilm_encoder  # noqa: PLC0415
    from saved_model.recipes.vader_corpus import load_rated_sentences  # noqa: PLC0415

    tokenizer = Tokenizer.from_str(minilm_encoder.tokenizer_json(512, fixed_length=False))
    sentences = sorted({s.text for s in load_rated_sentences()})
    lengths = np.array([sum(e.attention_mask) for e in tokenizer.encode_batch(sentences)])
    rng = np.random.default_rng(0)
    chosen = []
    for low, high in EMBED_BATCH_BANDS:
        band = np.flatnonzero((lengths >= low) & (lengths <= high))
        chosen += [sentences[i] for i in rng.choice(band, size=EMBED_BATCH_PER_BAND, replace=False)]
    order = rng.permutation(len(chosen))  # lengths interleaved, not sorted
    return tuple(chosen[i] for i in order)


def embed_body(texts: list[str] | tuple[str, ...]) -> dict:
    """The function's /embed request (issue 12): one text or a batch, for the demo embedding model."""
    if len(texts) == 1:
        return {"text": texts[0], "model": EMBEDDING_MODEL}
    return {"texts": list(texts), "model": EMBEDDING_MODEL}


# One patient of scikit-learn's diabetes data set (load_diabetes(scaled=False), row 0), as the tabular model takes it.
TABULAR_ROW = {"vitals": [59.0, 32.1, 101.0], "sex": 2, "serum": [157.0, 93.2, 38.0, 4.0, 4.8598, 87.0]}
TABULAR_DTYPES = {"vitals": "float32", "sex": "int32", "serum": "float32"}
V2_DATATYPES = {"float32": "FP32", "int32": "INT32"}


def tabular_v2_body() -> dict:
    """TABULAR_ROW as an Open Inference Protocol (v2) JSON request: one tensor per input, batch of one."""
    tensors = []
    for name, value in TABULAR_ROW.items():
        data = value if isinstance(value, list) else [value]
        shape = [1, len(data)] if isinstance(value, list) else [1]
        tensors.append({"name": name, "shape": shape, "datatype": V2_DATATYPES[TABULAR_DTYPES[name]], "data": data})
    return {"inputs": tensors}

