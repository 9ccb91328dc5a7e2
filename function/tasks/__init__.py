"""One class per kind of model; the manifest's `task` picks it. A new kind of model is one more entry here."""
from __future__ import annotations

from function.tasks.base import Task
from function.tasks.image_classification import ImageClassification
from function.tasks.image_regression import ImageRegression
from function.tasks.text_classification import TextClassification
from function.tasks.tensor import TensorTask
from function.tasks.text_embedding import TextEmbedding

TASKS: dict[str, type[Task]] = {task.name: task for task in (ImageClassification, ImageRegression, TextClassification,
                                                           TextEmbedding, TensorTask)}
# The task of each kind of default model (its class's `default_model`): what GET /models names the defaults of.
DEFAULT_KINDS: dict[str, str] = {task.default_model: name for name, task in TASKS.items() if task.default_model}


def default_kind(task: str) -> str:
    """The kind of default model routes of `task` use (ServiceSettings.default_model's argument)."""
    return TASKS[task].default_model or "text"
