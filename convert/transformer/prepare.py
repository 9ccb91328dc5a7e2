"""A sentence-transformers (or plain Hugging Face encoder) directory made into the SavedModel directory the usual
pipeline converts: `python -m convert HF_DIR OUT_DIR`.

The encoder is rebuilt in Keras from model.safetensors (convert/transformer/model.py) and, before anything is
exported, held against the independent numpy forward pass of the same files (reference.py) on texts from a few
tokens to the model's longest input: every text's cosine must reach REFERENCE_MIN_COSINE. The SavedModel gets a
text_embedding sidecar, the directory's tokenizer.json (truncating at max_seq_length), validation texts whose
`expected` vectors are the numpy reference's (so the served gate measures every quantization mode against the
reference, not against the rebuild) and the same texts to calibrate int8 with.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from convert.errors import ConversionError
from convert.quiet import import_tensorflow
from convert.transformer.directory import EncoderDirectory, read_encoder_directory
from convert.transformer.model import INPUT_NAMES, build_encoder
from convert.transformer.reference import EncoderReference, cosine
from convert.transformer.sample_texts import SENTENCES
from convert.transformer.weights import load_weights

# float32 through a dozen layers rounds to ~1e-6; a wrong weight, mask or position costs far more.
REFERENCE_MIN_COSINE = 0.9999
OUTPUT_NAME = "output_0"  # what model.export() names a single-output model's signature output
DOCUMENTS = 4  # joined texts from just past 128 tokens to the model's longest input


@dataclass(frozen=True)
class ReferenceAgreement:
    texts: int
    min_cosine: float
    mean_cosine: float
    tokens: tuple[int, int]  # shortest and longest text, in tokens

    def text(self) -> str:
        return (f"cosine min {self.min_cosine:.7f} mean {self.mean_cosine:.7f} on {self.texts} texts of "
                f"{self.tokens[0]}-{self.tokens[1]} tokens")


def encode(tokenizer, texts: list[str], lowercase: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(input_ids, attention_mask) int32 (len(texts), the batch's longest text)."""
    encodings = tokenizer.encode_batch([t.lower() for t in texts] if lowercase else texts)
    return (np.array([e.ids for e in encodings], dtype=np.int32),
            np.array([e.attention_mask for e in encodings], dtype=np.int32))


def make_tokenizer(encoder: EncoderDirectory):
    from tokenizers import Tokenizer  # noqa: PLC0415

    try:
        tokenizer = Tokenizer.from_str(encoder.tokenizer_json)
    except Exception as error:  # noqa: BLE001  (the tokenizers library's own parse errors)
        raise ConversionError("bad_tokenizer", f"{encoder.directory / 'tokenizer.json'}: the tokenizers library "
                              f"cannot read it ({error}): save it again with save_pretrained()") from None
    largest = max(tokenizer.get_vocab(with_added_tokens=True).values())
    if largest >= encoder.config.vocab_size:
        raise ConversionError("weights_mismatch", f"tokenizer.json has token id {largest}, but config.json's "
                              f"vocab_size is {encoder.config.vocab_size}: the tokenizer does not belong to this model")
    return tokenizer


