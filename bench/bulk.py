"""Section 15: bulk runs. Items per second one container answers at Distributed Map batch sizes 1, 10 and 50, for
photos (EfficientNet-Lite0) and texts (sentiment, minilm), and from them the wall time and the bill of 1,000,000
photos through the Step Functions Distributed Map, an S3 Batch Operations job, and S3 upload events.

Each batch is a real `{"Items", "BatchInput"}` event through function.entry.handle_event in this process, with a
fresh result cache (everything computes): photos are objects in moto's S3 (GET each, PUT each answer), texts are
JSON Lines rows (PUT each answer). moto runs in this process on the same cores, so its own work is inside the
figures: a pessimistic stand-in for S3, whose latency a container overlaps with nothing here either. One core of
this machine stands for Lambda at 1,769 MB (one vCPU), the deploy's default memory size.
"""

from __future__ import annotations

import io
import json
import statistics
import time

from bench.paths import MODELS_DIR
from bench.report import SectionResult, table

NUMBER = 15
TITLE = "Bulk runs: items per second per container, and the bill of a million photos"
BATCH_SIZES = (1, 10, 50)
WORKLOADS = {  # name -> (task, model, items per measurement)
    "photos, efficientnet_lite0": ("classify", "efficientnet_lite0", 100),
    "texts, sentiment": ("sentiment", "sentiment", 300),
    "texts, minilm (embed)": ("embed", "minilm", 200),
}
ROUNDS = 2  # interleaved; each a fresh cache
PHOTOS_IN_RUN = 1_000_000
CONCURRENCIES = (100, 1_000)
MEMORY_MB = 1769  # serverless.yml's memorySize default
EXPRESS_MEMORY_GB = 64 / 1024  # an Express child execution is billed in 64 MB steps; the state machine's is tiny
# us-east-1 list prices, each from its service's public pricing page, as of 2025-01 (check before relying on them).
PRICES_AS_OF = "2025-01"
PRICES = {
    "lambda_gb_second": (0.0000166667, "aws.amazon.com/lambda/pricing (x86, first 6 billion GB-s a month)"),
    "lambda_request": (0.20 / 1e6, "aws.amazon.com/lambda/pricing"),
    "express_request": (1.00 / 1e6, "aws.amazon.com/step-functions/pricing (Express workflows)"),
    "express_gb_second": (0.00001667, "aws.amazon.com/step-functions/pricing (Express, first 1,000 hours)"),
    "standard_transition": (0.025 / 1000, "aws.amazon.com/step-functions/pricing (Standard workflows)"),
    "batch_operations_job": (0.25, "aws.amazon.com/s3/pricing (Management & insights: S3 Batch Operations)"),
    "batch_operations_object": (1.00 / 1e6, "aws.amazon.com/s3/pricing (S3 Batch Operations, per object)"),
    "s3_get": (0.0004 / 1000, "aws.amazon.com/s3/pricing (S3 Standard GET)"),
    "s3_put": (0.005 / 1000, "aws.amazon.com/s3/pricing (S3 Standard PUT, COPY, POST, LIST)"),
    "dynamodb_write": (0.625 / 1e6, "aws.amazon.com/dynamodb/pricing/on-demand (per write request unit)"),
    "dynamodb_read": (0.125 / 1e6, "aws.amazon.com/dynamodb/pricing/on-demand (per read request unit)"),
}


def distinct_photos(count: int) -> list[bytes]:
    """`count` different JPEGs (each a shifted crop of the shipped photos), so no two share a cache key."""
    from saved_model.recipes.photos import PHOTOS  # noqa: PLC0415

    images = [photo.open().convert("RGB") for photo in PHOTOS]
    photos = []
    for index in range(count):
        image = images[index % len(images)]
        shift = index // len(images)
        crop = image.crop((shift, shift, image.width - 40 + shift, image.height - 40 + shift))
        buffer = io.BytesIO()
        crop.save(buffer, format="JPEG", quality=90)
        photos.append(buffer.getvalue())
    return photos


def distinct_texts(count: int) -> list[str]:
    from saved_model.recipes.vader_corpus import load_rated_sentences  # noqa: PLC0415

    return sorted({sentence.text for sentence in load_rated_sentences()})[:count]


def measure(server) -> dict[tuple[str, int], list[float]]:
    """(workload, batch size) -> items per second, one figure per round."""
    from function.cache.memory import MemoryResultStore  # noqa: PLC0415
    from function.config import ServiceSettings  # noqa: PLC0415
    from function.entry import handle_event  # noqa: PLC0415
    from function.service import Service  # noqa: PLC0415

    source, results = server.bucket(), server.bucket()
    photos = distinct_photos(max(n for task, _, n in WORKLOADS.values() if task == "classify"))
    photo_items = []
    for index, data in enumerate(photos):
        key = f"photos/{index:05d}.jpg"
        server.s3.put_object(Bucket=source, Key=key, Body=data)
        photo_items.append({"Key": key, "Size": len(data)})
    texts = distinct_texts(max(n for task, _, n in WORKLOADS.values() if task != "classify"))
    text_items = [{"text": text, "id": f"texts/{index:05d}"} for index, text in enumerate(texts)]
    settings = ServiceSettings.from_env({}, model_dir=MODELS_DIR, results_bucket=results)
    rates: dict[tuple[str, int], list[float]] = {}
    for _ in range(ROUNDS):
        for name, (task, model, count) in WORKLOADS.items():
            items = (photo_items if task == "classify" else text_items)[:count]
            batch_input = {"task": task, "model": model, "options": {}, "bucket": source,
                           "results": {"bucket": results, "prefix": settings.results_prefix}}
            for size in BATCH_SIZES:
                service = Service(settings, MemoryResultStore(max_items=10_000, ttl_seconds=3600))
                service.warm_up()  # a warm container: model loading is not what a million items pay
                started = time.perf_counter()
                for first in range(0, len(items), size):
                    answer = handle_event(service, {"Items": items[first:first + size], "BatchInput": batch_input})
                    if answer["answered"] != len(items[first:first + size]):
                        raise RuntimeError(f"{name}: a batch was not all answered: {json.dumps(answer)[:300]}")
                rates.setdefault((name, size), []).append(len(items) / (time.perf_counter() - started))
    return rates


