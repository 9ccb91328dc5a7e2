"""A model's serving version: the digest of everything that can change an answer.

That is the bytes of every file the function reads (their sha256 in the manifest's `files`) and every manifest
field that says how to feed the model and read its outputs (task, labels, preprocessing, tensors and their
quantization, signature...). Only what describes the model's history is left out: name, source, fidelity,
created_at. So relabelling a model and converting it again gives a new version, and with it new cache keys.
"""
from __future__ import annotations

import json

from function.digest import sha256

NOT_SERVING_FIELDS = frozenset({"name", "source", "fidelity", "created_at"})


def serving_version(manifest_data: dict) -> str:
    serving = {key: value for key, value in manifest_data.items() if key not in NOT_SERVING_FIELDS}
    canonical = json.dumps(serving, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256(canonical.encode("utf-8")).hexdigest()
