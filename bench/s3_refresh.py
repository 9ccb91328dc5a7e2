"""Section 13: requests while S3 hangs. Models served from S3 (MODEL_SOURCE=s3://..., moto on 127.0.0.1, behind a
proxy that can break its network: kit/s3_proxy.py). Once the function is warm, S3 turns "hung": it
accepts connections and never answers. Each revision then answers, in a fresh process driven only through
`function.app.handler`: two warm /classify requests, each when a refresh check is due (MODEL_REFRESH_SECONDS=1), and
the first /sentiment request, whose model files were never downloaded (the one S3 call left on the API path).

BEFORE is the last revision whose refresh check ran inside the request (three attempts of up to 10 s each); HEAD is
the working tree. `python -m bench --section 13`, or `python -m bench.s3_refresh [BASE]` to print the table alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.paths import BUILD_DIR, MODELS_DIR
from bench.report import SectionResult, table
from bench.revision_checkout import checked_out

NUMBER = 13
TITLE = "Requests while S3 hangs: the model refresh and first downloads"
# The last revision that checked for a new model version inside the request.
BEFORE = "46de0c327a03615691e62ac54ae67dd778e7af6c"
WORKER_TIMEOUT_SECONDS = 300
SCRATCH = BUILD_DIR / "s3-refresh"

# Runs inside the revision under test (its own function/ on PYTHONPATH): warm up through the proxy, say so, wait
# for the parent to make S3 hang, then time the requests. Only function.app.handler and API Gateway v2 events.
WORKER = r"""
import json, sys, time
bodies = json.load(open(sys.argv[1]))

def event(path, body):
    return {"version": "2.0", "routeKey": "$default", "rawPath": path, "rawQueryString": "",
            "headers": {"content-type": "application/json"}, "isBase64Encoded": False, "body": json.dumps(body),
            "requestContext": {"http": {"method": "POST", "path": path, "protocol": "HTTP/1.1",
                                        "sourceIp": "127.0.0.1"}, "requestId": "bench", "stage": "$default"}}

def timed(path):
    started = time.perf_counter()
    answer = app.handler(event(path, bodies[path]), None)
    return {"ms": (time.perf_counter() - started) * 1e3, "status": answer["statusCode"]}

import function.app as app
warm = timed("/classify")
print("BENCH", json.dumps({"warm": warm}), flush=True)  # stdout also holds the log lines
sys.stdin.readline()  # S3 hangs from now on
due = []
for _ in range(2):
    time.sleep(1.2)  # a refresh check is due
    due.append(timed("/classify"))
print("BENCH", json.dumps({"due": due, "first_use": timed("/sentiment")}), flush=True)
"""


def request_bodies(path: Path) -> Path:
    from kit.photos import b64, encode, photo  # noqa: PLC0415  (moto, the proxy and the publisher only when the section runs)

    bodies = {"/classify": {"image": b64(encode(photo("camera").resize((8, 8)), "PNG")), "model": "digits"},
              "/sentiment": {"text": "What a wonderful, moving film."}}
    path.write_text(json.dumps(bodies))
    return path


def answer_of(process: subprocess.Popen) -> dict:
    """The worker's next BENCH line; the function's own log lines go to stdout too."""
    for line in process.stdout:
        if line.startswith("BENCH "):
            return json.loads(line[len("BENCH "):])
    raise RuntimeError(f"the worker ended without an answer (exit status {process.wait()})")


def measure(source: Path, environment: dict[str, str], proxy, bodies: Path) -> dict:
    """One revision in a fresh process: its timings under a hung S3 (the proxy is up again afterwards)."""
    proxy.mode = "up"
    process = subprocess.Popen([sys.executable, "-c", WORKER, str(bodies)], cwd=source, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               env={**environment, "PYTHONPATH": str(source)})
    try:
        ready = answer_of(process)
        assert ready["warm"]["status"] == 200, ready
        proxy.mode = "hung"
        process.stdin.write("go\n")
        process.stdin.flush()
        result = answer_of(process)
        process.wait(WORKER_TIMEOUT_SECONDS)
        return result
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        proxy.mode = "up"


def compare(base: str = BEFORE) -> tuple[list[str], list[list[str]]]:
    from convert.publish import publish  # noqa: PLC0415  (moto, the proxy and the publisher only when the section runs)
    from function.aws.s3 import client_from_environment  # noqa: PLC0415  (moto, the proxy and the publisher only when the section runs)
    from kit.aws_server import aws_in_this_process  # noqa: PLC0415  (moto, the proxy and the publisher only when the section runs)
    from kit.s3_proxy import S3Proxy  # noqa: PLC0415  (moto, the proxy and the publisher only when the section runs)

    results = {}
    with aws_in_this_process() as (server, s3_environment), S3Proxy(server.endpoint) as proxy, \
            tempfile.TemporaryDirectory() as scratch:
        bucket = server.bucket()
        for name in ("digits", "sentiment"):
            publish(MODELS_DIR / name, f"s3://{bucket}/models/", client_from_environment())
        bodies = request_bodies(Path(scratch) / "bodies.json")
        for role, spec in (("before", base), ("head", None)):
            with checked_out(spec, SCRATCH, role) as revision:
                downloads = Path(scratch) / role
                environment = {**os.environ, **s3_environment, "AWS_ENDPOINT_URL_S3": proxy.url,
                               "MODEL_SOURCE": f"s3://{bucket}/models/", "MODEL_REFRESH_SECONDS": "1",
                               "MODEL_DOWNLOAD_DIR": str(downloads), "RESULTS_CACHE": "off"}
                results[revision.label] = measure(revision.source, environment, proxy, bodies)
    labels = list(results)

    def cell(sample: dict) -> str:
        return f"{sample['ms'] / 1e3:.2f} s ({sample['status']})"

    rows = [
        ["warm /classify when a refresh check is due (worst of 2)",
         *[cell(max(results[label]["due"], key=lambda sample: sample["ms"])) for label in labels]],
        ["first /sentiment: its files not downloaded yet", *[cell(results[label]["first_use"]) for label in labels]],
    ]
    return labels, rows


def run(context) -> SectionResult:
    started = time.perf_counter()
    labels, rows = compare()
    lines = [
        "S3 (moto on 127.0.0.1, behind a proxy) is made to hang once the function is warm: it accepts every "
        "connection and never answers. Each revision runs in a fresh process driven through `function.app.handler` "
        "(MODEL_REFRESH_SECONDS=1, RESULTS_CACHE=off); each cell is the request's wall time (its HTTP status). "
        f"Before: {labels[0]}, whose refresh check ran inside the request (3 attempts, 10 s read timeout each). "
        f"After: {labels[1]}: the check runs in the background with one attempt and 1 s waits, and a request that "
        "must download a model's files waits with the same limits (503, tried again by the next request).",
        "",
        table(["request, S3 hung", f"before ({labels[0]})", f"after ({labels[1]})"], rows),
    ]
    return SectionResult(NUMBER, TITLE, "\n".join(lines), [], time.perf_counter() - started)


if __name__ == "__main__":
    names, table_rows = compare(*sys.argv[1:2])
    print(table(["request, S3 hung", *names], table_rows))
