"""convert/transformer's Keras layers against the numpy reference's independent code: MPNet's relative-position
buckets and every sentence-transformers pooling mode, on right-padded batches."""
from __future__ import annotations

import numpy as np
import pytest

from convert.transformer.layers import POOLING_MODES, keras_layers, relative_buckets
from convert.transformer.reference import mpnet_buckets, pool_tokens


def test_relative_buckets_agree_and_follow_mpnet_scheme():
    keras_side, reference_side = relative_buckets(400, 32), mpnet_buckets(400, 32)
    np.testing.assert_array_equal(keras_side, reference_side)
    row = keras_side[200]  # query at 200: key offsets -200..+199
    assert row[200] == 0 and row[201] == 17 and row[199] == 1  # same token; one after (upper half); one before
    assert row[200 + 7] == 16 + 7 and row[200 + 8] > 16 + 7  # exact offsets up to 7, logarithmic beyond
    assert row[200 + 128] == row[399] == 31 and row[200 - 128] == row[0] == 15  # the last bucket of each half


@pytest.mark.parametrize("mode", POOLING_MODES)
def test_pooling_layer_equals_the_reference(mode):
    rng = np.random.default_rng(7)
    hidden = rng.normal(size=(3, 6, 4)).astype(np.float32)
    hidden[0, 4:] = 50.0  # padding with large values: any leak shows in mean, max and last-token alike
    mask = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1], [1, 1, 0, 0, 0, 0]], dtype=np.int32)
    layer = keras_layers()[-1](mode)
    expected = pool_tokens(hidden.astype(np.float64), mask, mode)
    np.testing.assert_allclose(np.asarray(layer(hidden, mask)), expected, rtol=1e-5, atol=1e-5)
