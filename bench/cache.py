"""Section 3: result cache hit vs miss, per store, by the cache engineer's own tool (bench/cache_latency.py).

It is run as a subprocess and its table is embedded as printed; DynamoDB is moto's server on 127.0.0.1 here
(DynamoDB Local binds every interface, so the benchmark does not start it outside a private network namespace).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from bench.paths import REPO_ROOT
from bench.report import SectionResult

NUMBER = 3
TITLE = "Result cache: hit vs miss per store"
RUNS = 200
SECONDS_PER_CELL = 3


def run(context) -> SectionResult:
    started = time.perf_counter()
    environment = {key: value for key, value in os.environ.items() if key != "TEST_PRIVATE_NETNS"}
    done = subprocess.run([sys.executable, "-m", "bench.cache_latency", "--runs", str(RUNS),
                           "--seconds", str(SECONDS_PER_CELL)],
                          cwd=REPO_ROOT, env=environment, capture_output=True, text=True, check=True, timeout=300)
    markdown = "\n".join([
        f"`python -m bench.cache_latency --runs {RUNS} --seconds {SECONDS_PER_CELL}`: each cell is at most {RUNS} "
        f"calls or {SECONDS_PER_CELL} s after a 5-call warm-up, on the function's store classes "
        "(function/cache/), with a /classify-shaped result (~0.5 KB). A hit in any store replaces the whole "
        "decode + invoke of a request (section 2); a miss is what a new input pays on top of it.",
        "",
        done.stdout.strip(),
    ])
    return SectionResult(NUMBER, TITLE, markdown, [], time.perf_counter() - started)
