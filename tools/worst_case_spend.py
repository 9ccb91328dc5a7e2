"""What the deployed API can cost per hour at its caps, from a packaged CloudFormation template.

    tools/node_modules/.bin/osls package --package /tmp/pkg --param="imageUri=<any ECR digest URI>" [--param ...]
    python tools/worst_case_spend.py /tmp/pkg/cloudformation-template-update-stack.json

Prints the markdown table that docs/threat-model.md carries (tests/e2e/test_threat_model.py checks they agree).
The caps come from the template (stage throttle, reserved concurrency, memory, table ceiling, access log); the
prices and the measured per-request figures are the constants below.
"""
from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path

PRICES_AS_OF = "us-east-1 list prices as AWS published them in 2025 (DynamoDB on-demand: since 1 November 2024)"
LAMBDA_PER_REQUEST = 0.20 / 1e6
LAMBDA_PER_GB_SECOND = {"x86_64": 0.0000166667, "arm64": 0.0000133334}
HTTP_API_PER_REQUEST = 1.00 / 1e6  # first 300 million a month; metered in 512 KB units of request
HTTP_API_METERING_BYTES = 512 * 1024
DYNAMODB_PER_WRITE_UNIT = 0.625 / 1e6
DYNAMODB_PER_READ_UNIT = 0.125 / 1e6
LOGS_PER_GB_INGESTED = 0.50
DATA_OUT_PER_GB = 0.09  # to the internet, first 10 TB a month
GB = 1024**3

# Measured (docs/threat-model.md says how to reproduce each).
WARM_CLASSIFY_MS = 7.12  # BENCHMARKS.md: warm /classify, handler p50 (Lambda bills whole milliseconds)
FUNCTION_LOG_BYTES = 520  # the function's JSON line for one /classify
PLATFORM_LOG_BYTES = 300  # Lambda's START, END and REPORT lines
ACCESS_LOG_BYTES = 600  # one access-log line in serverless.yml's format
LOOP_REQUEST_BYTES = 35 * 1024  # one photo (the benchmark's JPEG is 34 KB)
LOOP_ANSWER_BYTES = 500  # a /classify answer with the default top_k=5
LOOP_WRITE_UNITS, LOOP_READ_UNITS = 1, 0.5  # one ~0.5 KB result written, one eventually consistent lookup
LARGEST_REQUEST_BYTES = 10 * 1024 * 1024  # HTTP API's payload limit (the function refuses it, API Gateway bills it)
LARGEST_ANSWER_BYTES = 616_463  # /classify, 16 images with top_k=1000
ANONYMOUS_FLOOD_PER_SECOND = 10_000  # API Gateway's default account throttle per region


@dataclass(frozen=True)
class Caps:
    rate: float
    burst: float
    reserved: int | None
    memory_gb: float
    architecture: str
    table_units: float
    access_logs: bool

    @property
    def requests_per_hour(self) -> float:
        return self.rate * 3600 + self.burst  # the burst bucket starts full

    @property
    def log_bytes(self) -> int:
        return FUNCTION_LOG_BYTES + PLATFORM_LOG_BYTES + (ACCESS_LOG_BYTES if self.access_logs else 0)


def only(resources: dict, kind: str) -> dict:
    (found,) = [r["Properties"] for r in resources.values() if r["Type"] == kind]
    return found


def caps_of(template: dict) -> Caps:
    resources = template["Resources"]
    function = only(resources, "AWS::Lambda::Function")
    stage = only(resources, "AWS::ApiGatewayV2::Stage")
    table = only(resources, "AWS::DynamoDB::Table")
    reserved = str(template["Parameters"]["ReservedConcurrency"]["Default"])
    units = table["OnDemandThroughput"]
    return Caps(
        rate=float(stage["DefaultRouteSettings"]["ThrottlingRateLimit"]),
        burst=float(stage["DefaultRouteSettings"]["ThrottlingBurstLimit"]),
        reserved=None if reserved == "none" else int(reserved),
        memory_gb=int(function["MemorySize"]) / 1024,
        architecture=function.get("Architectures", ["x86_64"])[0],
        table_units=float(max(units["MaxWriteRequestUnits"], units["MaxReadRequestUnits"])),
        access_logs="AccessLogSettings" in stage,
    )


def dollars(value: float | None) -> str:
    if value is None:
        return "no cap"
    return f"${value:,.2f}" if value >= 0.1 else f"${value:.3f}"


