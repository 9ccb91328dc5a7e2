"""SERVE_PAGE (the page at GET /), MODEL_DIR_WATCH and LIMIT_VARIABLES (the limits GET /openapi.json publishes) in
function/config.py."""
from __future__ import annotations


import pytest

from function.config import LIMIT_VARIABLES, ServiceSettings


def test_the_page_is_off_unless_turned_on():
    assert ServiceSettings.from_env({}).serve_page is False
    assert ServiceSettings.from_env({"SERVE_PAGE": "true"}).serve_page is True
    assert ServiceSettings.from_env({"SERVE_PAGE": " TRUE "}).serve_page is True
    assert ServiceSettings.from_env({"SERVE_PAGE": "false"}).serve_page is False


@pytest.mark.parametrize("value", ["yes", "1", "on"])
def test_anything_but_true_or_false_is_refused(value):
    with pytest.raises(ValueError, match="SERVE_PAGE must be true or false"):
        ServiceSettings.from_env({"SERVE_PAGE": value})


def test_every_limit_is_a_setting_read_from_its_variable():
    fields = set(ServiceSettings._fields)
    assert {variable.lower() for variable in LIMIT_VARIABLES} <= fields
    settings = ServiceSettings.from_env({variable: str(100 + i) for i, variable in enumerate(LIMIT_VARIABLES)})
    assert [settings.limit(variable) for variable in LIMIT_VARIABLES] == [100 + i for i in range(len(LIMIT_VARIABLES))]


def test_the_model_directory_is_watched_only_when_asked(tmp_path):
    """In Lambda the image's models/ never changes: no stat per request unless MODEL_DIR_WATCH=true (the local
    server sets it)."""
    from function.catalog.configured_source import open_model_source

    for value, watched in ((None, False), ("false", False), ("true", True)):
        settings = ServiceSettings.from_env({"MODEL_DIR": str(tmp_path)} | ({"MODEL_DIR_WATCH": value} if value
                                                                              else {}))
        source = open_model_source(settings)
        source.models()
        (tmp_path / f"new-{value}").mkdir()  # a new directory appears
        assert source.due() is watched and source.checks_on_request is watched
    with pytest.raises(ValueError, match="MODEL_DIR_WATCH must be true or false"):
        ServiceSettings.from_env({"MODEL_DIR_WATCH": "yes"})
