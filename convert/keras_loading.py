"""A Keras model file loaded as its user loads it: `.keras` or legacy `.h5` (Keras 3 reads both), the user's own
module of custom objects imported first (`--custom-objects my_module.py`), and a Lambda layer's Python code
loaded only when the user says the file is theirs (`--unsafe-deserialization`, Keras's `safe_mode=False`).
Each failure is one line that says which of these the file needs."""
from __future__ import annotations

import importlib.util
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from convert.errors import ConversionError, first_line

KERAS_SUFFIXES = (".keras", ".h5")
CUSTOM_OBJECTS_CODE = "bad_custom_objects"
UNSAFE_FLAG = "--unsafe-deserialization"
CUSTOM_FLAG = "--custom-objects"
MISSING_OBJECT = re.compile(r"Could not locate (?:function|class) '([^']+)'")


@dataclass(frozen=True)
class LoadOptions:
    custom_objects: Path | None = None  # a .py file defining the model's custom layers and functions
    unsafe_deserialization: bool = False  # load Lambda layers' Python code (Keras's safe_mode=False)


def import_custom_objects(path: Path) -> dict[str, Any]:
    """Import the user's module from its file (its folder importable too, for its own imports) and return the
    functions and classes it defines, by name, for Keras's `custom_objects`."""
    if not path.is_file() or path.suffix != ".py":
        raise ConversionError(CUSTOM_OBJECTS_CODE, f"{CUSTOM_FLAG} {path} is not a .py file: pass the module that "
                              "defines the model's custom layers and functions")
    name = f"convert_custom_objects_{re.sub(r'[^0-9A-Za-z_]', '_', path.stem)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.resolve().parent))
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # noqa: BLE001  (the user's code can raise anything on import)
        raise ConversionError(CUSTOM_OBJECTS_CODE, f"{CUSTOM_FLAG} {path.name} fails on import: "
                              f"{first_line(error)}") from None
    finally:
        sys.path.remove(str(path.resolve().parent))
    return {key: value for key, value in vars(module).items()
            if (inspect.isfunction(value) or inspect.isclass(value)) and value.__module__ == name}


def explain_load_failure(path: Path, error: Exception, options: LoadOptions) -> ConversionError:
    """Keras's exception as one line naming what the file needs."""
    text = str(error)
    if "Lambda" in text and "safe_mode" in text:
        return ConversionError("unsafe_lambda", f"{path.name} has a Lambda layer whose function is Python code, "
                               f"which Keras loads only from a file you trust: if you made it, pass {UNSAFE_FLAG} "
                               "(convert then loads it with safe_mode=False)")
    missing = MISSING_OBJECT.search(text)
    if missing or "register_keras_serializable" in text or "could not be deserialized" in text:
        what = f"'{missing.group(1)}'" if missing else "a custom layer or function"
        given = (f" ({options.custom_objects.name} does not define it)" if options.custom_objects is not None
                 else "")
        return ConversionError("custom_object_missing", f"Keras cannot load {path.name}: it needs {what}{given}: "
                               f"pass the module that defines it with {CUSTOM_FLAG} my_module.py")
    return ConversionError("not_a_keras_file", f"Keras cannot load {path.name}: {first_line(error)}")


def load_keras_model(path: Path, keras, options: LoadOptions | None = None):
    """The model in a .keras or .h5 file, uncompiled."""
    options = options or LoadOptions()
    objects = import_custom_objects(options.custom_objects) if options.custom_objects is not None else None
    try:
        return keras.saving.load_model(str(path), compile=False, custom_objects=objects,
                                       safe_mode=not options.unsafe_deserialization)
    except Exception as error:  # noqa: BLE001  (a corrupt archive, an unregistered custom object, ...)
        raise explain_load_failure(path, error, options) from None
