"""The floor a route cannot go under: decode + preprocess + interpreter invoke, written straight against the libraries.

Nothing from function/ is used, only the model directory (manifest.json, model.tflite, tokenizer.json) and the
libraries the function itself uses (Pillow, numpy, LiteRT, tokenizers), so "our overhead" is everything the
handler does beyond this: event parsing, base64, validation, routing, the response JSON, logging.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps


def _quantize(values: np.ndarray, spec: dict) -> np.ndarray:
    dtype = np.dtype(spec["dtype"])
    if not spec.get("quantization"):
        return values.astype(dtype, copy=False)
    q = spec["quantization"]
    info = np.iinfo(dtype)
    return np.clip(np.round(values / q["scale"]) + q["zero_point"], info.min, info.max).astype(dtype)


class RawModel:
    def __init__(self, model_dir: Path):
        from ai_edge_litert.interpreter import Interpreter

        self.manifest = json.loads((model_dir / "manifest.json").read_text())
        interpreter = Interpreter(model_path=str(model_dir / self.manifest["model_file"]), num_threads=1)
        self._runner = interpreter.get_signature_runner(self.manifest.get("signature", "serving_default"))
        self._inputs = {spec["role"]: spec for spec in self.manifest["inputs"]}
        self._output = self.manifest["outputs"][0]["name"]
        self._tokenizer = None
        preprocessing = self.manifest.get("preprocessing") or {}  # a tensor model has none
        if preprocessing.get("type") == "text":
            from tokenizers import Tokenizer

            self._tokenizer = Tokenizer.from_file(str(model_dir / preprocessing["tokenizer"]))
            self._tokenizer.no_padding()
            self._tokenizer.enable_truncation(preprocessing["max_length"])

    def classify_image(self, jpeg: bytes) -> int:
        """JPEG bytes -> top-1 class id: decode, orient, convert, resize, normalize, invoke."""
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
        scores = self._runner(**{spec["name"]: _quantize(batch, spec)})[self._output]
        return int(np.argmax(scores[0]))

    def invoke(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Typed arrays straight into the signature runner: a tensor model's whole floor."""
        return self._runner(**feed)

    def tokenize(self, text: str) -> list[int]:
        return list(self._tokenizer.encode(text).ids)

    def classify_text(self, text: str) -> int:
        """Text -> top-1 class id: tokenize, pad to the fixed length, invoke."""
        encoding = self._tokenizer.encode(text)
        length = self.manifest["preprocessing"]["max_length"]
        ids = np.zeros((1, length), np.int32)
        mask = np.zeros((1, length), np.int32)
        ids[0, :len(encoding.ids)] = encoding.ids
        mask[0, :len(encoding.attention_mask)] = encoding.attention_mask
        feed = {self._inputs["input_ids"]["name"]: ids}
        if "attention_mask" in self._inputs:
            feed[self._inputs["attention_mask"]["name"]] = mask
        scores = self._runner(**feed)[self._output]
        return int(np.argmax(scores[0])) if scores.shape[-1] > 1 else int(scores[0, 0] > 0.5)
