"""One LiteRT interpreter per model, called through its signature runner, safe to share between threads."""
from __future__ import annotations

import threading

import numpy as np

from function.models.manifest import Manifest, TensorSpec


def quantize(values: np.ndarray, spec: TensorSpec) -> np.ndarray:
    """float -> the tensor's integer dtype with the manifest's scale and zero point (identity for float tensors)."""
    dtype = np.dtype(spec.dtype)
    if spec.scale is None:
        return values.astype(dtype, copy=False)
    info = np.iinfo(dtype)
    scaled = np.divide(values, spec.scale, dtype=np.float32)  # one float32 temporary, then in place
    np.round(scaled, out=scaled)
    scaled += spec.zero_point
    np.clip(scaled, info.min, info.max, out=scaled)
    return scaled.astype(dtype)


def dequantize(values: np.ndarray, spec: TensorSpec) -> np.ndarray:
    if spec.scale is None:
        return values.astype(np.float32, copy=False)
    return ((values.astype(np.float32) - spec.zero_point) * spec.scale).astype(np.float32)


class ModelRunner:
    """Runs whole batches. FACTS: a shared interpreter is not thread-safe (invoke releases the GIL), so every
    call holds this model's lock; Lambda runs one request per container anyway, the local server may not."""

    def __init__(self, manifest: Manifest, num_threads: int = 1):
        from ai_edge_litert.interpreter import Interpreter  # noqa: PLC0415  (costs ~0.2 s: only when a model loads)

        self.manifest = manifest
        self._interpreter = Interpreter(model_path=str(manifest.model_file), num_threads=num_threads)
        self._signature = self._interpreter.get_signature_runner(manifest.signature)
        self._lock = threading.Lock()

    def run(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        """inputs: role -> float/int array with the batch first. Returns the first output, dequantized to float32."""
        feed = {}
        for role, values in inputs.items():
            spec = self.manifest.input(role)
            if spec is not None:
                feed[spec.name] = quantize(values, spec)
        output = self.manifest.outputs[0]
        with self._lock:
            # The signature runner resizes the batch dimension itself when the shape changes.
            result = self._signature(**feed)[output.name]
        return dequantize(np.asarray(result), output)