def price(name: str) -> float:
    return PRICES[name][0]


def bill(rate: float, batch_size: int, engine: str) -> dict[str, float]:
    """Dollars for PHOTOS_IN_RUN photos answered at `rate` items per second per container."""
    seconds = PHOTOS_IN_RUN / rate  # Lambda duration, summed over every container
    invocations = PHOTOS_IN_RUN / batch_size
    costs = {"Lambda duration": seconds * MEMORY_MB / 1024 * price("lambda_gb_second"),
             "Lambda requests": invocations * price("lambda_request"),
             "S3 requests": PHOTOS_IN_RUN * (price("s3_get") + price("s3_put")),
             "result cache (DynamoDB)": PHOTOS_IN_RUN * (price("dynamodb_read") + price("dynamodb_write"))}
    if engine == "distributed_map":
        costs["Step Functions"] = (invocations * price("express_request")
                                   + seconds * EXPRESS_MEMORY_GB * price("express_gb_second")
                                   + 10 * price("standard_transition"))  # the parent's few states: a rounding error
        costs["S3 requests"] += PHOTOS_IN_RUN / 1000 * price("s3_put")  # ListObjectsV2, 1,000 keys a page
    elif engine == "batch_operations":
        costs["S3 Batch Operations"] = price("batch_operations_job") + PHOTOS_IN_RUN * price("batch_operations_object")
    else:  # upload events: the object's tags too (one PUT tagging each; a GET tagging only when it had tags)
        costs["S3 requests"] += PHOTOS_IN_RUN * price("s3_put")
    return costs


def wall_time(rate: float, concurrency: int) -> str:
    return f"{PHOTOS_IN_RUN / (rate * concurrency) / 60:.1f} min"


def run(context) -> SectionResult:
    from kit.aws_server import aws_in_this_process  # noqa: PLC0415

    started = time.perf_counter()
    with aws_in_this_process() as (server, _):
        rates = measure(server)
    median = {key: statistics.median(values) for key, values in rates.items()}
    throughput_rows = [[name, *(f"{median[(name, size)]:.1f} ({min(rates[(name, size)]):.1f}-"
                                f"{max(rates[(name, size)]):.1f})" for size in BATCH_SIZES),
                        f"{median[(name, 50)] / median[(name, 1)]:.2f}x"] for name in WORKLOADS]
    photos = "photos, efficientnet_lite0"
    ways = [("Distributed Map, batch 10 (the default)", 10, "distributed_map"),
            ("Distributed Map, batch 50", 50, "distributed_map"),
            ("S3 Batch Operations (one object per invocation)", 1, "batch_operations"),
            ("S3 upload events, one object at a time", 1, "upload_events")]
    cost_rows, lines_items = [], None
    for label, size, engine in ways:
        rate = median[(photos, size)]
        costs = bill(rate, size, engine)
        lines_items = lines_items or list(costs)
        cost_rows.append([label, f"{rate:.1f}", *(wall_time(rate, c) for c in CONCURRENCIES),
                          "; ".join(f"{part} ${value:,.2f}" for part, value in costs.items()),
                          f"**${sum(costs.values()):,.2f}**"])
    lines = [
        f"Command: `python -m bench --section {NUMBER}` (bench/bulk.py). Each figure: the median of {ROUNDS} "
        "interleaved rounds, each batch a real Distributed Map event through `function.entry.handle_event` with a "
        "fresh result cache (everything computes), photos read from and every answer written to moto's S3 in this "
        "process (its own work is inside the figures), on one core of this machine standing for a 1,769 MB Lambda.",
        "",
        "Items per second per container, by batch size (items per invocation), median (min-max):",
        "",
        table(["workload", *(f"batch {size}" for size in BATCH_SIZES), "batch 50 / batch 1"], throughput_rows),
        "",
        f"{PHOTOS_IN_RUN:,} photos, EfficientNet-Lite0, from the photo rates above: the wall time at "
        f"{' and '.join(f'{c:,}' for c in CONCURRENCIES)} containers at once (MaxConcurrency, or Lambda's own "
        "scaling for events) and the bill, which does not depend on the concurrency. Lambda at "
        f"{MEMORY_MB} MB; each object one GET and its answer one PUT; the result cache one read and one write per "
        "photo (all distinct). Upload events also tag each object (one PUT more); S3 event notifications are free.",
        "",
        table(["how", "photos/s per container", *(f"wall time at {c:,}" for c in CONCURRENCIES), "bill by part",
               "total"], cost_rows),
        "",
        f"Prices (us-east-1 list prices as of {PRICES_AS_OF}; check the pages before relying on them):",
        "",
        table(["price", "USD", "source"], [[name.replace("_", " "), f"{value:.10g}", source]
                                           for name, (value, source) in PRICES.items()]),
    ]
    return SectionResult(NUMBER, TITLE, "\n".join(lines), [], time.perf_counter() - started)
