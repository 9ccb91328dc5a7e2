"""all-MiniLM-L6-v2 as sentence-transformers runs it, in plain numpy (float64) from the shipped files: the
reference the `minilm` SavedModel (and any other stack serving it) is measured against.

convert's numpy reference for BERT and MPNet directories (convert/transformer/reference.py), written from BERT's
definition and not from the Keras layers: sizes, epsilon and activation from the package's config.json, padding
kept out of attention with -inf scores, exact erf GELU, then the mean of the last hidden states over real tokens
(sentence-transformers' 1_Pooling: pooling_mode_mean_tokens). The vector is NOT normalised here;
sentence-transformers' 2_Normalize module (and the function) do that afterwards.
"""
from __future__ import annotations

from pathlib import Path

from convert.transformer.reference import EncoderReference, cosine
from saved_model.recipes.minilm_encoder import package_dir

__all__ = ["MiniLMReference", "cosine"]


class MiniLMReference(EncoderReference):
    def __init__(self, directory: Path | None = None):
        super().__init__(Path(directory or package_dir()), pooling="mean")
