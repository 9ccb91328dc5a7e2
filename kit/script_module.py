"""A script of the repo (tools/, examples/) imported as a module, as its users run it: by its file, not a package."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_script(path: Path) -> ModuleType:
    """`path` run as the module named after its file. It is registered in sys.modules first: a dataclass in it
    looks its own module up there while it is being defined."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
