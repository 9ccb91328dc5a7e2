"""`lambda-tflite serve` (function/devserver/command.py): where it looks for models and keeps results when run from
any folder. Serving itself: tests/e2e/test_package_install.py runs the installed command."""
from __future__ import annotations

from pathlib import Path

import pytest

from function.devserver import command

REPO = Path(__file__).resolve().parents[2]


def test_without_models_here_it_names_the_folder_it_looked_for(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MODEL_DIR", raising=False)
    monkeypatch.delenv("MODEL_SOURCE", raising=False)
    with pytest.raises(SystemExit) as stopped:
        command.main([])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: lambda-tflite serve ")
    assert f"{tmp_path / 'models'}: no such folder; pass the folder that holds your converted models" in err


def test_a_model_dir_argument_that_is_not_a_folder_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        command.main([str(tmp_path / "nowhere"), "--port", "0"])
    assert f"{tmp_path / 'nowhere'}: no such folder" in capsys.readouterr().err


def test_results_go_to_the_users_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert command.user_cache_file() == tmp_path / "lambda-tflite-serving" / "results.sqlite3"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert command.user_cache_file() == tmp_path / "home" / ".cache" / "lambda-tflite-serving" / "results.sqlite3"



def test_inside_the_checkout_the_default_is_its_models_folder_from_any_sub_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO / "docs")
    assert command.default_model_dir() == REPO / "models"
    monkeypatch.chdir(tmp_path)
    assert command.default_model_dir() == Path("models")
