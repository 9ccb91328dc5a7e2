"""What the function's logger writes during a test, through a handler the test chooses."""
from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from function.log import LOGGER_NAME


@contextmanager
def attached(handler: logging.Handler) -> Iterator[logging.Handler]:
    """`handler` on the function's logger, at INFO, for the block; the logger as it was afterwards."""
    logger = logging.getLogger(LOGGER_NAME)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
