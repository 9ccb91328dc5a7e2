"""A task kind is owned by its class: its name, and the default model its routes use (function/tasks/). Nothing
else lists the kinds: GET /models' defaults, the routes' and the OpenAPI document's default model come from it."""
from __future__ import annotations

from function.config import Env, ServiceSettings
from function.tasks import DEFAULT_KINDS, TASKS, default_kind

SETTINGS = ServiceSettings.from_env({"DEFAULT_IMAGE_MODEL": "img", "DEFAULT_TEXT_MODEL": "txt",
                                     "DEFAULT_EMBEDDING_MODEL": "emb"})


def test_every_kind_with_a_default_names_the_setting_and_variable_that_set_it():
    assert DEFAULT_KINDS == {task.default_model: name for name, task in TASKS.items() if task.default_model}
    assert list(DEFAULT_KINDS) == ["image", "text", "embedding"]
    for kind, task in DEFAULT_KINDS.items():
        model, variable = SETTINGS.default_model(default_kind(task))
        assert getattr(Env, variable) == variable and model == {"image": "img", "text": "txt", "embedding": "emb"}[kind]


def test_a_kind_without_a_default_uses_the_text_default_as_before():
    assert TASKS["tensor"].default_model == ""
    assert SETTINGS.default_model(default_kind("tensor")) == ("txt", "DEFAULT_TEXT_MODEL")


def test_the_kinds_are_the_task_classes_that_name_one_found_in_the_package():
    """No list to extend: a new kind is one more module in function/tasks/ (a base class such as TextTask is none)."""
    assert list(TASKS) == ["image_classification", "image_regression", "tensor", "text_classification",
                           "text_embedding"]
    assert {task.__name__ for task in TASKS.values()} == {"ImageClassification", "ImageRegression", "TensorTask",
                                                          "TextClassification", "TextEmbedding"}