def sample_texts(tokenizer, max_length: int, lowercase: bool = False) -> list[str]:
    """Every sample sentence, then DOCUMENTS texts joined from them: from past 128 tokens up to (and, for the
    last, truncated at) max_length."""
    texts = list(SENTENCES)
    targets = sorted({min(129 + (max_length - 129) * i // max(DOCUMENTS - 1, 1), max_length + 1)
                      for i in range(DOCUMENTS)}) if max_length > 129 else [max_length + 1]
    for index, target in enumerate(targets):
        document, cursor = "", index
        while True:
            document = f"{document} {SENTENCES[cursor % len(SENTENCES)]}".strip()
            cursor += 1
            ids, _ = encode(tokenizer, [document], lowercase)
            if ids.shape[1] >= min(target, max_length) or cursor > 50 * len(SENTENCES):
                break
        texts.append(document)
    return texts


def check_against_reference(model, reference: EncoderReference, ids: np.ndarray,
                            mask: np.ndarray) -> tuple[ReferenceAgreement, np.ndarray]:
    """The Keras rebuild vs the numpy reference, each text alone."""
    expected = reference.embed_each(ids, mask)
    lengths = mask.sum(axis=1)
    # Each text at its own length (a padded batch is the gate's and the function's job, checked after export):
    # padding 40 short texts to a base model's 384 tokens would cost ten times the compute.
    actual = np.concatenate([np.asarray(model([ids[i:i + 1, :n], mask[i:i + 1, :n]]))
                             for i, n in enumerate(lengths)])
    cosines = cosine(expected, actual)
    agreement = ReferenceAgreement(len(ids), float(cosines.min()), float(cosines.mean()),
                                   (int(lengths.min()), int(lengths.max())))
    if not agreement.min_cosine >= REFERENCE_MIN_COSINE:
        worst = int(np.argmin(cosines))
        raise ConversionError("reference_mismatch", f"the Keras rebuild of {reference.config.family} disagrees with "
                              f"the numpy reference ({agreement.text()}; worst: text {worst} of {lengths[worst]} "
                              f"tokens): this config.json has a setting convert does not rebuild; please report it")
    return agreement, expected.astype(np.float32)


def sidecar(encoder: EncoderDirectory, name: str, agreement: ReferenceAgreement) -> dict:
    norm = ("sentence-transformers L2-normalises them (2_Normalize), as the function does by default" if
            encoder.normalize else "sentence-transformers does not normalise them: request \"normalize\": false "
            "for its vectors")
    return {
        "schema": 1, "name": name, "task": "text_embedding",
        "preprocessing": {"type": "text", "tokenizer": "tokenizer.json", "max_length": encoder.max_length,
                          "lowercase": encoder.lowercase},
        "inputs": {role: role for role in INPUT_NAMES},
        "outputs": {"embedding": OUTPUT_NAME},
        "validation": {"samples": "validation.npz", "representative": "representative.npz"},
        "metrics": {"reference_min_cosine": round(agreement.min_cosine, 8), "reference_texts": agreement.texts,
                    "reference_tokens": list(agreement.tokens)},
        "description": f"{encoder.name} ({encoder.config.family}, {encoder.config.layers} layers): {encoder.pooling} "
                       f"pooling, {encoder.config.hidden}-d vectors, not normalised in the model ({norm}); up to "
                       f"{encoder.max_length} tokens.",
    }


def prepare_encoder_directory(source: Path, work: Path, name: str | None = None,
                              log: Callable[[str], None] = print) -> Path:
    """Rebuild, check and export the encoder in `source` as WORK/saved_model (with its sidecar and samples)."""
    encoder = read_encoder_directory(source)
    weights = load_weights(encoder.directory, encoder.config)
    tokenizer = make_tokenizer(encoder)
    log(f"  {encoder.name}: {encoder.config.family}, {encoder.config.layers} layers, {encoder.config.hidden}-d, "
        f"{encoder.pooling} pooling{' + normalize' if encoder.normalize else ''}, up to {encoder.max_length} tokens")
    texts = sample_texts(tokenizer, encoder.max_length, encoder.lowercase)
    ids, mask = encode(tokenizer, texts, encoder.lowercase)
    import_tensorflow()
    model = build_encoder(encoder.config, weights, encoder.max_length, encoder.pooling, name="encoder")
    log("  checking the Keras rebuild against the numpy reference of the same files")
    reference = EncoderReference(encoder.directory, encoder.pooling, encoder.config)
    agreement, expected = check_against_reference(model, reference, ids, mask)
    log(f"  Keras rebuild vs numpy reference: {agreement.text()}")
    out = work / "saved_model"
    model.export(str(out), verbose=False)
    np.savez_compressed(out / "validation.npz", inputs_input_ids=ids, inputs_attention_mask=mask,
                        raw_texts=np.array(texts), expected=expected)
    np.savez_compressed(out / "representative.npz", inputs_input_ids=ids, inputs_attention_mask=mask)
    (out / "tokenizer.json").write_text(encoder.tokenizer_json, encoding="utf-8")
    (out / "sidecar.json").write_text(json.dumps(sidecar(encoder, name or encoder.name, agreement), indent=2,
                                                 ensure_ascii=False) + "\n", encoding="utf-8")
    return out
