"""The one exception a user mistake raises: a stable code for tests and scripts, a one-line sentence for people."""
from __future__ import annotations


class ConversionError(Exception):
    """A conversion that cannot go on because of its input; the message says what to do about it."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message


def first_line(error: BaseException, limit: int = 300) -> str:
    """The informative head of a library's (often multi-page) exception text."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return (lines[0] if lines else type(error).__name__)[:limit]
