"""Read and check sidecar.json (schema 1), the SavedModel's description of how to feed it (docs/model-format.md).

Strict: an unknown key, a key the task has no use for or a value off its list is refused in one line that names
the field, so that a typo never passes as a default the user did not choose.
"""
from __future__ import annotations

import json
from pathlib import Path

from convert.errors import ConversionError
from convert.sidecar import SCHEMA, SIDECAR_FILE, SIDECAR_KEYS, VALIDATION_KEYS, Sidecar
from convert.sidecar_fields import (DOCS, check_keys, choice, file_in, mapping, model_name, refuse, require, show,
                                    strings, text)
from convert.tasks import TASK_KINDS


def read_sidecar_file(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConversionError("bad_sidecar", f"sidecar.json: not valid JSON ({error}): fix the syntax "
                              f"(see {DOCS})") from None
    if not isinstance(data, dict):
        raise ConversionError("bad_sidecar", f"sidecar.json: holds a JSON {type(data).__name__}: write one JSON "
                              f"object (see {DOCS})")
    return data


def load_sidecar(saved_model_dir: Path) -> Sidecar | None:
    """The parsed sidecar, or None when the SavedModel has none (it still converts, with generated inputs)."""
    path = saved_model_dir / SIDECAR_FILE
    if not path.is_file():
        return None
    data = read_sidecar_file(path)
    check_keys(data, SIDECAR_KEYS, "", "of sidecar.json")
    if data.get("schema") != SCHEMA:
        raise refuse("schema", f"is {show(data.get('schema'))}", f"write {SCHEMA} (this convert reads schema {SCHEMA})")
    name = model_name(require(data, "name"))
    task = choice(require(data, "task"), "task", list(TASK_KINDS))
    fields = TASK_KINDS[task].parse(data, saved_model_dir)
    validation = mapping(require(data, "validation"), "validation")
    check_keys(validation, VALIDATION_KEYS, "validation", "of \"validation\"")
    samples = file_in(saved_model_dir, require(validation, "samples", "validation"), "validation.samples")
    representative = samples
    if validation.get("representative") is not None:
        representative = file_in(saved_model_dir, validation["representative"], "validation.representative")
    raw_images = None
    if "raw_images" in validation:
        if task != "image_classification":
            raise refuse("validation.raw_images", f"does not apply to task \"{task}\" (image files are raw samples "
                         "of image models)", "remove it")
        files = strings(validation["raw_images"], "validation.raw_images", "image files inside the SavedModel "
                        "directory, in the order of the expected array")
        raw_images = [file_in(saved_model_dir, name, f"validation.raw_images[{index}]")
                      for index, name in enumerate(files)]
    extra = {}
    if "metrics" in data:
        extra["metrics"] = mapping(data["metrics"], "metrics")
    if "description" in data:
        extra["description"] = text(data["description"], "description")
    return Sidecar(directory=saved_model_dir, name=name, task=task, labels=fields.labels, output=fields.output,
                   preprocessing=fields.preprocessing, inputs=fields.inputs, outputs=fields.outputs, samples=samples,
                   representative=representative, raw_images=raw_images, extra=extra,
                   multi_label=fields.multi_label)
