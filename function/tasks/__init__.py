"""One class per kind of model; the manifest's `task` picks it. A new kind of model is one more module here: every
Task class with its own `name` in this package is a kind (TASKS), in the order of its module's name."""
from __future__ import annotations

import importlib
import pkgutil

from function.tasks.base import Task


def _kinds() -> dict[str, type[Task]]:
    """Every Task class of this package's modules that names its kind (a base such as TextTask names none)."""
    classes = []
    for module in sorted(found.name for found in pkgutil.iter_modules(__path__)):
        loaded = importlib.import_module(f"{__name__}.{module}")
        classes += [value for value in vars(loaded).values() if isinstance(value, type) and issubclass(value, Task)
                    and value.__module__ == loaded.__name__ and "name" in vars(value)]
    return {task.name: task for task in classes}


TASKS: dict[str, type[Task]] = _kinds()
# The task of each kind of default model (its class's `default_model`): what GET /models names the defaults of.
DEFAULT_KINDS: dict[str, str] = {task.default_model: name for name, task in TASKS.items() if task.default_model}


def default_kind(task: str) -> str:
    """The kind of default model routes of `task` use (ServiceSettings.default_model's argument)."""
    return TASKS[task].default_model or "text"
