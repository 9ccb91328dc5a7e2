"""Every environment variable the function reads, in one place.

Resolution order everywhere: explicit argument, then environment variable, then the default documented here.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

# Where converted models live: one sub-directory per model, as `python -m convert` writes it.
MODEL_DIR = "MODEL_DIR"
DEFAULT_MODEL_DIR = Path(__file__).resolve().parent.parent / "models"

# Result cache (docs/caching.md).
RESULTS_CACHE = "RESULTS_CACHE"  # auto | dynamodb | sqlite | memory | off
RESULTS_TABLE = "RESULTS_TABLE"  # DynamoDB table name; `auto` picks DynamoDB when set
RESULTS_SQLITE_PATH = "RESULTS_SQLITE_PATH"
CACHE_TTL_SECONDS = "CACHE_TTL_SECONDS"
CACHE_MEMORY_ITEMS = "CACHE_MEMORY_ITEMS"
# AWS_ENDPOINT_URL_DYNAMODB (standard, read by botocore itself) points the DynamoDB store at a local server.

DEFAULT_CACHE_TTL_SECONDS = 7 * 24 * 3600
DEFAULT_CACHE_MEMORY_ITEMS = 1024
DEFAULT_SQLITE_PATH = Path(tempfile.gettempdir()) / "lambda-tflite-results.sqlite3"


def _env(name: str, environ: dict | None = None) -> str | None:
    value = (environ if environ is not None else os.environ).get(name, "").strip()
    return value or None


@dataclass(frozen=True)
class CacheSettings:
    backend: str  # dynamodb | sqlite | memory | off  (never "auto": resolved here)
    table: str | None
    sqlite_path: Path
    ttl_seconds: int
    memory_items: int

    @classmethod
    def from_env(cls, environ: dict | None = None) -> "CacheSettings":
        table = _env(RESULTS_TABLE, environ)
        backend = (_env(RESULTS_CACHE, environ) or "auto").lower()
        if backend == "auto":
            backend = "dynamodb" if table else "sqlite"
        if backend not in {"dynamodb", "sqlite", "memory", "off"}:
            raise ValueError(f"{RESULTS_CACHE} must be auto, dynamodb, sqlite, memory or off, not {backend!r}")
        if backend == "dynamodb" and not table:
            raise ValueError(f"{RESULTS_CACHE}=dynamodb needs {RESULTS_TABLE}")
        return cls(
            backend=backend,
            table=table,
            sqlite_path=Path(_env(RESULTS_SQLITE_PATH, environ) or DEFAULT_SQLITE_PATH),
            ttl_seconds=int(_env(CACHE_TTL_SECONDS, environ) or DEFAULT_CACHE_TTL_SECONDS),
            memory_items=int(_env(CACHE_MEMORY_ITEMS, environ) or DEFAULT_CACHE_MEMORY_ITEMS),
        )
