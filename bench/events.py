"""Section 11: beyond API Gateway. What an AWS client costs a cold start (boto3 vs the function's own S3 client),
a cold start with the model downloaded from S3 (moto) vs read from the image, and the time an S3 upload event adds
to classifying the same photo over HTTP.

S3 is moto's server on 127.0.0.1 (the same as the tests use): its transfer rate and latency are a local Python
server's, not S3's, so the S3 figures say what the function's own work costs, not what a region's S3 adds.
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import subprocess
import sys
import time

from bench import cold_start, inputs, lambda_runtimes
from bench.paths import MODELS_DIR, REPO_ROOT
from bench.report import SectionResult, table
from bench.stats import percentile, summarize
from kit.events import http_api_event
from kit.photos import cat_jpeg

NUMBER = 11
TITLE = "Beyond API Gateway: AWS clients, models from S3, upload events"
IMAGE_MODEL = "efficientnet_lite0"
UPLOAD_KEY = "uploads/cat.jpg"
# Fresh-process snippets: each prints how long its import and its client took, and the memory they added.
CLIENTS = {
    "boto3 (`import boto3`, `boto3.client('s3')`)": ("import boto3", "boto3.client('s3')"),
    "the function's S3 client (function/aws/s3.py)": ("from function.aws import s3",
                                                      "s3.client_from_environment()"),
}
# "after the function": what a container that already imported function.app (the API path) pays on top of it.
PREAMBLES = {"alone": "", "after the function": "import function.service"}
PROBE = """import json, os, time
{preamble}
def rss_mb():  # resident now, from /proc: what the import and the client add
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
r0 = rss_mb()
t0 = time.perf_counter()
{import_line}
t1 = time.perf_counter()
client = {client_line}
t2 = time.perf_counter()
print(json.dumps({{"import_ms": (t1 - t0) * 1e3, "client_ms": (t2 - t1) * 1e3, "rss_mb": rss_mb() - r0}}))"""


# ---- (a) AWS client cost in a fresh process ----------------------------------------------------------------------

def client_costs(runs: int) -> list[list[str]]:
    from kit.dynamodb_server import FAKE_CREDENTIALS  # noqa: PLC0415  (each section imports what it measures, when it runs)

    environment = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO_ROOT), **FAKE_CREDENTIALS}
    probes = [(label, where) for label in CLIENTS for where in PREAMBLES]
    samples: dict[tuple[str, str], list[dict]] = {probe: [] for probe in probes}
    for _ in range(runs + 1):  # interleaved; the first round only warms the page cache
        for label, where in probes:
            import_line, client_line = CLIENTS[label]
            code = PROBE.format(preamble=PREAMBLES[where], import_line=import_line, client_line=client_line)
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                  env=environment, cwd=REPO_ROOT)
            samples[(label, where)].append(json.loads(done.stdout))
    rows = []
    for (label, where), measured in samples.items():
        measured = measured[1:]
        rows.append([label, where, summarize([m["import_ms"] for m in measured]).text("ms"),
                     summarize([m["client_ms"] for m in measured]).text("ms"),
                     summarize([m["import_ms"] + m["client_ms"] for m in measured]).text("ms"),
                     f"+{statistics.median(m['rss_mb'] for m in measured):.1f} MB"])
    return rows


# ---- (b) cold start, model from S3 vs from the image ----------------------------------------------------------

def cold_starts(runs: int, server, s3_environment: dict) -> list[list[str]]:
    from convert.publish import publish  # noqa: PLC0415  (each section imports what it measures, when it runs)
    from function.aws.s3 import client_from_environment  # noqa: PLC0415  (each section imports what it measures, when it runs)

    bucket = server.bucket()
    client = client_from_environment()
    for name in sorted(p.parent.name for p in MODELS_DIR.glob("*/manifest.json")):
        publish(MODELS_DIR / name, f"s3://{bucket}/models/", client)
    configuration = lambda_runtimes.function_configuration()
    event = http_api_event("POST", "/classify", inputs.classify_body(IMAGE_MODEL))
    variants = {
        "models in the image (MODEL_DIR)": {},
        "models from S3 (MODEL_SOURCE=s3://..., moto)": {**s3_environment,
                                                         "MODEL_SOURCE": f"s3://{bucket}/models/"},
    }
    samples = {label: {"first": [], "init": [], "download": [], "labels": set()} for label in variants}
    for round_number in range(runs + 1):  # interleaved; round 0 is discarded (page cache)
        for label, environment in variants.items():
            started = time.perf_counter()
            with configuration.runtime(environment) as runtime:  # a fresh /tmp: nothing downloaded yet
                invocation = runtime.invoke(event)
                elapsed = (time.perf_counter() - started) * 1e3
            if invocation.status != 200:
                raise RuntimeError(f"{label} answered {invocation.status}: {invocation.payload}")
            if round_number:
                measured = samples[label]
                measured["first"].append(elapsed)
                measured["init"].append(invocation.init_phase_ms or 0.0)
                measured["download"] += [line["timings_ms"]["download"]
                                         for line in cold_start.json_lines(invocation.logs)
                                         if line.get("message") == "model files ready"]
                measured["labels"].add(invocation.json_body()["predictions"][0]["label"])
    rows = []
    for label, measured in samples.items():
        download = summarize(measured["download"]).text("ms", 0) if measured["download"] else "-"
        rows.append([label, summarize(measured["first"]).text("ms", 0), summarize(measured["init"]).text("ms", 0),
                     download, ", ".join(sorted(measured["labels"]))])
    return rows


# ---- (c) an upload event vs the same photo over HTTP -----------------------------------------------------------

class CapturedLines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.fields: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.fields.append({"message": record.getMessage(), **getattr(record, "fields", {})})


def upload_events(requests: int, server) -> tuple[list[list[str]], list[list[str]]]:
    from function.cache.base import NullResultStore  # noqa: PLC0415  (each section imports what it measures, when it runs)
    from function.cache.memory import MemoryResultStore  # noqa: PLC0415  (each section imports what it measures, when it runs)
    from function.config import ServiceSettings  # noqa: PLC0415  (each section imports what it measures, when it runs)
    from function.entry import handle_event  # noqa: PLC0415  (each section imports what it measures, when it runs)
    from function.catalog.registry import ModelRegistry  # noqa: PLC0415  (each section imports what it measures, when it runs)
    from function.service import Service  # noqa: PLC0415  (each section imports what it measures, when it runs)
    from kit.aws_events import s3_object_created  # noqa: PLC0415  (each section imports what it measures, when it runs)

    registry = ModelRegistry(MODELS_DIR)
    settings = ServiceSettings.from_env({}, model_dir=MODELS_DIR, uploads_prefix="uploads/")
    uncached = Service(settings, NullResultStore(), registry)
    cached = Service(settings, MemoryResultStore(100, 3600), registry)
    bucket = server.bucket()
    photo = cat_jpeg()
    server.s3.put_object(Bucket=bucket, Key=UPLOAD_KEY, Body=photo)
    upload = s3_object_created(bucket, UPLOAD_KEY, len(photo))
    http = http_api_event("POST", "/classify", inputs.classify_body(IMAGE_MODEL))
    calls = {
        "HTTP /classify (JSON, base64), no cache": (uncached, http),
        "S3 upload event, no cache (read, classify, write JSON, tag)": (uncached, upload),
        "S3 upload event, same content again (result cache hit)": (cached, upload),
    }
    captured = CapturedLines()
    logger = logging.getLogger("function")
    level, logger.level = logger.level, logging.INFO
    logger.addHandler(captured)
    times: dict[str, list[float]] = {label: [] for label in calls}
    stages: list[dict] = []
    try:
        for round_number in range(requests + 1):  # round 0 loads the model and fills the cache: discarded
            for label, (service, event) in calls.items():
                captured.fields.clear()
                started = time.perf_counter()
                handle_event(service, event, None)
                if round_number:
                    times[label].append((time.perf_counter() - started) * 1e3)
                    if service is uncached and event is upload:
                        stages += [f["timings_ms"] for f in captured.fields if f["message"] == "s3 upload"]
    finally:
        logger.removeHandler(captured)
        logger.level = level
    base = statistics.median(times[next(iter(calls))])
    rows = [[label, f"{statistics.median(values):.1f} ms", f"{percentile(values, 0.9):.1f} ms",
             f"{statistics.median(values) - base:+.1f} ms"] for label, values in times.items()]
    stage_rows = [[stage, f"{statistics.median(s.get(stage, 0.0) for s in stages):.1f}"]
                  for stage in dict.fromkeys(stage for s in stages for stage in s)]
    return rows, stage_rows


def run(context) -> SectionResult:
    started = time.perf_counter()
    client_runs = max(context.runs, 10)
    clients = client_costs(client_runs)
    from kit.aws_server import aws_in_this_process  # noqa: PLC0415  (moto: only when the section runs)

    with aws_in_this_process() as (server, s3_environment):
        starts = cold_starts(context.runs, server, s3_environment)
        uploads, upload_stages = upload_events(max(context.warm_requests // 4, 20), server)
    lines = [
        "S3 is moto's server on 127.0.0.1: its latency and transfer rate are a local Python server's, not a "
        "region's S3, so these figures are the function's own cost on top of whatever S3 takes.",
        "",
        f"**What an S3 client costs a cold start.** A fresh Python process ({sys.version.split()[0]}, the dev venv: "
        "boto3 is not in requirements.txt) imports it and makes one client, either alone or after importing the "
        "function's API path (`function.service`: what a container has already paid when an S3 or SQS event or "
        f"MODEL_SOURCE=s3:// needs the client); {client_runs} runs each, interleaved, after one discarded round; "
        "median (min-max). boto3 ships in the Lambda base image, so it costs no image size there: the difference "
        "is the cold start alone.",
        "",
        table(["client", "imported", "import", "client", "import + client", "RSS it adds (median)"], clients),
        "",
        f"**Cold start with the model from S3.** As section 1 (a): the image's task root under the Lambda runtime "
        f"emulator, fresh execution environment (and empty /tmp) per run, first /classify on {IMAGE_MODEL}; "
        f"{context.runs} runs each, interleaved, after one discarded round. From S3, the init reads index.json "
        "(every model's manifest) and the first request downloads and verifies that one model's files (the "
        "function's own log line gives the download time).",
        "",
        table(["models", "first answer", "init", "download + sha256 (first request)", "top-1"], starts),
        "",
        "**Time an upload event adds.** In-process, warm, one photo (the JPEG of section 1); each round calls "
        "the three in turn, after one discarded round; median and p90 over the rounds. The upload event reads the "
        "object from S3, classifies it, writes <RESULTS_PREFIX><bucket>/<key>.json and its tags (one GET of the "
        "object, "
        "one PUT of the answer, one PUT of the tags: the object has no tags of its own).",
        "",
        table(["call", "median", "p90", "vs HTTP"], uploads),
        "",
        "Where an uncached upload event's time goes (the function's own log line, median ms):",
        "",
        table(["stage", "ms"], upload_stages),
    ]
    return SectionResult(NUMBER, TITLE, "\n".join(lines), [], time.perf_counter() - started)


if __name__ == "__main__":
    print(run(type("Context", (), {"runs": 3, "warm_requests": 40, "load_seconds": 0})()).markdown)
    sys.exit(0)
