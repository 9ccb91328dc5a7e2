"""Read and check sidecar.json (schema 1), the SavedModel's description of how to feed it (docs/model-format.md).

Strict: an unknown key, a key the task has no use for or a value off its list is refused in one line that names
the field, so that a typo never passes as a default the user did not choose.
"""
from __future__ import annotations

from pathlib import Path

from convert.errors import ConversionError
from convert.json_file import read_json_file
from convert.sidecar import SCHEMA, SIDECAR_FILE, SIDECAR_KEYS, VALIDATION_KEYS, Sidecar
from convert.sidecar_fields import (DOCS, check_keys, choice, file_in, mapping, model_name, refuse, require, show,
                                    strings, text)
from convert.tasks import TASK_KINDS

IMAGE_TASKS = ("image_classification", "image_regression")  # the tasks whose raw samples are image files


MAX_DEPTH = 16  # of nested objects and lists; the deepest sidecar field (preprocessing.mean) is at depth 3


def read_sidecar_file(path: Path) -> dict:
    return read_json_file(path, "bad_sidecar", f"write the fields as documented (see {DOCS})", name=SIDECAR_FILE,
                          max_depth=MAX_DEPTH, deep_hint="no sidecar field nests more than 3")


class _Problems:
    """The refusals of independent checks, gathered so that one run reports every one of them."""

    def __init__(self) -> None:
        self.errors: list[ConversionError] = []

    def attempt(self, check, *args):
        try:
            return check(*args)
        except ConversionError as error:
            self.errors.append(error)
            return None

    def raise_any(self) -> None:
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            listed = "; ".join(f"({index}) {error.message.removeprefix('sidecar.json: ')}"
                               for index, error in enumerate(self.errors, 1))
            raise ConversionError(self.errors[0].code, f"sidecar.json: {len(self.errors)} problems: {listed}")


def _validation(data: dict, saved_model_dir: Path, task: str | None) -> tuple[Path, Path, list[Path] | None]:
    validation = mapping(require(data, "validation"), "validation")
    check_keys(validation, VALIDATION_KEYS, "validation", "of \"validation\"")
    samples = file_in(saved_model_dir, require(validation, "samples", "validation"), "validation.samples")
    representative = samples
    if validation.get("representative") is not None:
        representative = file_in(saved_model_dir, validation["representative"], "validation.representative")
    raw_images = None
    if "raw_images" in validation:
        if task not in IMAGE_TASKS:
            raise refuse("validation.raw_images", f"does not apply to task \"{task}\" (image files are raw samples "
                         "of image models)", "remove it")
        files = strings(validation["raw_images"], "validation.raw_images", "image files inside the SavedModel "
                        "directory, in the order of the expected array")
        raw_images = [file_in(saved_model_dir, name, f"validation.raw_images[{index}]")
                      for index, name in enumerate(files)]
    return samples, representative, raw_images


def _schema(data: dict) -> None:
    if data.get("schema") != SCHEMA:
        raise refuse("schema", f"is {show(data.get('schema'))}", f"write {SCHEMA} (this convert reads schema {SCHEMA})")


def load_sidecar(saved_model_dir: Path) -> Sidecar | None:
    """The parsed sidecar, or None when the SavedModel has none (it still converts, with generated inputs). Every
    independent problem (keys, schema, name, the task's fields, validation) is reported in one refusal."""
    path = saved_model_dir / SIDECAR_FILE
    if not path.is_file():
        return None
    return parse_sidecar(read_sidecar_file(path), saved_model_dir)


def parse_sidecar(data: dict, saved_model_dir: Path) -> Sidecar:
    """A sidecar's fields (read from sidecar.json, or inferred), checked as sidecar.json is."""
    problems = _Problems()
    problems.attempt(check_keys, data, SIDECAR_KEYS, "", "of sidecar.json")
    problems.attempt(_schema, data)
    name = problems.attempt(lambda: model_name(require(data, "name")))
    task = problems.attempt(lambda: choice(require(data, "task"), "task", list(TASK_KINDS)))
    fields = problems.attempt(TASK_KINDS[task].parse, data, saved_model_dir) if task else None
    files = problems.attempt(_validation, data, saved_model_dir, task)
    extra = {}
    if "metrics" in data:
        extra["metrics"] = problems.attempt(mapping, data["metrics"], "metrics")
    if "description" in data:
        extra["description"] = problems.attempt(text, data["description"], "description")
    problems.raise_any()
    samples, representative, raw_images = files
    return Sidecar(directory=saved_model_dir, name=name, task=task, labels=fields.labels, output=fields.output,
                   preprocessing=fields.preprocessing, inputs=fields.inputs, outputs=fields.outputs, samples=samples,
                   representative=representative, raw_images=raw_images, extra=extra,
                   multi_label=fields.multi_label, class_output=fields.class_output)
