"""Structured logs: one JSON object per line on stdout, which CloudWatch indexes as fields. Never raw inputs.

Whatever a field holds (a client's method, path or request id included), a record is exactly one line of valid
JSON that the stream can encode: a line that fails to encode is dropped by logging, and U+0085, U+2028 and U+2029
pass through json.dumps raw although line readers (Python's splitlines among them) break lines there.
"""
from __future__ import annotations

import codecs
import json
import logging
import math
import re
import sys
import time

from function.json_encoding import reusable_encoder

LOGGER_NAME = "function"
# Outside JSON strings the text is ASCII, so escaping these anywhere keeps it valid JSON: the line breakers
# json.dumps leaves raw, and lone surrogates (from a client's bytes), which no UTF-8 stream can encode. A pattern
# string, compiled (and kept in re's cache) by the first line that is not ASCII: compiling the surrogate range takes
# 0.5 ms, which the init paid for lines that almost never need it.
UNSAFE_IN_A_LINE = "[\u0085\u2028\u2029\ud800-\udfff]"
MAX_DEPTH = 20  # fields nested deeper than this are logged as their type name
# Built once, for a UTF-8 stream and for one that is not.
LINE_ENCODERS = {ascii_only: reusable_encoder(ensure_ascii=ascii_only, separators=(", ", ": "), default=str,
                                              allow_nan=False) for ascii_only in (False, True)}


