"""`python -m bench.cache_latency`: result-cache hit vs miss latency per backend (memory, SQLite, DynamoDB).

DynamoDB is DynamoDB Local when run inside a private network namespace with TEST_PRIVATE_NETNS=1 (it binds every
interface), else moto's server on 127.0.0.1:
  unshare -n -- bash -c 'ip link set lo up && TEST_PRIVATE_NETNS=1 .venv/bin/python -m bench.cache_latency'
Each cell is a bounded run (at most --runs calls or --seconds, whichever ends first) after a short warm-up;
it prints the median and the min-max in milliseconds. Not a test: nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.stats import summarize
from function.cache.dynamodb import DynamoDBResultStore
from function.cache.keys import digest_bytes, result_key
from function.cache.memory import MemoryResultStore
from function.cache.sqlite import SqliteResultStore

WARMUP_CALLS = 5
BATCH = 100
MODEL = "0" * 64


def sample_result(i: int) -> dict:
    """The shape /classify returns for one image with top_k=5 (~0.5 KB as JSON)."""
    top = [{"label": f"class_{i}_{rank}", "score": round(0.9 / (rank + 1), 6)} for rank in range(5)]
    return {"label": top[0]["label"], "score": top[0]["score"], "top_k": top}


def keys(prefix: str, count: int) -> list[str]:
    return [result_key(MODEL, "image_classification", digest_bytes(f"{prefix}{i}".encode()), {"top_k": 5})
            for i in range(count)]


def timed(call: Callable[[int], object], runs: int, seconds: float) -> list[float]:
    for i in range(WARMUP_CALLS):
        call(i)
    samples: list[float] = []
    deadline = time.perf_counter() + seconds
    for i in range(runs):
        start = time.perf_counter()
        call(WARMUP_CALLS + i)
        samples.append((time.perf_counter() - start) * 1000.0)
        if time.perf_counter() > deadline:
            break
    return samples


def measure(name: str, store, runs: int, seconds: float) -> list[tuple[str, str, list[float]]]:
    stored = keys(f"{name}-stored-", 1000)
    store.put_many({key: sample_result(i) for i, key in enumerate(stored)})
    absent = keys(f"{name}-absent-", runs + WARMUP_CALLS)
    fresh = keys(f"{name}-fresh-", runs + WARMUP_CALLS)
    rows = [
        ("hit, 1 key", timed(lambda i: store.get_many([stored[i % len(stored)]]), runs, seconds)),
        ("miss, 1 key", timed(lambda i: store.get_many([absent[i]]), runs, seconds)),
        ("write, 1 result", timed(lambda i: store.put_many({fresh[i]: sample_result(i)}), runs, seconds)),
        (f"hit, batch of {BATCH}", timed(
            lambda i: store.get_many(stored[(i * BATCH) % 900:(i * BATCH) % 900 + BATCH]), runs, seconds)),
    ]
    counts = store.stats.snapshot()
    if counts["errors"] or counts["throttled"] or counts["corrupt"]:
        print(f"warning: {name} counted failures during the run: {counts}", file=sys.stderr)
    return [(name, operation, samples) for operation, samples in rows]


def table(rows: list[tuple[str, str, list[float]]]) -> str:
    lines = ["| store | operation | median ms | min-max ms | calls |", "|---|---|---:|---:|---:|"]
    for store, operation, samples in rows:
        summary = summarize(samples)
        lines.append(f"| {store} | {operation} | {summary.median:.3f} | "
                     f"{summary.low:.3f}-{summary.high:.3f} | {summary.runs} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cache_latency", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="timed calls per cell at most (default 200)")
    parser.add_argument("--seconds", type=float, default=5.0, help="time per cell at most (default 5)")
    args = parser.parse_args(argv)

    from kit.dynamodb_server import DynamoDBServer, create_results_table  # noqa: PLC0415  (after the arguments are parsed: --help needs no moto)

    rows = []
    rows += measure("memory (LRU)", MemoryResultStore(10_000, ttl_seconds=3600), args.runs, args.seconds)
    with tempfile.TemporaryDirectory() as scratch:
        sqlite = SqliteResultStore(Path(scratch) / "bench.sqlite3", ttl_seconds=3600)
        rows += measure("sqlite (WAL file)", sqlite, args.runs, args.seconds)
        sqlite.close()
    with DynamoDBServer() as server:
        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = server.endpoint
        table_name = create_results_table(server.client())
        dynamodb = DynamoDBResultStore(table_name, ttl_seconds=3600)
        rows += measure(f"dynamodb ({server.kind})", dynamodb, args.runs, args.seconds)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
