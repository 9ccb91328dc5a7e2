"""The model registry: tasks built at start, interpreters loaded once, unservable directories shown with a reason."""
from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

from function.errors import ModelNotFound, ModelUnavailable, WrongTask
from function.http_errors import status_of
from function.catalog.registry import DUPLICATE_NAME, ModelRegistry
from tests.support.function_fixtures import demo_models  # noqa: F401


@pytest.fixture()
def model_dir(demo_models, tmp_path):  # noqa: F811
    shutil.copytree(demo_models / "digits", tmp_path / "digits")
    return tmp_path


def edit_manifest(directory, **changes):
    path = directory / "manifest.json"
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def test_tasks_are_built_but_nothing_loads_until_used(model_dir):
    registry = ModelRegistry(model_dir)
    assert list(registry.tasks) == ["digits"] and not registry.is_loaded("digits")
    registry.task("digits", "image_classification").runner()
    assert registry.is_loaded("digits")


def test_racing_threads_load_one_interpreter(model_dir):
    task = ModelRegistry(model_dir).task("digits")
    with ThreadPoolExecutor(8) as pool:
        runners = list(pool.map(lambda _: task.runner(), range(16)))
    assert len({id(runner) for runner in runners}) == 1


def test_unknown_model_and_wrong_task(model_dir):
    registry = ModelRegistry(model_dir)
    with pytest.raises(ModelNotFound) as unknown:
        registry.task("nope")
    assert (status_of(unknown.value), unknown.value.code) == (404, "model_not_found")
    assert "digits" in unknown.value.message
    with pytest.raises(WrongTask) as wrong:
        registry.task("digits", "text_classification")
    assert (status_of(wrong.value), wrong.value.code) == (400, "wrong_model_task")


@pytest.mark.parametrize("directory,content,reason", [
    ("broken", "{ not json", "JSONDecodeError"),
    ("old", json.dumps({"schema": 1}), "schema 1"),
    ("notask", None, "task 'regression' is not one of"),
    ("badlabels", None, "3 labels for an output of 10 unit(s)"),
    ("badsize", None, "does not fit input shape"),
])
def test_a_directory_that_cannot_be_served_is_listed_with_its_reason_and_answers_503(model_dir, directory, content,
                                                                                    reason):
    target = model_dir / directory
    if content is None:
        shutil.copytree(model_dir / "digits", target)
        changes = {"name": directory, "notask": {"task": "regression"}, "badlabels": {"labels": ["a", "b", "c"]},
                   "badsize": {"preprocessing": {"type": "image", "color_mode": "L", "size": [28, 28]}}}[directory]
        edit_manifest(target, name=directory, **changes)
    else:
        target.mkdir()
        (target / "manifest.json").write_text(content)
    registry = ModelRegistry(model_dir)
    assert list(registry.tasks) == ["digits"]
    assert reason in registry.unservable[directory].reason
    with pytest.raises(ModelUnavailable) as caught:
        registry.task(directory)
    assert status_of(caught.value) == 503 and reason in caught.value.message


def test_two_directories_claiming_one_name_serve_neither_and_say_which(model_dir):
    shutil.copytree(model_dir / "digits", model_dir / "digits_copy")
    registry = ModelRegistry(model_dir)
    entry = registry.unservable["digits"]
    assert "digits" not in registry.tasks and entry.code == DUPLICATE_NAME
    assert f"{model_dir / 'digits'} and {model_dir / 'digits_copy'} both claim the name 'digits'" in entry.reason
    with pytest.raises(ModelUnavailable) as caught:
        registry.task("digits")
    assert status_of(caught.value) == 503 and entry.reason in caught.value.message


def test_a_hidden_directory_is_never_a_model(model_dir):
    """convert builds a model in .NAME.staging-* beside its place (convert/output_dir.py)."""
    shutil.copytree(model_dir / "digits", model_dir / ".digits.staging-abc")
    registry = ModelRegistry(model_dir)
    assert list(registry.tasks) == ["digits"] and not registry.unservable


def test_relabelling_changes_the_serving_version(model_dir):
    before = ModelRegistry(model_dir).task("digits").manifest.version
    labels = [f"digit {i}" for i in range(10)]
    edit_manifest(model_dir / "digits", labels=labels)
    after = ModelRegistry(model_dir).task("digits").manifest.version
    assert before != after


def test_history_fields_do_not_change_the_serving_version(model_dir):
    before = ModelRegistry(model_dir).task("digits").manifest.version
    edit_manifest(model_dir / "digits", created_at="2030-01-01T00:00:00Z", fidelity={"passed": True})
    assert ModelRegistry(model_dir).task("digits").manifest.version == before


def test_a_corrupt_model_file_is_503_with_the_reason_and_retried_later(model_dir):
    good = (model_dir / "digits" / "model.tflite").read_bytes()
    (model_dir / "digits" / "model.tflite").write_bytes(b"garbage")
    task = ModelRegistry(model_dir).task("digits")
    with pytest.raises(ModelUnavailable) as caught:
        task.runner()
    assert (status_of(caught.value), caught.value.code) == (503, "model_unavailable")
    assert "could not be loaded" in caught.value.message
    (model_dir / "digits" / "model.tflite").write_bytes(good)
    assert task.runner() is not None