def _escape(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def _plain(value: object, depth: int = 0) -> object:
    """`value` reduced to what json.dumps always accepts: str keys, finite floats, ints it can print."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        return value if value.bit_length() < 4000 else f"<int of {value.bit_length()} bits>"  # ~1,200 digits
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth >= MAX_DEPTH:
        return f"<{type(value).__name__}>"
    if isinstance(value, dict):
        return {_text(key): _plain(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(item, depth + 1) for item in value]
    return _text(value)


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except Exception:  # noqa: BLE001  (a field's own __str__ must not cost the line)
        return f"<unprintable {type(value).__name__}>"


class RawJson(str):
    """A value that is already JSON text (ASCII, one line), written into the line as it is: the metrics block
    (function/metrics.py), serialized once per shape of line rather than once per line."""


RAW_MEMBER = "_aws"  # the one member that may hold RawJson


def json_line(fields: dict, ascii_only: bool = False) -> str:
    """`fields` as one line of JSON, safe to write to any stream (ascii_only for one that is not UTF-8)."""
    return _line_of(dict(fields) if type(fields.get(RAW_MEMBER)) is RawJson else fields, ascii_only)


def _line_of(fields: dict, ascii_only: bool) -> str:
    """json_line of a dict the caller gives away (its raw member is taken out of it): the formatter's own line,
    which it would otherwise copy a second time."""
    raw = fields.get(RAW_MEMBER)
    if type(raw) is RawJson:
        del fields[RAW_MEMBER]
    else:
        raw = None
    try:
        text = LINE_ENCODERS[ascii_only](fields)
    except Exception:  # noqa: BLE001  (a non-str key, NaN, a huge int, a cycle, a field whose __str__ raises)
        text = json.dumps(_plain(fields), ensure_ascii=ascii_only)
    if not text.isascii():  # every character it replaces is outside ASCII: most lines skip the scan
        text = re.sub(UNSAFE_IN_A_LINE, _escape, text)
    if raw is not None:
        text = f'{text[:-1]}{"," if fields else ""}"{RAW_MEMBER}":{raw}}}'
    return text


class JsonLineFormatter(logging.Formatter):
    converter = time.gmtime  # the "Z" below must be true

    def __init__(self, ascii_only: bool = False) -> None:
        super().__init__()
        self.ascii_only = ascii_only
        self._second: tuple[int, str] = (-1, "")  # the last whole second formatted, and its text

    def format(self, record: logging.LogRecord) -> str:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001  (arguments that do not fit the message: keep the line, not the traceback)
            message = _text(record.msg)
        line = {
            "time": f"{self._second_text(record.created)}.{int(record.msecs):03d}Z",
            "level": record.levelname,
            "message": message,
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return _line_of(line, self.ascii_only)

    def format_fields(self, now_ns: int, level_name: str, message: str, fields: dict) -> str:
        """What `format` makes of a record logged at `now_ns` (time.time_ns()) with these fields and no exception,
        without the record."""
        second, nanoseconds = divmod(now_ns, 1_000_000_000)
        line = {"time": f"{self._second_text(second)}.{nanoseconds // 1_000_000:03d}Z", "level": level_name,
                "message": message, **fields}
        return _line_of(line, self.ascii_only)

    def _second_text(self, created: float) -> str:
        """The line's time to the second, formatted once per second rather than once per line (strftime: ~1 us)."""
        second = int(created)
        cached, text = self._second
        if cached != second:
            text = time.strftime("%Y-%m-%dT%H:%M:%S", self.converter(second))
            self._second = (second, text)
        return text


class JsonLineHandler(logging.StreamHandler):
    """The function's own handler (`configure`): one JSON line per record on a stream, stdout in Lambda."""

    def write_fields(self, level: int, message: str, fields: dict) -> None:
        """The line `emit` would write for a record of these fields, written without making the record."""
        try:
            text = self.formatter.format_fields(time.time_ns(), logging.getLevelName(level), message, fields)
            with self.lock:  # what acquire() and release() take, without their two calls
                self.stream.write(text + self.terminator)
                self.stream.flush()
        except RecursionError:  # as StreamHandler.emit
            raise
        except Exception:  # noqa: BLE001  (as emit: logging reports it on stderr and the request goes on)
            self.handleError(logging.makeLogRecord({"name": LOGGER_NAME, "levelno": level, "msg": message,
                                                    "levelname": logging.getLevelName(level), "fields": fields}))


def log_fields(logger: logging.Logger, level: int, message: str, fields: dict,
               exc_info: BaseException | None = None) -> None:
    """`logger.log(level, message, exc_info=exc_info, extra={"fields": fields})`, the same line. When that line has
    no exception and the logger's one handler is the JsonLineHandler `configure` gave it (as in Lambda), it is
    written to that handler's stream directly: logging's record and dispatch took 10-15 us of a warm tabular
    :predict and 15-30 us of a /sentiment once the invoke had left the CPU's caches cold (paired in one process)."""
    handlers = logger.handlers
    if exc_info is None and len(handlers) == 1 and not logger.propagate and not logger.filters:
        handler = handlers[0]
        if (type(handler) is JsonLineHandler and type(handler.formatter) is JsonLineFormatter
                and not handler.filters and level >= handler.level and logger.isEnabledFor(level)):
            handler.write_fields(level, message, fields)
            return
    logger.log(level, message, exc_info=exc_info, extra={"fields": fields})


def writes_utf8(stream: object) -> bool:
    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return True  # an in-memory text stream takes any str
    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def configure(level: str) -> logging.Logger:
    """Our own handler on our own logger: the Lambda runtime's root handler would prefix plain text."""
    logger = logging.getLogger(LOGGER_NAME)
    if not any(isinstance(h.formatter, JsonLineFormatter) for h in logger.handlers):
        handler = JsonLineHandler(sys.stdout)
        handler.setFormatter(JsonLineFormatter(ascii_only=not writes_utf8(sys.stdout)))
        logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    # No line shows the caller's file and line, the thread or the process: logging finds them for every record
    # unless told not to (the logging HOWTO's "Optimization"), 3 of the ~20 us a request's line costs.
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    return logger


class Timings:
    """Milliseconds spent per named stage of one request (decode, preprocess, invoke, postprocess, cache...), and
    the tokens its text inputs were tokenized into (the `tokens` metric of a task whose results do not say)."""

    def __init__(self) -> None:
        self.stages: dict[str, float] = {}
        self.tokens = 0

    def stage(self, name: str) -> "_Stage":
        """`with timings.stage("decode"):` adds the block's time to that stage, also when it raises."""
        return _Stage(self.stages, name)

    def add(self, name: str, start: float) -> None:
        """Adds the time since `start` (a time.perf_counter()) to stage `name`. The warm request path's form, in a
        `finally:` so that a block that raises is timed too: one call where a `with` block makes three (the task's
        four stages this way took 2-3 us off a warm tabular or /embed request, paired in one process)."""
        stages = self.stages
        stages[name] = stages.get(name, 0.0) + (time.perf_counter() - start) * 1000.0

    def as_dict(self) -> dict[str, float]:
        return {name: round(ms, 3) for name, ms in self.stages.items()}


class _Stage:
    """One timed block: a plain context manager, half the cost of a @contextmanager one (five blocks per request)."""

    __slots__ = ("stages", "name", "start")

    def __init__(self, stages: dict[str, float], name: str) -> None:
        self.stages, self.name = stages, name

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, *exc_info: object) -> None:
        self.stages[self.name] = self.stages.get(self.name, 0.0) + (time.perf_counter() - self.start) * 1000.0
