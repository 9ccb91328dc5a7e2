"""The last check of a text model's staged directory: its tokenizer.json loads as the function loads it, and every
id it can give is a row of the table the model's token-id input indexes (the manifest's value_range, which
convert/input_bounds.py found). A tokenizer that does not load made every request a 503; one whose ids run past
the table, a 500 ("gather index out of bounds") for every text holding such a token. Either is refused here, in one
line, and the directory is never written."""
from __future__ import annotations

from pathlib import Path

from convert.errors import ConversionError, first_line
from function.model.manifest import load_manifest


def check_tokenizer_fits(directory: Path) -> None:
    """Raises ConversionError("bad_tokenizer" or "tokenizer_out_of_range") for the model directory `directory`."""
    manifest = load_manifest(directory)
    preprocessing = manifest.preprocessing or {}
    if preprocessing.get("type") != "text":
        return
    name = preprocessing.get("tokenizer", "tokenizer.json")
    try:
        from tokenizers import Tokenizer  # noqa: PLC0415  (text models only)

        from function.preprocessing.text import TextEncoder  # noqa: PLC0415

        TextEncoder(directory / name, preprocessing.get("max_length", 1))  # exactly as the function loads it
        vocabulary = Tokenizer.from_file(str(directory / name)).get_vocab(with_added_tokens=True)
    except Exception as exc:  # noqa: BLE001  (whatever the tokenizers library says of the file: the user's file)
        raise ConversionError("bad_tokenizer", f"preprocessing.tokenizer {name!r} does not load as the function "
                              f"loads it: {type(exc).__name__}: {first_line(exc, 200)}") from exc
    highest = max(vocabulary.values(), default=-1)
    for spec in manifest.inputs:
        if spec.value_range is not None and spec.role == "input_ids" and highest > spec.value_range[1]:
            token = max(vocabulary, key=vocabulary.get)
            raise ConversionError("tokenizer_out_of_range", f"preprocessing.tokenizer {name!r} gives ids up to "
                                  f"{highest} ({token!r}), but input {spec.name!r} takes ids {spec.value_range[0]} "
                                  f"to {spec.value_range[1]} (the rows of the model's table): use the tokenizer the "
                                  "model was trained with")
