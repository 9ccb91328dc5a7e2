"""A sentence-transformers (or plain Hugging Face encoder) directory read as convert needs it: the encoder's
config, the pooling and normalisation modules.json and 1_Pooling/config.json ask for, the longest input
(sentence_bert_config.json's max_seq_length), and tokenizer.json set to truncate there and pad each batch to its
longest text. Every refusal names the missing file or the unsupported setting."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from convert.errors import ConversionError
from convert.json_file import MAX_JSON_BYTES, read_json_file
from convert.transformer.config import CONFIG_FILE, EncoderConfig, read_config, read_config_json
from convert.transformer.layers import POOLING_MODES

MODULES_FILE = "modules.json"
TOKENIZER_FILE = "tokenizer.json"
SBERT_CONFIG_FILE = "sentence_bert_config.json"
MAX_TOKENIZER_BYTES = 64 * 1024 * 1024  # the largest multilingual tokenizer.json files are near 17 MB
MODULE_PREFIX = "sentence_transformers.models."
TRANSFORMER, POOLING, NORMALIZE = "Transformer", "Pooling", "Normalize"
# 1_Pooling/config.json's flags (sentence-transformers' Pooling module), each with the mode convert calls it.
POOLING_FLAGS = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls",
                 "pooling_mode_max_tokens": "max", "pooling_mode_lasttoken": "lasttoken",
                 "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len",
                 "pooling_mode_weightedmean_tokens": "weightedmean"}


@dataclass(frozen=True)
class EncoderDirectory:
    source: Path  # the directory the user named
    directory: Path  # where config.json, model.safetensors and tokenizer.json are (modules.json's Transformer)
    config: EncoderConfig
    pooling: str
    normalize: bool  # sentence-transformers' 2_Normalize module: its vectors are L2-normalised
    max_length: int
    lowercase: bool  # sentence_bert_config.json's do_lower_case: texts are lowercased before tokenizing
    tokenizer_json: str

    @property
    def name(self) -> str:
        return self.source.resolve().name


def is_encoder_directory(path: Path) -> bool:
    """A Hugging Face model directory rather than a SavedModel (which has saved_model.pb)."""
    return path.is_dir() and (path / CONFIG_FILE).is_file() and not (path / "saved_model.pb").is_file()


def _json(path: Path, what: str, want_object: bool = True, max_bytes: int = MAX_JSON_BYTES):
    """The file's JSON (an object unless `want_object` is False); `what` says how to write a missing one."""
    if not path.is_file():
        raise ConversionError("missing_file", f"{path} is missing: {what}")
    return read_json_file(path, "bad_config", "save the model again with SentenceTransformer.save() or "
                          "save_pretrained()", max_bytes=max_bytes, want_object=want_object)


def _modules(directory: Path) -> list[dict]:
    """modules.json's modules in order; a plain Hugging Face directory is one Transformer with mean pooling, as
    sentence-transformers loads it."""
    path = directory / MODULES_FILE
    if not path.is_file():
        return [{"type": TRANSFORMER, "path": ""}, {"type": POOLING, "path": None}]
    modules = _json(path, "", want_object=False)
    if not isinstance(modules, list) or not all(isinstance(m, dict) and isinstance(m.get("type"), str)
                                                for m in modules):
        raise ConversionError("bad_config", f"{path}: not a list of modules with a \"type\": save the model with "
                              "SentenceTransformer.save()")
    modules = sorted(modules, key=lambda m: m.get("idx", 0))
    kinds = [m["type"].removeprefix(MODULE_PREFIX) for m in modules]
    if kinds not in ([TRANSFORMER, POOLING], [TRANSFORMER, POOLING, NORMALIZE]):
        raise ConversionError("unsupported_module", f"{path}: modules {' -> '.join(kinds)}: convert serves "
                              f"{TRANSFORMER} -> {POOLING} (-> {NORMALIZE}), with no other module")
    return [{"type": kind, "path": module.get("path", "")} for kind, module in zip(kinds, modules, strict=True)]


