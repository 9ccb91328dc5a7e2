"""Where a warm /classify of one photo spends its time: decode, preprocess, invoke, and our own code.

`python -m bench.warm_split [--runs 60] [--model-dir models]`. Runs the real handler (event in, result out) in
this process with no result cache, so every call decodes and invokes; prints the median milliseconds per stage.
"Own code" is everything else: event parsing, base64, routing, validation, cache keys, JSON and logging.
"""
from __future__ import annotations

import argparse
import logging
import statistics
import time
from pathlib import Path

from PIL import Image

from function.cache.base import NullResultStore
from function.config import ServiceSettings
from function.entry import handle_event
from function.service import Service
from kit.events import http_api_event
from kit.photos import encode, photo

REPO = Path(__file__).resolve().parent.parent
STAGES = ("parse", "cache", "load", "decode", "preprocess", "invoke", "postprocess")


class StageCapture(logging.Handler):
    """Keeps the per-stage timings of each request log line."""

    def __init__(self) -> None:
        super().__init__()
        self.timings: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        fields = getattr(record, "fields", {})
        if "timings_ms" in fields:
            self.timings.append(fields["timings_ms"])


def photo_jpeg(size: tuple[int, int] | None) -> bytes:
    """The cat (kit/photos.py) as a JPEG, resized to `size` first when given."""
    image = photo("chelsea")
    if size:
        image = image.resize(size, Image.Resampling.LANCZOS)
    return encode(image, "JPEG", quality=90)


def measure(service: Service, jpeg: bytes, runs: int, capture: StageCapture) -> dict[str, float]:
    event = http_api_event("POST", "/classify", jpeg, "image/jpeg")
    assert handle_event(service, event, None)["statusCode"] == 200  # warm-up: loads the model
    capture.timings.clear()
    walls = []
    for _ in range(runs):
        start = time.perf_counter()
        handle_event(service, event, None)
        walls.append((time.perf_counter() - start) * 1000.0)
    split = {stage: statistics.median(t.get(stage, 0.0) for t in capture.timings) for stage in STAGES}
    split["handler total"] = statistics.median(walls)
    # Per request, then the median: a difference of medians would mix different requests' noise.
    own = [wall - sum(t.get(s, 0.0) for s in ("decode", "preprocess", "invoke"))
           for wall, t in zip(walls, capture.timings)]
    split["own code (total - decode - preprocess - invoke)"] = statistics.median(own)
    return split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--model-dir", type=Path, default=REPO / "models")
    args = parser.parse_args()
    if not (args.model_dir / "efficientnet_lite0" / "manifest.json").is_file():
        raise SystemExit(f"error: no efficientnet_lite0 in {args.model_dir}; run `make models` first")

    logger = logging.getLogger("function")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    capture = StageCapture()
    logger.addHandler(capture)
    service = Service(ServiceSettings.from_env({}, model_dir=args.model_dir), NullResultStore())
    for label, size in (("chelsea 451x300 JPEG", None), ("chelsea upscaled to 4032x3024 JPEG (12 MP)", (4032, 3024))):
        jpeg = photo_jpeg(size)
        split = measure(service, jpeg, args.runs, capture)
        total = split["handler total"]
        print(f"\n{label}, {len(jpeg) / 1024:.0f} KB, median of {args.runs} warm runs:")
        for stage, ms in split.items():
            share = "" if stage == "handler total" else f"  {100 * ms / total:5.1f}%"
            print(f"  {stage:<48} {ms:8.2f} ms{share}")


if __name__ == "__main__":
    main()
