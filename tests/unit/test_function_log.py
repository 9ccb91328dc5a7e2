"""Structured request logs: one parseable JSON object per line, fields at the top level, stage timings summed."""
from __future__ import annotations

import io
import json
import logging
import re

import pytest

from function.log import (UNSAFE_IN_A_LINE, JsonLineFormatter, JsonLineHandler, RawJson, Timings, json_line, log_fields,
                          writes_utf8)


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


# Characters that broke lines or dropped them: line separators json.dumps leaves raw, lone surrogates no UTF-8
# stream can encode, and the ASCII controls str.splitlines also splits on.
HOSTILE = ["GET\u2028/x", "a\u2029b", "next\u0085line", "lone \ud800 high", "lone \udfff low", "\ud83d\ude00",
           "new\nline", "cr\rlf", "\x1c\x1d\x1e\x0b\x0c", "caf\u00e9 \U0001f600", "\x00nul"]


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no")


class FailureRecordingHandler(logging.StreamHandler):
    """logging drops a record it cannot format or write and calls handleError: count those instead."""

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self.failures: list = []

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802  (logging's name)
        self.failures.append(record)


def _strict_handler(ascii_stream: bool = False) -> tuple[FailureRecordingHandler, io.BytesIO]:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii" if ascii_stream else "utf-8", errors="strict", newline="\n",
                              write_through=True)
    handler = FailureRecordingHandler(stream)
    handler.setFormatter(JsonLineFormatter(ascii_only=not writes_utf8(stream)))
    return handler, raw


@pytest.mark.parametrize("ascii_stream", [False, True], ids=["utf-8 stream", "ascii stream"])
def test_every_record_is_one_encodable_json_line_whatever_its_fields_hold(ascii_stream):
    handler, raw = _strict_handler(ascii_stream)
    logger = logging.getLogger("tests.hostile")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    records = [{"method": value, "request_id": value, "route": value, value: "as a key"} for value in HOSTILE]
    records += [{"nan": float("nan"), "inf": float("-inf")}, {"big": 10 ** 5000}, {(1, 2): "tuple key"},
                {"object": Unprintable()}, {"nested": {"deeper": [[[["x\u2028"]]]]}}]
    cyclic: dict = {}
    cyclic["self"] = cyclic
    records.append({"cycle": cyclic})
    try:
        for fields in records:
            logger.info("request", extra={"fields": fields})
    finally:
        logger.removeHandler(handler)
    assert handler.failures == []
    lines = raw.getvalue().split(b"\n")
    assert lines[-1] == b"" and len(lines) - 1 == len(records)
    for line, fields in zip(lines, records):
        text = line.decode("ascii" if ascii_stream else "utf-8")
        assert len(text.splitlines()) == 1 and not re.search(UNSAFE_IN_A_LINE, text)
        parsed = json.loads(text)
        if "method" in fields:  # what was logged reads back exactly (a JSON reader joins a surrogate pair)
            expected = fields["method"].encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
            assert parsed["method"] == parsed["request_id"] == expected
    assert json.loads(lines[len(HOSTILE)])["nan"] == "nan"


def test_a_message_its_arguments_do_not_fit_is_still_a_line():
    record = logging.LogRecord("function", logging.INFO, __file__, 1, "%s and %s", ("one",), None)
    assert json.loads(JsonLineFormatter().format(record))["message"] == "%s and %s"


def test_json_line_keeps_readable_utf8_and_escapes_only_what_breaks_lines():
    line = json_line({"label": "café", "sep": "a\u2028b"})
    assert "café" in line and "\\u2028" in line and "\u2028" not in line
    assert json.loads(line) == {"label": "café", "sep": "a\u2028b"}


def test_a_raw_json_metrics_block_is_written_as_json_and_a_plain_string_stays_a_string():
    block = RawJson('{"Timestamp":1,"CloudWatchMetrics":[]}')
    assert json.loads(json_line({"a": "b\u2028", "_aws": block})) == {
        "a": "b\u2028", "_aws": {"Timestamp": 1, "CloudWatchMetrics": []}}
    assert json.loads(json_line({"_aws": block})) == {"_aws": {"Timestamp": 1, "CloudWatchMetrics": []}}
    assert json.loads(json_line({"_aws": '{"x": 1}'})) == {"_aws": '{"x": 1}'}  # a client's text is never raw
    record = logging.LogRecord("function", logging.INFO, __file__, 1, "request", (), None)
    record.fields = {"nan": float("nan"), "_aws": block}  # the fallback encoder keeps the block too
    assert json.loads(JsonLineFormatter().format(record))["_aws"] == {"Timestamp": 1, "CloudWatchMetrics": []}


def _json_line_logger(name: str, stream: io.StringIO, ascii_only: bool = False) -> logging.Logger:
    """A logger set up as `configure` sets the function's: its one handler a JsonLineHandler, no propagation."""
    handler = JsonLineHandler(stream)
    handler.setFormatter(JsonLineFormatter(ascii_only=ascii_only))
    logger = logging.getLogger(name)
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return logger


@pytest.mark.parametrize("ascii_only", [False, True], ids=["utf-8 stream", "ascii stream"])
def test_a_line_written_straight_to_the_stream_is_the_line_logging_writes(ascii_only, monkeypatch):
    stream = io.StringIO()
    logger = _json_line_logger(f"tests.direct.{ascii_only}", stream, ascii_only)
    records = []
    make_record = logger.makeRecord
    monkeypatch.setattr(logger, "makeRecord", lambda *args, **kwargs: records.append(1) or make_record(*args, **kwargs))
    fields = {"route": "/classify", "label": "café \u2028 \ud800", "status": 200, "timings_ms": {"total": 1.5},
              "nan": float("nan"), "_aws": RawJson('{"Timestamp":1,"CloudWatchMetrics":[]}')}
    log_fields(logger, logging.INFO, "request", fields)  # straight to the stream
    assert not records
    logger.addHandler(logging.NullHandler())  # a second handler: the record goes through logging
    log_fields(logger, logging.INFO, "request", fields)
    direct, logged = stream.getvalue().splitlines()
    assert len(records) == 1
    assert json.loads(direct)["time"][:11] == json.loads(logged)["time"][:11]  # the same day, one format
    assert direct[direct.index('"level"'):] == logged[logged.index('"level"'):]


def test_a_line_straight_to_the_stream_keeps_every_rule_of_the_logger():
    stream = io.StringIO()
    logger = _json_line_logger("tests.direct.rules", stream)
    logger.setLevel(logging.WARNING)
    log_fields(logger, logging.INFO, "request", {"status": 200})  # below the logger's level: no line
    logger.setLevel(logging.INFO)
    logger.disabled = True
    log_fields(logger, logging.INFO, "request", {"status": 200})
    logger.disabled = False
    log_fields(logger, logging.ERROR, "request", {"status": 500}, RuntimeError("boom"))  # through logging
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(line["level"], line["status"]) for line in lines] == [("ERROR", 500)]
    assert "exception" in lines[0]