def rows(caps: Caps) -> list[tuple[str, str, float, float | None]]:
    """(item, what bounds it, a script looping /classify, an allowed caller reaching every cap) in $ per hour."""
    requests = caps.requests_per_hour
    units_each = math.ceil(LARGEST_REQUEST_BYTES / HTTP_API_METERING_BYTES)
    billed_seconds = math.ceil(WARM_CLASSIFY_MS) / 1000
    compute = []
    for arch, price in LAMBDA_PER_GB_SECOND.items():
        loop = requests * billed_seconds * caps.memory_gb * price
        ceiling = None if caps.reserved is None else caps.reserved * caps.memory_gb * 3600 * price
        label = f"Lambda compute, {arch}" + (" (deployed)" if arch == caps.architecture else " (if switched)")
        compute.append((f"{label}: ${price:.10f}".rstrip("0") + " per GB-s",
                        f"{math.ceil(WARM_CLASSIFY_MS)} ms billed per request / {caps.reserved or 'no'} containers "
                        f"x {caps.memory_gb:.3f} GB all hour", loop, ceiling))
    return [
        ("API Gateway HTTP API: $1.00 per million requests of up to 512 KB",
         f"throttle: {requests:,.0f} requests an hour / each {LARGEST_REQUEST_BYTES // 2**20} MB "
         f"= {units_each} requests", requests * math.ceil(LOOP_REQUEST_BYTES / HTTP_API_METERING_BYTES)
         * HTTP_API_PER_REQUEST, requests * units_each * HTTP_API_PER_REQUEST),
        ("Lambda requests: $0.20 per million", "throttle", requests * LAMBDA_PER_REQUEST,
         requests * LAMBDA_PER_REQUEST),
        *compute,
        ("DynamoDB writes: $0.625 per million units", f"1 unit per new result / table ceiling "
         f"{caps.table_units:,.0f} a second", requests * LOOP_WRITE_UNITS * DYNAMODB_PER_WRITE_UNIT,
         caps.table_units * 3600 * DYNAMODB_PER_WRITE_UNIT),
        ("DynamoDB reads: $0.125 per million units", f"0.5 unit per lookup / table ceiling "
         f"{caps.table_units:,.0f} a second", requests * LOOP_READ_UNITS * DYNAMODB_PER_READ_UNIT,
         caps.table_units * 3600 * DYNAMODB_PER_READ_UNIT),
        ("CloudWatch Logs: $0.50 per GB ingested", f"{caps.log_bytes / 1000:.1f} KB per request",
         requests * caps.log_bytes / GB * LOGS_PER_GB_INGESTED, requests * caps.log_bytes / GB * LOGS_PER_GB_INGESTED),
        ("Data transfer out: $0.09 per GB", f"{LOOP_ANSWER_BYTES / 1000:.1f} KB / "
         f"{LARGEST_ANSWER_BYTES / 1e6:.2f} MB per answer", requests * LOOP_ANSWER_BYTES / GB * DATA_OUT_PER_GB,
         requests * LARGEST_ANSWER_BYTES / GB * DATA_OUT_PER_GB),
    ]


def table(caps: Caps) -> str:
    """Each line's worst case is its own maximum (a 10 MB request never reaches the function, for one): their sum
    bounds the total from above."""
    lines = ["| per hour | bounded by (loop / worst) | a script looping /classify | every cap reached |",
             "|---|---|---:|---:|"]
    loop_total, worst_total = 0.0, 0.0
    for item, bound, loop, worst in rows(caps):
        lines.append(f"| {item} | {bound} | {dollars(loop)} | {dollars(worst)} |")
        if "if switched" not in item:
            loop_total += loop
            worst_total = None if worst is None or worst_total is None else worst_total + worst
    lines.append(f"| **total, as deployed ({caps.architecture})** | | **{dollars(loop_total)}** | "
                 f"**{dollars(worst_total)}** |")
    worst_per_day = None if worst_total is None else worst_total * 24
    lines.append(f"| per day | | {dollars(loop_total * 24)} | {dollars(worst_per_day)} |")
    flood = ANONYMOUS_FLOOD_PER_SECOND * 3600 * ACCESS_LOG_BYTES / GB * LOGS_PER_GB_INGESTED if caps.access_logs else 0
    return "\n".join([
        f"Caps: {caps.rate:g} requests/s (burst {caps.burst:g}), {caps.reserved or 'unreserved'} containers of "
        f"{caps.memory_gb * 1024:.0f} MB ({caps.architecture}), table ceiling {caps.table_units:g} units/s, access "
        f"log {'on' if caps.access_logs else 'off'}. Prices: {PRICES_AS_OF}.",
        "",
        *lines,
        "",
        f"Refused requests (over the throttle, or without a valid signature or token): API Gateway does not bill "
        f"them and the function never runs; each writes one access-log line, so a flood at API Gateway's account "
        f"limit ({ANONYMOUS_FLOOD_PER_SECOND:,} requests/s) costs {dollars(flood)} an hour in log ingestion.",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("template", type=Path, help="cloudformation-template-update-stack.json from a package run")
    args = parser.parse_args()
    print(table(caps_of(json.loads(args.template.read_text()))))


if __name__ == "__main__":
    main()
