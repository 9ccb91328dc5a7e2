"""What a checked sidecar.json (schema 1) holds: the SavedModel's description of how to feed it
(docs/model-format.md). Plain data, imported by the task kinds; convert/sidecar_reader.py reads and checks the
file."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

SIDECAR_FILE = "sidecar.json"
SCHEMA = 1
# Every key a schema 1 sidecar may hold, whatever the task.
SIDECAR_KEYS = ("schema", "name", "task", "labels", "output", "preprocessing", "inputs", "outputs", "validation",
                "metrics", "description", "multi_label", "class_output")
VALIDATION_KEYS = ("samples", "representative", "raw_images")


@dataclass(frozen=True)
class Sidecar:
    directory: Path  # the SavedModel directory the file names below are relative to
    name: str
    task: str
    labels: list[str] | None
    output: str | None  # probabilities | logits (classification only)
    preprocessing: dict | None  # normalised: every default written out
    inputs: dict[str, str] | list[str] | None  # role -> signature input name; for tensor, names in client order
    outputs: dict[str, str] | list[str] | None
    samples: Path
    representative: Path
    raw_images: list[Path] | None = None  # image files whose expected answers are in `samples` (served gate)
    extra: dict = field(default_factory=dict)  # metrics, description: carried, never interpreted
    multi_label: bool = False  # classifiers: each label its own sigmoid unit
    class_output: str | None = None  # an image classifier with several outputs: the one its labels score

    @property
    def tokenizer(self) -> Path | None:
        name = (self.preprocessing or {}).get("tokenizer")
        return self.directory / name if name else None
