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
