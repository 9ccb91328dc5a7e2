"""The one place that computes cache keys."""
from __future__ import annotations

import json
from collections.abc import Mapping

from function.digest import sha256


def digest_bytes(data: bytes) -> str:
    return sha256(data).hexdigest()


def digest_text(text: str) -> str:
    return sha256(text.encode("utf-8")).hexdigest()


def result_key(model_version: str, task: str, input_digest: str, options: Mapping[str, object]) -> str:
    """Key = the model's serving version (function/model/identity.py: every file and manifest field that can change
    an answer) + task + canonical input + every option that changes the answer."""
    canonical = json.dumps([model_version, task, input_digest, dict(sorted(options.items()))], separators=(",", ":"))
    return sha256(canonical.encode("utf-8")).hexdigest()
