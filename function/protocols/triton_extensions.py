"""Triton's extensions of the Open Inference Protocol that tritonclient calls beyond inference, as Triton answers them
(its docs/protocol/extension_model_repository.md, extension_model_configuration.md, extension_statistics.md):

- the model repository index (POST /v2/repository/index): every model version, READY or UNAVAILABLE with why;
- the model configuration (GET /v2/models/{name}/config): Triton's ModelConfig of the model's tensors;
- inference statistics (GET /v2/models[/{name}[/versions/{version}]]/stats): what this container counted
  (function/catalog/statistics.py).

Load and unload are not served: the models are the deployment's (the image's or the S3 index's).
"""
from __future__ import annotations

from function.catalog.statistics import DURATIONS, VersionStatistics
from function.errors import quoted, refuse
from function.model.manifest import TensorSpec
from function.protocols.open_inference import PLATFORM
from function.protocols.tensor_values import DTYPE_NAMES
from function.tasks.tensor import TensorTask

BACKEND = "litert"
READY, UNAVAILABLE = "READY", "UNAVAILABLE"


def index_ready_only(body: object) -> bool:
    """The index request's "ready" flag: an empty body (tritonclient sends one) or {} is every model."""
    if body is None:
        return False
    if not isinstance(body, dict):
        raise refuse("invalid_field", "The repository index request is a JSON object: {\"ready\": true|false}, or "
                     "an empty body.")
    ready = body.get("ready", False)
    if not isinstance(ready, bool):
        raise refuse("invalid_field", f"'ready' must be true or false, not {quoted(ready)}.")
    return ready


def index_entry(name: str, version: str | None, reason: str | None) -> dict:
    """One row of the index: a version that serves (READY), or a model that cannot (UNAVAILABLE, its reason)."""
    entry = {"name": name}
    if version is not None:
        entry["version"] = version
    entry.update(state=UNAVAILABLE if reason else READY, reason=reason or "")
    return entry


def _model_tensor(spec: TensorSpec) -> dict:
    """A ModelInput / ModelOutput: dims without the batch dimension (max_batch_size > 0), -1 where dynamic. A tensor
    that is one value per instance has dims [1] reshaped to [], as Triton writes such a tensor."""
    tensor = {"name": spec.name, "data_type": f"TYPE_{DTYPE_NAMES[spec.served_dtype].v2}"}
    dims = list(spec.shape[1:])
    tensor["dims"] = dims or [1]
    if not dims:
        tensor["reshape"] = {"shape": []}
    return tensor


def model_config(task: TensorTask, max_batch_size: int) -> dict:
    manifest = task.manifest
    return {"name": manifest.name, "platform": PLATFORM, "backend": BACKEND, "max_batch_size": max_batch_size,
            "input": [_model_tensor(spec) for spec in task.inputs],
            "output": [_model_tensor(spec) for spec in task.outputs],
            "parameters": {"model_version": {"string_value": manifest.version}}}


def model_stat(name: str, version: str, stats: VersionStatistics) -> dict:
    """Triton's $model_stat. There is no queue inside a Lambda container (one request at a time): queue counts the
    requests, with no time."""
    durations = {duration: stats.duration(duration) for duration in DURATIONS}
    return {
        "name": name, "version": version, "last_inference": stats.last_inference_ms,
        "inference_count": stats.inference_count, "execution_count": stats.execution_count,
        "inference_stats": {"success": durations["success"], "fail": durations["fail"],
                            "queue": {"count": stats.success_count, "ns": 0},
                            **{duration: durations[duration] for duration in DURATIONS[2:]}},
        "response_stats": {}, "batch_stats": [], "memory_usage": [],
    }
