"""Text classifiers besides the demo `sentiment` (two labels), made of the demo models' own files under other
manifests, for the tests of /classify-text:

- `topics`: minilm's 384 outputs served as the logits of a 384-label classifier (labels topic_000 ... topic_383):
  a classifier with many labels, whose every probability the test can compute itself from /embed's raw vector;
- `sentiment_flags`: the sentiment model's one sigmoid unit as a multi-label model of one label, "positive".

They run the real code paths (tokenizer, LiteRT, result cache, ranking); their labels mean nothing.
"""
from __future__ import annotations

import json
from pathlib import Path

from function.model.manifest import MANIFEST_FILE

TOPICS = "topics"
FLAGS = "sentiment_flags"


def _linked_copy(source: Path, directory: Path, **changes) -> dict:
    """`directory` holding `source`'s files (linked) and its manifest with `changes`; the new manifest."""
    directory.mkdir()
    manifest = json.loads((source / MANIFEST_FILE).read_text(encoding="utf-8"))
    for name in manifest["files"]:
        (directory / name).symlink_to((source / name).resolve())
    manifest.update(name=directory.name, **changes)
    return manifest


def models_with_text_classifiers(demo_models: Path, directory: Path) -> Path:
    """`directory` holding the demo models (linked) plus `topics` and `sentiment_flags`."""
    directory.mkdir(parents=True, exist_ok=True)
    for model in sorted(demo_models.iterdir()):
        if (model / MANIFEST_FILE).is_file():
            (directory / model.name).symlink_to(model.resolve(), target_is_directory=True)
    topics = _linked_copy(demo_models / "minilm", directory / TOPICS, task="text_classification", output="logits")
    [output] = topics["outputs"]
    topics["labels"] = [f"topic_{unit:03d}" for unit in range(output["shape"][-1])]
    topics["outputs"] = [{**output, "role": "scores"}]
    flags = _linked_copy(demo_models / "sentiment", directory / FLAGS, labels=["positive"], multi_label=True)
    for manifest in (topics, flags):
        (directory / manifest["name"] / MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    return directory
