"""Structured logs: one JSON object per line on stdout, which CloudWatch indexes as fields. Never raw inputs."""
from __future__ import annotations

import json
import logging
import sys
import time
from contextlib import contextmanager

LOGGER_NAME = "function"


class JsonLineFormatter(logging.Formatter):
    converter = time.gmtime  # the "Z" below must be true

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "message": record.getMessage(),
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def configure(level: str) -> logging.Logger:
    """Our own handler on our own logger: the Lambda runtime's root handler would prefix plain text."""
    logger = logging.getLogger(LOGGER_NAME)
    if not any(isinstance(h.formatter, JsonLineFormatter) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(JsonLineFormatter())
        logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    return logger


class Timings:
    """Milliseconds spent per named stage of one request (decode, preprocess, invoke, postprocess, cache...)."""

    def __init__(self) -> None:
        self.stages: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.stages[name] = self.stages.get(name, 0.0) + (time.perf_counter() - start) * 1000.0

    def as_dict(self) -> dict[str, float]:
        return {name: round(ms, 3) for name, ms in self.stages.items()}
