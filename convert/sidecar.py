"""Read and check sidecar.json, the SavedModel's description of how to feed it (docs/model-format.md)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from convert.errors import ConversionError

SIDECAR_FILE = "sidecar.json"
TASKS = ("image_classification", "text_classification")
OUTPUT_KINDS = ("probabilities", "logits")
ROLES_BY_TYPE = {"image": ({"image"}, set()), "text": ({"input_ids"}, {"attention_mask"})}


@dataclass
class Sidecar:
    directory: Path  # the SavedModel directory the file names below are relative to
    name: str
    task: str
    labels: list[str]
    output: str
    preprocessing: dict
    inputs: dict[str, str]
    samples: Path
    representative: Path
    extra: dict = field(default_factory=dict)  # anything else the sidecar carries (e.g. training metrics)

    @property
    def tokenizer(self) -> Path | None:
        name = self.preprocessing.get("tokenizer")
        return self.directory / name if name else None


def _fail(problem: str) -> ConversionError:
    return ConversionError("bad_sidecar", f"sidecar.json: {problem} (see docs/model-format.md)")


def _require(data: dict, key: str, kind: type | tuple[type, ...]):
    if key not in data:
        raise _fail(f"missing \"{key}\"")
    if not isinstance(data[key], kind):
        raise _fail(f"\"{key}\" has the wrong type")
    return data[key]


def _file_in(directory: Path, name: str, key: str) -> Path:
    # Names are relative to the SavedModel directory and must stay inside it.
    if not isinstance(name, str) or not name or Path(name).is_absolute() or ".." in Path(name).parts:
        raise _fail(f"\"{key}\" must be a file name inside the SavedModel directory")
    path = directory / name
    if not path.is_file():
        raise _fail(f"\"{key}\" names {name}, which is not in {directory}")
    return path


def load_sidecar(saved_model_dir: Path) -> Sidecar | None:
    """The parsed sidecar, or None when the SavedModel has none (it still converts, with generated inputs)."""
    path = saved_model_dir / SIDECAR_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _fail(f"not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise _fail("must be a JSON object")
    if data.get("schema") != 1:
        raise _fail(f"unsupported schema {data.get('schema')!r}, expected 1")
    name = _require(data, "name", str)
    task = _require(data, "task", str)
    if task not in TASKS:
        raise _fail(f"task {task!r} is not one of {', '.join(TASKS)}")
    labels = _require(data, "labels", list)
    if not labels or not all(isinstance(label, str) for label in labels):
        raise _fail("\"labels\" must be a non-empty list of strings")
    output = _require(data, "output", str)
    if output not in OUTPUT_KINDS:
        raise _fail(f"output {output!r} is not one of {', '.join(OUTPUT_KINDS)}")
    preprocessing = _require(data, "preprocessing", dict)
    kind = preprocessing.get("type")
    if kind not in ROLES_BY_TYPE or task != f"{kind}_classification":
        raise _fail(f"preprocessing type {kind!r} does not fit task {task!r}")
    inputs = _require(data, "inputs", dict)
    required, optional = ROLES_BY_TYPE[kind]
    if not required <= set(inputs) <= required | optional:
        raise _fail(f"\"inputs\" roles {sorted(inputs)} do not fit a {kind} model "
                    f"(needs {sorted(required)}, may have {sorted(optional)})")
    if not all(isinstance(value, str) for value in inputs.values()):
        raise _fail("\"inputs\" must map each role to a signature input name")
    validation = _require(data, "validation", dict)
    samples = _file_in(saved_model_dir, validation.get("samples"), "validation.samples")
    representative = samples
    if validation.get("representative") is not None:
        representative = _file_in(saved_model_dir, validation["representative"], "validation.representative")
    if kind == "text":
        _file_in(saved_model_dir, preprocessing.get("tokenizer"), "preprocessing.tokenizer")
    known = {"schema", "name", "task", "labels", "output", "preprocessing", "inputs", "validation"}
    return Sidecar(directory=saved_model_dir, name=name, task=task, labels=labels, output=output,
                   preprocessing=preprocessing, inputs=inputs, samples=samples, representative=representative,
                   extra={key: value for key, value in data.items() if key not in known})