def _pooling_mode(directory: Path, module_path: str | None, hidden: int) -> str:
    if module_path is None:
        return "mean"
    path = directory / module_path / CONFIG_FILE
    config = _json(path, "modules.json names a Pooling module: save the model with SentenceTransformer.save(), "
                         "which writes its config")
    dimension = config.get("word_embedding_dimension", hidden)
    if dimension != hidden:
        raise ConversionError("weights_mismatch", f"{path}: word_embedding_dimension {dimension}, but config.json's "
                              f"hidden_size is {hidden}: the pooling does not belong to this model")
    modes = [mode for flag, mode in POOLING_FLAGS.items() if config.get(flag)]
    if len(modes) != 1 or modes[0] not in POOLING_MODES:
        raise ConversionError("unsupported_pooling", f"{path}: pooling {' + '.join(modes) or 'none'}: convert "
                              f"serves exactly one of {', '.join(POOLING_MODES)}")
    return modes[0]


def _max_length(directory: Path, config: EncoderConfig) -> tuple[int, bool]:
    """(sentence_bert_config.json's max_seq_length, else tokenizer_config.json's model_max_length, capped by the
    position table; do_lower_case)."""
    sbert = directory / SBERT_CONFIG_FILE
    settings = _json(sbert, "") if sbert.is_file() else {}
    length = settings.get("max_seq_length")
    if length is None:
        tokenizer_config = directory / "tokenizer_config.json"
        length = (_json(tokenizer_config, "") if tokenizer_config.is_file() else {}).get("model_max_length")
    if not isinstance(length, int) or isinstance(length, bool) or length <= 0:
        length = config.longest_sequence
    return min(length, config.longest_sequence), bool(settings.get("do_lower_case", False))


def _tokenizer_json(directory: Path, max_length: int, config_pad_id: int | None) -> str:
    """tokenizer.json truncating at max_length and padding each batch to its longest text with the file's pad
    token, so that the file alone turns texts into exactly the ids the model expects."""
    path = directory / TOKENIZER_FILE
    tokenizer = _json(path, "convert serves the model with its fast tokenizer's file: save it with "
                            "AutoTokenizer.from_pretrained(...).save_pretrained(DIR)", max_bytes=MAX_TOKENIZER_BYTES)
    padding = tokenizer.get("padding") if isinstance(tokenizer.get("padding"), dict) else {}
    added = tokenizer.get("added_tokens") if isinstance(tokenizer.get("added_tokens"), list) else []
    pad_id = padding.get("pad_id", config_pad_id if config_pad_id is not None else 0)
    pad_token = padding.get("pad_token") or next(
        (t.get("content") for t in added if isinstance(t, dict) and t.get("id") == pad_id), None) or "[PAD]"
    tokenizer["truncation"] = {"direction": "Right", "max_length": max_length, "strategy": "LongestFirst",
                               "stride": 0}
    tokenizer["padding"] = {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": None,
                            "pad_id": pad_id, "pad_type_id": 0, "pad_token": pad_token}
    return json.dumps(tokenizer, ensure_ascii=False)


def read_encoder_directory(directory: Path) -> EncoderDirectory:
    directory = Path(directory)
    modules = _modules(directory)
    transformer_dir = directory / (modules[0]["path"] or "")
    config = read_config(transformer_dir)
    raw_config = read_config_json(transformer_dir / CONFIG_FILE)
    max_length, lowercase = _max_length(transformer_dir, config)
    return EncoderDirectory(
        source=directory, directory=transformer_dir, config=config,
        pooling=_pooling_mode(directory, modules[1]["path"], config.hidden),
        normalize=len(modules) == 3, max_length=max_length, lowercase=lowercase,
        tokenizer_json=_tokenizer_json(transformer_dir, max_length, raw_config.get("pad_token_id")))
