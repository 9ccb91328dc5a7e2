"""A Keras `TextVectorization` layer's settings and vocabulary -> the `tokenizers` file the function tokenizes with.

The layer runs string ops that LiteRT cannot run, so convert takes it out of the model and writes what it does as
a tokenizer.json: a WordLevel model over the layer's vocabulary (id 0 the padding, id 1 the OOV token), with the
layer's own standardisation and split, exactly:
- `lower` is `tf.strings.lower`, which lowercases ASCII letters only ("É" stays "É"): 26 Replace normalizers, not
  the Unicode Lowercase normalizer;
- `strip_punctuation` removes the ASCII punctuation of the layer's own regex;
- `whitespace` splits on ASCII whitespace only (`tf.strings.split`: a no-break space does not split), runs of it
  count as one; `character` gives every Unicode code point; `None` keeps the whole string as one token;
- a custom `standardize` function made of tf.strings.lower, regex_replace and strip becomes the same normalizers
  (convert/custom_standardize.py); any other op is refused naming it;
- `output_sequence_length` becomes the function's max_length: the first tokens are kept, the rest padded with 0.
A setting the function cannot reproduce exactly is refused in one line that names it (code
`unsupported_text_vectorization`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from convert.custom_standardize import describe_standardize, normalizers_for
from convert.errors import ConversionError

# TextVectorization's own punctuation pattern (keras/src/layers/preprocessing/text_vectorization.py).
STRIP_PUNCTUATION = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'
ASCII_WHITESPACE = r"[ \t\n\x0b\x0c\r]+"
STANDARDIZE_MODES = ("lower_and_strip_punctuation", "lower", "strip_punctuation", None)
SPLIT_MODES = ("whitespace", "character", None)
PAD_ID = 0
CODE = "unsupported_text_vectorization"


def _refuse(layer: str, setting: str, problem: str, fix: str) -> ConversionError:
    return ConversionError(CODE, f"TextVectorization layer '{layer}': {setting} {problem}, which the function cannot "
                           f"reproduce exactly: {fix}")


def check_settings(name: str, config: dict[str, Any]) -> None:
    """Refuse every setting whose effect a WordLevel tokenizer cannot give exactly."""
    mode = config.get("output_mode", "int")
    if mode != "int":
        raise _refuse(name, "output_mode", f"is {mode!r} (a {mode} vector, not token ids)",
                      "use output_mode=\"int\" with an Embedding layer after it, or vectorize outside the model and "
                      "convert the rest with task tensor")
    if config.get("ngrams") is not None:
        raise _refuse(name, "ngrams", f"is {config['ngrams']!r}", "train without ngrams (ngrams=None)")
    standardize = config.get("standardize")
    if callable(standardize):
        normalizers_for(name, standardize)  # refused here, naming the op, unless the tokenizer can express it
    elif standardize not in STANDARDIZE_MODES:
        raise _refuse(name, "standardize", f"is {standardize!r}",
                      f"use one of {', '.join(repr(mode) for mode in STANDARDIZE_MODES)}, or a function of "
                      "tf.strings.lower, regex_replace and strip")
    split = config.get("split")
    if split not in SPLIT_MODES:
        raise _refuse(name, "split", "is a custom callable",
                      f"use one of {', '.join(repr(mode) for mode in SPLIT_MODES)}")
    if config.get("ragged"):
        raise _refuse(name, "ragged", "is True (ragged output)", "set ragged=False and an output_sequence_length")
    if config.get("output_sequence_length") is None:
        raise _refuse(name, "output_sequence_length", "is None (each batch is padded to its own longest text, so "
                      "a text's answer would depend on the texts batched with it)",
                      "set output_sequence_length, e.g. 64, and train again")
    encoding = str(config.get("encoding", "utf-8")).lower().replace("_", "-")
    if encoding not in ("utf-8", "utf8"):
        raise _refuse(name, "encoding", f"is {config['encoding']!r}", "use encoding=\"utf-8\"")


def check_vocabulary(name: str, vocabulary: list[str]) -> None:
    """The ids a WordLevel model can give: 0 the padding "" and 1 the one OOV token, then distinct words."""
    if len(vocabulary) < 2 or vocabulary[0] != "":
        raise _refuse(name, "the vocabulary", "does not start with the padding token \"\"", "keep the default "
                      "mask token (\"\")")
    if vocabulary[1] != "[UNK]" or "[UNK]" in vocabulary[2:]:
        raise _refuse(name, "num_oov_indices", "is not 1 (OOV words hashed over several ids)",
                      "use the default num_oov_indices=1 and oov_token \"[UNK]\"")
    if len(set(vocabulary)) != len(vocabulary):
        raise _refuse(name, "the vocabulary", "lists a word twice", "give every word once")


def tokenizer_json(vocabulary: list[str], standardize, split: str | None) -> str:
    """The tokenizer.json text: WordLevel over `vocabulary` (padding id 0, OOV "[UNK]" id 1), standardisation and
    split as the layer does them, and padding declared so that the function pads with id 0."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers  # noqa: PLC0415

    tokenizer = Tokenizer(models.WordLevel({word: index for index, word in enumerate(vocabulary)}, unk_token="[UNK]"))
    steps = normalizers_for("", standardize) if callable(standardize) else []
    if standardize in ("lower", "lower_and_strip_punctuation"):
        steps += [normalizers.Replace(chr(code), chr(code + 32)) for code in range(ord("A"), ord("Z") + 1)]
    if standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
        steps.append(normalizers.Replace(Regex(STRIP_PUNCTUATION), ""))
    if steps:
        tokenizer.normalizer = normalizers.Sequence(steps)
    if split == "whitespace":
        tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(ASCII_WHITESPACE), behavior="removed")
    elif split == "character":
        tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    # The function pads itself to max_length with the pad id the file declares; 0 is TextVectorization's padding.
    tokenizer.enable_padding(pad_id=PAD_ID, pad_token=vocabulary[PAD_ID])
    return tokenizer.to_str()


def write_tokenizer(layer, path: Path) -> dict:
    """Check the layer, write its tokenizer.json to `path`, and return the sidecar preprocessing for it."""
    config = layer.get_config()
    check_settings(layer.name, config)
    vocabulary = [str(word) for word in layer.get_vocabulary()]
    check_vocabulary(layer.name, vocabulary)
    path.write_text(tokenizer_json(vocabulary, config.get("standardize"), config.get("split")), encoding="utf-8")
    return {"type": "text", "tokenizer": path.name, "max_length": int(config["output_sequence_length"]),
            "lowercase": False}


def describe(config: dict) -> str:
    """One line for the progress log."""
    return json.dumps({key: config.get(key) for key in ("standardize", "split", "output_sequence_length",
                                                        "max_tokens")}, default=describe_standardize)
