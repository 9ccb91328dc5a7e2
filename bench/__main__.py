"""`python -m bench [--section N ...]`: run the benchmark sections and write BENCHMARKS.md at the repo root.

Each section's result is kept under build/bench/results/, so rerunning one section (`--section 3`) rewrites
BENCHMARKS.md with the fresh section and the last results of the others.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import sys
import time
import traceback

from bench.paths import BENCHMARKS_MD, BUILD_DIR
from bench.report import SectionResult, published_sections, render

# Section number -> module, in the order.
SECTIONS = {
    1: "bench.cold_start",
    2: "bench.warm_latency",
    3: "bench.cache",
    4: "bench.memory",
    5: "bench.footprint",
    6: "bench.throughput",
    7: "bench.conversion",
    8: "bench.embeddings",
    9: "bench.soak",
    10: "bench.tensor_latency",
    11: "bench.events",
    12: "bench.image_layers",
    13: "bench.s3_refresh",
    14: "bench.metrics_overhead",
    15: "bench.bulk",
    16: "bench.first_invoke",
    17: "bench.floors_peers",
    18: "bench.big_model_section",
    19: "bench.byo_encoder",
}
RESULTS_DIR = BUILD_DIR / "results"


@dataclasses.dataclass(frozen=True)
class BenchContext:
    runs: int  # fresh processes per cold-start / memory configuration
    warm_requests: int  # timed requests per route for warm latency
    load_seconds: int  # wrk duration per route and concurrency


def run_section(number: int, context: BenchContext, run_started: str) -> SectionResult:
    module = importlib.import_module(SECTIONS[number])
    print(f"==> [{time.strftime('%T')}] section {number}: {module.TITLE}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    try:
        result = module.run(context)
    except Exception as error:  # one broken section must not cost the others their numbers
        traceback.print_exc()
        result = SectionResult(number, module.TITLE,
                               f"Not measured in this run: `{type(error).__name__}: {str(error)[:300]}`")
    result.seconds = time.perf_counter() - started
    result.run_started = run_started
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / f"{number}.json").write_text(json.dumps(dataclasses.asdict(result)))
    print(f"==> [{time.strftime('%T')}] section {number} done in {result.seconds:.0f} s", file=sys.stderr, flush=True)
    return result


def stored_results() -> list[SectionResult]:
    """Each section's last stored result; a section never run here keeps what BENCHMARKS.md publishes."""
    known = {field.name for field in dataclasses.fields(SectionResult)}
    results = [SectionResult(**{k: v for k, v in json.loads(path.read_text()).items() if k in known})
               for path in sorted(RESULTS_DIR.glob("*.json")) if int(path.stem) in SECTIONS]
    measured = {result.number for result in results}
    published = published_sections(BENCHMARKS_MD.read_text()) if BENCHMARKS_MD.exists() else []
    return sorted(results + [section for section in published if section.number in SECTIONS
                             and section.number not in measured], key=lambda section: section.number)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--section", type=int, action="append", choices=sorted(SECTIONS),
                        help="run only this section (repeatable); the others keep their last stored results")
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per configuration (default 5)")
    parser.add_argument("--warm-requests", type=int, default=200, help="timed requests per route (default 200)")
    parser.add_argument("--load-seconds", type=int, default=10, help="load duration per route (default 10)")
    args = parser.parse_args(argv)

    context = BenchContext(runs=args.runs, warm_requests=args.warm_requests, load_seconds=args.load_seconds)
    started = time.perf_counter()
    run_started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for number in args.section or sorted(SECTIONS):
        run_section(number, context, run_started)
    results = stored_results()
    total = sum(result.seconds for result in results)
    command = "make bench" if not args.section else "python -m bench " + " ".join(
        f"--section {n}" for n in args.section)
    BENCHMARKS_MD.write_text(render(results, total, command))
    print(f"==> [{time.strftime('%T')}] wrote {BENCHMARKS_MD.name} ({time.perf_counter() - started:.0f} s)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
