"""Structured request logs: one parseable JSON object per line, fields at the top level, stage timings summed."""
from __future__ import annotations

import io
import json
import logging

from function.log import JsonLineFormatter, Timings


def _line(record_fields: dict, exc_info=None) -> dict:
    record = logging.LogRecord("function", logging.INFO, __file__, 1, "request", None, exc_info)
    record.fields = record_fields
    return json.loads(JsonLineFormatter().format(record))


def test_fields_are_top_level_json_and_utf8():
    line = _line({"route": "/classify", "model": "modèle", "timings_ms": {"invoke": 1.5}})
    assert line["message"] == "request" and line["level"] == "INFO"
    assert line["route"] == "/classify" and line["model"] == "modèle"
    assert line["timings_ms"] == {"invoke": 1.5}
    assert line["time"].endswith("Z")


def test_exceptions_are_kept_in_one_line():
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        import sys

        text = JsonLineFormatter().format(logging.LogRecord("function", logging.ERROR, __file__, 1, "failed", None,
                                                            sys.exc_info()))
    assert "\n" not in text
    assert "RuntimeError: boom" in json.loads(text)["exception"]


def test_timings_accumulate_per_stage():
    timings = Timings()
    for _ in range(3):
        with timings.stage("decode"):
            sum(range(1000))
    with timings.stage("invoke"):
        pass
    stages = timings.as_dict()
    assert set(stages) == {"decode", "invoke"}
    assert stages["decode"] > 0


def test_configure_writes_json_lines_once(monkeypatch):
    from function import log

    stream = io.StringIO()
    monkeypatch.setattr(log.sys, "stdout", stream)
    logger = logging.getLogger(log.LOGGER_NAME)
    saved = list(logger.handlers)
    logger.handlers.clear()
    try:
        log.configure("INFO")
        log.configure("INFO")  # a second call (e.g. re-import) must not double every line
        logger.info("request", extra={"fields": {"status": 200}})
    finally:
        logger.handlers[:] = saved
        logger.propagate = True
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["status"] == 200
