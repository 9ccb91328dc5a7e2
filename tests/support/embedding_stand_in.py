"""A text_embedding model for tests until the demo embedding model is in models/: the sentiment demo model's own
files under a manifest that serves its one output (a probability) as a 1-dimensional embedding.

It runs the real /embed and /v1/embeddings code paths (tokenizer, LiteRT, result cache, normalisation), which is
what the page and the fuzzer need; its vectors say nothing about meaning (every cosine similarity is +1 or -1).
"""
from __future__ import annotations

import json
from pathlib import Path

from function.model.manifest import MANIFEST_FILE

NAME = "sentiment_as_embedding"


def models_with_embedding(demo_models: Path, directory: Path) -> Path:
    """`directory` holding the demo models (linked, not copied) plus the stand-in text_embedding model."""
    directory.mkdir(parents=True, exist_ok=True)
    for model in sorted(demo_models.iterdir()):
        if (model / MANIFEST_FILE).is_file():
            (directory / model.name).symlink_to(model.resolve(), target_is_directory=True)
    stand_in = directory / NAME
    stand_in.mkdir()
    source = demo_models / "sentiment"
    manifest = json.loads((source / MANIFEST_FILE).read_text(encoding="utf-8"))
    for name in manifest["files"]:
        (stand_in / name).symlink_to((source / name).resolve())
    manifest.update(name=NAME, task="text_embedding", labels=[], output=None)
    manifest["outputs"] = [{**spec, "role": "embedding"} for spec in manifest["outputs"]]
    (stand_in / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    return directory
