"""The part every baseline handler shares: read a /classify event, decode and preprocess, shape the JSON answer.

Kept free of any inference library so each baseline differs from the others only in how it runs the model, and
it preprocesses exactly as the function's manifest says (decode, EXIF-orient, RGB, bilinear resize, (x-mean)/std).
"""

from __future__ import annotations

import base64
import io
import json

import numpy as np
from PIL import Image, ImageOps

DEFAULT_TOP_K = 5


def images_from_event(event: dict) -> list[bytes]:
    """The image bytes of an API Gateway proxy event: a raw base64 body, or JSON with "image" / "images"."""
    body = event.get("body") or ""
    headers = {key.lower(): value for key, value in (event.get("headers") or {}).items()}
    if event.get("isBase64Encoded") and headers.get("content-type", "").startswith("image/"):
        return [base64.b64decode(body)]
    if event.get("isBase64Encoded"):
        body = base64.b64decode(body).decode("utf-8")
    payload = json.loads(body)
    encoded = payload["images"] if "images" in payload else [payload["image"]]
    return [base64.b64decode(item.split(",", 1)[1] if item.startswith("data:") else item) for item in encoded]


def preprocess(images: list[bytes], preprocessing: dict) -> np.ndarray:
    """One float32 NHWC batch, normalised the way the sidecar describes."""
    height, width = preprocessing["size"]
    mean = np.asarray(preprocessing["mean"], dtype=np.float32)
    std = np.asarray(preprocessing["std"], dtype=np.float32)
    batch = []
    for data in images:
        with Image.open(io.BytesIO(data)) as image:
            oriented = ImageOps.exif_transpose(image).convert(preprocessing["color_mode"])
            resized = oriented.resize((width, height), Image.Resampling.BILINEAR)
        pixels = np.asarray(resized, dtype=np.float32)
        if pixels.ndim == 2:
            pixels = pixels[..., np.newaxis]
        batch.append((pixels - mean) / std)
    return np.stack(batch)


def probabilities(scores: np.ndarray, output_kind: str) -> np.ndarray:
    if output_kind == "probabilities":
        return scores
    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def response(model_name: str, model_version: str, labels: list[str], scores: np.ndarray, top_k: int) -> dict:
    """An API Gateway proxy response with the function's /classify JSON shape."""
    predictions = []
    for row in scores:
        best = np.argsort(row)[::-1][:top_k]
        ranked = [{"label": labels[i], "score": round(float(row[i]), 6)} for i in best]
        predictions.append({"label": ranked[0]["label"], "score": ranked[0]["score"], "top_k": ranked,
                            "cached": False})
    body = {"model": model_name, "model_version": model_version, "predictions": predictions}
    return {"statusCode": 200, "headers": {"Content-Type": "application/json"},
            "body": json.dumps(body, ensure_ascii=False)}


def requested_top_k(event: dict) -> int:
    try:
        return int(json.loads(event.get("body") or "{}").get("top_k", DEFAULT_TOP_K))
    except (ValueError, AttributeError, UnicodeDecodeError):
        return DEFAULT_TOP_K
