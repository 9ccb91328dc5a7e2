"""The floor a route cannot go under: decode + preprocess + interpreter invoke, written straight against the libraries.

Nothing from function/ is used, only the model directory (manifest.json, model.tflite, tokenizer.json) and the
libraries the function itself uses (Pillow, numpy, LiteRT, tokenizers), so "our overhead" is everything the
handler does beyond this: event parsing, base64, validation, routing, the response JSON, logging.

`Pipeline` is the preprocessing every engine shares; `RawModel` runs it on LiteRT (the floor), and
bench/baselines/onnx_route_handler.py on ONNX Runtime (the peer), so the two differ only in the engine. Pillow and
tokenizers are imported only by a model that needs them: a text floor's cold start never pays for Pillow.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np


def _quantize(values: np.ndarray, spec: dict) -> np.ndarray:
    dtype = np.dtype(spec["dtype"])
    if not spec.get("quantization"):
        return values.astype(dtype, copy=False)
    q = spec["quantization"]
    info = np.iinfo(dtype)
    return np.clip(np.round(values / q["scale"]) + q["zero_point"], info.min, info.max).astype(dtype)


class Pipeline:
    """A model directory's preprocessing (its manifest.json) around an engine's `run(feed by input name)`."""

    def __init__(self, model_dir: Path):
        self.manifest = json.loads((model_dir / "manifest.json").read_text())
        self._inputs = {spec["role"]: spec for spec in self.manifest["inputs"]}
        self._output = self.manifest["outputs"][0]["name"]
        self._tokenizer = None
        preprocessing = self.manifest.get("preprocessing") or {}  # a tensor model has none
        if preprocessing.get("type") == "text":
            from tokenizers import Tokenizer  # noqa: PLC0415  (a floor imports only the libraries its model needs)

            self._tokenizer = Tokenizer.from_file(str(model_dir / preprocessing["tokenizer"]))
            self._tokenizer.no_padding()
            self._tokenizer.enable_truncation(preprocessing["max_length"])

    def run(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def image_scores(self, jpeg: bytes) -> np.ndarray:
        """JPEG bytes -> the model's scores [1, classes]: decode, orient, convert, resize, normalize, invoke."""
        from PIL import Image, ImageOps  # noqa: PLC0415  (a floor imports only the libraries its model needs)

        p = self.manifest["preprocessing"]
        height, width = p["size"]
        with Image.open(io.BytesIO(jpeg)) as image:
            pixels = ImageOps.exif_transpose(image).convert(p["color_mode"]).resize(
                (width, height), Image.Resampling.BILINEAR)
        array = np.asarray(pixels, dtype=np.float32)
        if array.ndim == 2:
            array = array[..., np.newaxis]
        batch = ((array - np.asarray(p["mean"], np.float32)) / np.asarray(p["std"], np.float32))[np.newaxis]
        spec = self._inputs["image"]
        return self.run({spec["name"]: _quantize(batch, spec)})[self._output]

    def classify_image(self, jpeg: bytes) -> int:
        return int(np.argmax(self.image_scores(jpeg)[0]))

    def invoke(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Typed arrays straight into the engine: a tensor model's whole floor."""
        return self.run(feed)

    def tokenize(self, text: str) -> list[int]:
        return list(self._tokenizer.encode(text).ids)

    def _token_feed(self, texts: list[str], length: int | None) -> dict[str, np.ndarray]:
        """ids and mask [len(texts), length], padded with 0 (length None: the batch's longest text)."""
        encodings = self._tokenizer.encode_batch(texts)
        length = length or max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), length), np.int32)
        mask = np.zeros((len(texts), length), np.int32)
        for row, encoding in enumerate(encodings):
            ids[row, :len(encoding.ids)] = encoding.ids
            mask[row, :len(encoding.attention_mask)] = encoding.attention_mask
        feed = {self._inputs["input_ids"]["name"]: ids}
        if "attention_mask" in self._inputs:
            feed[self._inputs["attention_mask"]["name"]] = mask
        return feed

    def text_scores(self, text: str) -> np.ndarray:
        """Text -> the model's scores [1, outputs]: tokenize, pad to the model's fixed length, invoke."""
        return self.run(self._token_feed([text], self.manifest["preprocessing"]["max_length"]))[self._output]

    def classify_text(self, text: str) -> int:
        scores = self.text_scores(text)
        return int(np.argmax(scores[0])) if scores.shape[-1] > 1 else int(scores[0, 0] > 0.5)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Texts -> L2-normalised sentence vectors [len(texts), dimensions], padded to the batch's longest."""
        vectors = self.run(self._token_feed(texts, None))[self._output].astype(np.float32, copy=False)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


class RawModel(Pipeline):
    """The floor's engine: LiteRT's signature runner, one thread, as the function runs it."""

    def __init__(self, model_dir: Path, runner=None):
        """`runner`: a signature runner of this model to call instead of a new interpreter of the floor's own."""
        super().__init__(model_dir)
        if runner is None:
            from ai_edge_litert.interpreter import Interpreter  # noqa: PLC0415  (a floor imports only the libraries its model needs)

            interpreter = Interpreter(model_path=str(model_dir / self.manifest["model_file"]), num_threads=1)
            runner = interpreter.get_signature_runner(self.manifest.get("signature", "serving_default"))
        self._runner = runner

    def run(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self._runner(**feed)
