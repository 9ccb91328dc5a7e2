"""One LiteRT interpreter per model, called through its signature runner, safe to share between threads."""
from __future__ import annotations

import threading

import numpy as np

from function.errors import refuse
from function.model.manifest import Manifest, TensorSpec


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


FLOAT16 = np.dtype(np.float16)  # a dtype: comparing with the np.float16 type converts it on every call


def dequantize(values: np.ndarray, spec: TensorSpec) -> np.ndarray:
    if spec.scale is None:
        return values if values.dtype != FLOAT16 else values.astype(np.float32)
    return ((values.astype(np.float32) - spec.zero_point) * spec.scale).astype(np.float32)


PACKED: list[str] = []  # model files whose weights XNNPACK has packed, their mapped pages not yet handed back


def release_packed() -> None:
    """Hands back the mapped pages of every file in PACKED (function/model/resident.py); pop is atomic, so two
    threads never release one file twice."""
    from function.model.resident import release_file_pages  # noqa: PLC0415 (not on a cold start's first answer)

    while PACKED:
        try:
            path = PACKED.pop()
        except IndexError:
            return
        release_file_pages(path)


class ModelRunner:
    """Runs whole batches. A shared LiteRT interpreter is not thread-safe (invoke releases the GIL: concurrent
    calls fail or answer wrong), so every call holds this model's lock; Lambda runs one request per container
    anyway, the local server may not (tests/functional/test_function_concurrency.py)."""

    def __init__(self, manifest: Manifest, num_threads: int | None = None):
        """num_threads: None for what function/model/threads.py decides (MODEL_THREADS, else the model's size and
        the container's vCPUs). The weights are packed here (_pack_weights): whoever loads the model (the init for a
        big model or a container's only one, function/model/packing.py; else its first request; a model refresh)
        pays that, and its first invoke does not."""
        # LiteRT: 8 ms and 5 modules after function.app's own imports (numpy is already in), spared by cache hits.
        from ai_edge_litert.interpreter import Interpreter  # noqa: PLC0415

        from function.model.threads import is_big, threads_for  # noqa: PLC0415 (loaded with the first model)

        self.manifest = manifest
        big = is_big(manifest.model_file, manifest.quantization)
        self.num_threads = threads_for(big) if num_threads is None else num_threads
        self._interpreter = Interpreter(model_path=str(manifest.model_file), num_threads=self.num_threads)
        self._lock = threading.Lock()
        self._weights_packed = self._pack_weights()
        self._pages_queued = False  # the mapped file's pages go to PACKED after the first invoke, unless handed back
        self._signature = self._interpreter.get_signature_runner(manifest.signature)
        # Each float input's dtype, looked up once rather than by every request (np.dtype: ~0.3 us a call).
        self._float_inputs = {spec.name: np.dtype(spec.dtype) for spec in manifest.inputs if spec.scale is None}

    def _pack_weights(self) -> bool:
        """LiteRT hands the graph to XNNPACK, which packs the weights, when the interpreter first allocates its
        tensors: allocating them here, at the model's saved shapes, packs without computing anything (a zero invoke
        added a whole inference to the init: ResNet50 float32 20-38 ms, BERT-base 62-120 ms at 2 and 1 threads).
        Before the signature runner is made: the Interpreter refuses to reallocate once one holds its tensors.
        False when the model cannot take its saved shapes (a text convolution wider than the 1 token an open length
        is saved as): its first invoke packs, at the request's shapes, as LiteRT does by itself."""
        try:
            self._interpreter.allocate_tensors()
        except RuntimeError:
            return False
        return True

    def hand_back_file_pages(self) -> None:
        """Hands back the mapped file's pages now (the init, function/model/packing.py, after packing): the packed
        weights replace them, and no later call has them to hand back."""
        from function.model.resident import release_file_pages  # noqa: PLC0415 (only when a model loads at init)

        if self._weights_packed and not self._pages_queued:
            self._pages_queued = True
            release_file_pages(str(self.manifest.model_file))

    @property
    def weights_packed(self) -> bool:
        """True once XNNPACK has packed the weights: when the runner is made, or on the first invoke of a model LiteRT
        cannot size at its saved shapes."""
        return self._weights_packed

    def run(self, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """inputs: role -> array with the batch first (float values for quantized tensors). Returns every output
        by role, dequantized (float outputs stay as the model gives them, float16 widened to float32)."""
        if PACKED:
            release_packed()
        floats, feed = self._float_inputs, {}
        for spec in self.manifest.inputs:
            values = inputs[spec.role]
            dtype = floats.get(spec.name)
            feed[spec.name] = quantize(values, spec) if dtype is None else values.astype(dtype, copy=False)
        with self._lock:
            # The signature runner resizes the batch (and any dynamic) dimension itself when the shape changes.
            try:
                raw = self._signature(**feed)
            except RuntimeError as exc:  # LiteRT could not size the graph for these shapes; it stays usable
                shapes = {name: list(array.shape) for name, array in feed.items()}
                reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise refuse("invalid_shape", f"The model cannot run on inputs of shapes {shapes} (LiteRT: {reason}); "
                             "a model with a convolution over a sequence needs at least its kernel's width of "
                             "tokens.") from exc
            if not self._pages_queued:  # handed back at the next call of any model, not in this answer
                self._weights_packed = self._pages_queued = True
                PACKED.append(str(self.manifest.model_file))
        return {spec.role: dequantize(np.asarray(raw[spec.name]), spec) for spec in self.manifest.outputs}

    def warm_up(self) -> None:
        """One invoke of zeros, one instance: a first call sizes the graph for its shapes and touches the tensor
        arena (the weights were packed when the runner was made), so that cost lands here (a SnapStart snapshot
        keeps it) instead of in a request."""
        zeros = {spec.role: np.zeros(tuple(1 if size < 0 else size for size in (1, *spec.shape[1:])), np.float32)
                 for spec in self.manifest.inputs if np.dtype(spec.dtype).kind in "iuf"}
        if len(zeros) == len(self.manifest.inputs):  # a string input cannot be made of zeros: its first call stays
            self.run(zeros)
