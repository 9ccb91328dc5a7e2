"""The one interface every result store implements; routes only ever talk to this."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

# A result is the JSON-serialisable prediction for one input (without the "cached" flag).
Result = dict


class ResultStore(Protocol):
    def get_many(self, keys: Sequence[str]) -> dict[str, Result]:
        """Return the stored, unexpired results for whichever of `keys` are present. Never raises."""

    def put_many(self, results: Mapping[str, Result]) -> None:
        """Store results under their keys. Never raises: a failing store only costs a recomputation."""
