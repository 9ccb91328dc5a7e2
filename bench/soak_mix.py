"""The soak's traffic: a fixed, seeded mix of real requests, each with the status it must get.

Computed answers and cache hits on every route, client errors the handler answers, and HTTP the local server
refuses before the handler sees it. Misses are new inputs (a fresh random image or a numbered sentence), hits
repeat one of a small pool, so the memory LRU and the SQLite file both fill and both answer.
"""

from __future__ import annotations

import base64
import io
import json
import random
from dataclasses import dataclass

import numpy as np
from PIL import Image

from bench import inputs
from kit.photos import cat_jpeg

HIT_POOL = 40  # distinct inputs a "hit" request repeats


@dataclass(frozen=True)
class SoakRequest:
    kind: str
    method: str
    path: str
    body: bytes
    content_type: str
    expected_status: int
    raw: bytes = b""  # when set, sent as is on a fresh socket instead (HTTP the client library would not write)

    @property
    def reaches_handler(self) -> bool:
        """False for what the local server refuses itself: no handler call, no log line."""
        return not self.raw and self.kind != "body too large"


def _png(pixels: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def _jpeg(pixels: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="JPEG", quality=90)
    return buffer.getvalue()


def _json(payload: dict) -> bytes:
    return json.dumps(payload).encode("utf-8")


def _digit(rng: np.random.Generator) -> bytes:
    return _png(rng.integers(0, 256, (8, 8), dtype=np.uint8))


def _digits_request(kind: str, image: bytes) -> SoakRequest:
    body = _json({"image": base64.b64encode(image).decode("ascii"), "model": "digits"})
    return SoakRequest(kind, "POST", "/classify", body, "application/json", 200)


def _sentiment(kind: str, text: str) -> SoakRequest:
    return SoakRequest(kind, "POST", "/sentiment", _json({"text": text}), "application/json", 200)


class Mix:
    """request(i) is the i-th request of the soak: the same sequence on every run (seeded)."""

    def __init__(self, max_body_bytes: int, seed: int = 11) -> None:
        self.max_body_bytes = max_body_bytes
        pool_rng = np.random.default_rng(seed)
        self.digit_pool = [_digit(pool_rng) for _ in range(HIT_POOL)]
        self.photo = cat_jpeg()
        self.seed = seed
        # kind -> (weight per 100 requests, builder of the i-th request of that kind)
        self.kinds = {
            "classify digits, new image": (20, lambda i, rng: _digits_request("classify digits, new image",
                                                                               _digit(rng))),
            "classify digits, repeat": (15, lambda i, rng: _digits_request(
                "classify digits, repeat", self.digit_pool[i % HIT_POOL])),
            "classify photo, new image": (4, lambda i, rng: SoakRequest(
                "classify photo, new image", "POST", "/classify?top_k=3",
                _jpeg(rng.integers(0, 256, (48, 48, 3), dtype=np.uint8)), "image/jpeg", 200)),
            "classify photo, repeat": (6, lambda i, rng: SoakRequest(
                "classify photo, repeat", "POST", "/classify", self.photo, "image/jpeg", 200)),
            "sentiment, new text": (15, lambda i, rng: _sentiment(
                "sentiment, new text", f"{inputs.SENTENCES[i % 2]} Seen {i} times.")),
            "sentiment, repeat": (10, lambda i, rng: _sentiment(
                "sentiment, repeat", f"{inputs.SENTENCES[i % 2]} Pool {i % HIT_POOL}.")),
            "tokenize": (5, lambda i, rng: SoakRequest(
                "tokenize", "POST", "/tokenize", _json({"text": f"token {i}"}), "application/json", 200)),
            "GET /health, /models": (5, lambda i, rng: SoakRequest(
                "GET /health, /models", "GET", ("/health", "/models")[i % 2], b"", "", 200)),
            "404 unknown route": (3, lambda i, rng: SoakRequest("404 unknown route", "GET", f"/nowhere/{i}", b"", "",
                                                                 404)),
            "405 wrong method": (3, lambda i, rng: SoakRequest("405 wrong method", "GET", "/classify", b"", "", 405)),
            "400 invalid JSON": (4, lambda i, rng: SoakRequest(
                "400 invalid JSON", "POST", "/sentiment", b'{"text": "unterminated', "application/json", 400)),
            "400 empty text": (3, lambda i, rng: SoakRequest(
                "400 empty text", "POST", "/sentiment", b'{"text": "  "}', "application/json", 400)),
            "415 not an image": (4, lambda i, rng: SoakRequest(
                "415 not an image", "POST", "/classify", b"plain text, not a picture", "image/jpeg", 415)),
            "body too large": (2, lambda i, rng: SoakRequest(
                "body too large", "POST", "/classify", b"\0" * (self.max_body_bytes + 1), "image/jpeg", 413)),
            "malformed HTTP": (1, lambda i, rng: SoakRequest(
                "malformed HTTP", "POST", "/sentiment", b"", "", 400,
                raw=b"POST /sentiment HTTP/1.1\r\nHost: soak\r\nContent-Length: abc\r\n\r\n"
                    b"GET /models HTTP/1.1\r\nHost: soak\r\n\r\n")),
        }
        names = list(self.kinds)
        weights = [self.kinds[name][0] for name in names]
        self._schedule_rng = random.Random(seed)
        self._names, self._weights = names, weights

    def schedule(self, count: int) -> list[str]:
        """The kind of each of `count` requests, in order."""
        return self._schedule_rng.choices(self._names, self._weights, k=count)

    def request(self, index: int, kind: str) -> SoakRequest:
        rng = np.random.default_rng([self.seed, index])
        return self.kinds[kind][1](index, rng)
