"""bench/encoder_onnx.py, the ONNX Runtime + tokenizers stack of bench section 19, held to sentence-transformers on
the encoder tests' 200 sentences before any figure is taken from it."""
from __future__ import annotations

import numpy as np
import pytest

from convert.transformer.reference import cosine
from saved_model.recipes.encoder_packages import mpnet_directory
from tests.support.encoder_sentences import varied_sentences
from tests.support.sentence_transformers_reference import reference_vectors

MIN_COSINE = 0.9999
BATCH = 32

pytestmark = pytest.mark.slow


def test_the_benchmarks_onnx_graph_of_mpnet_equals_sentence_transformers(tmp_path):
    """bench/encoder_onnx.py's graph of all-mpnet-base-v2 (the ONNX Runtime + tokenizers stack of bench section 19:
    relative-position bias, positions from pad_token_id + 1), batches padded to their longest text, answers
    sentence-transformers' vectors on the 200 sentences."""
    import onnxruntime  # noqa: PLC0415
    from tokenizers import Tokenizer  # noqa: PLC0415

    from bench import encoder_onnx  # noqa: PLC0415
    from convert.transformer.directory import read_encoder_directory  # noqa: PLC0415

    directory = mpnet_directory(tmp_path / 'source')
    sentences = varied_sentences()
    session = onnxruntime.InferenceSession(str(encoder_onnx.export(directory, tmp_path) / "model.onnx"),
                                           providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_str(read_encoder_directory(directory).tokenizer_json)
    vectors = []
    for start in range(0, len(sentences), BATCH):
        encodings = tokenizer.encode_batch(sentences[start:start + BATCH])
        feed = {"input_ids": np.array([e.ids for e in encodings], np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], np.int64)}
        vectors.append(session.run([encoder_onnx.OUTPUT_NAME], feed)[0])
    cosines = cosine(reference_vectors(directory, sentences), np.concatenate(vectors))
    assert cosines.min() >= MIN_COSINE, f"worst: sentence {cosines.argmin()}"
