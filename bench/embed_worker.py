"""Times warm /embed handler calls inside one stack's own venv and task root (run by bench/embeddings.py).

`python bench/embed_worker.py PLAN.json OUT.json`, run as a script (not `-m bench...`): with the stack's task root
alone on PYTHONPATH, `bench` may be the baseline's own package there, so this file imports the standard library
only. PLAN.json: {"handler": "module.function", "requests": {case: N}, "events": {case: API Gateway event}}, and
optionally "warmup": {case: untimed calls} (default 5).
Writes {case: {"ms": [...], "status": int, "body": first answer's JSON body}} to OUT.json.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from pathlib import Path

WARMUP_REQUESTS = 5


def load_handler(dotted: str):
    module, _, function = dotted.rpartition(".")
    return getattr(importlib.import_module(module), function)


def main(plan_file: str, out_file: str) -> None:
    plan = json.loads(Path(plan_file).read_text())
    handler = load_handler(plan["handler"])
    results = {}
    for case, event in plan["events"].items():
        first = handler(event, None)
        results[case] = {"status": first["statusCode"], "body": json.loads(first["body"]), "ms": []}
        if first["statusCode"] != 200:
            continue
        for _ in range(plan.get("warmup", {}).get(case, WARMUP_REQUESTS)):
            handler(event, None)
        for _ in range(plan["requests"][case]):
            started = time.perf_counter()
            handler(event, None)
            results[case]["ms"].append((time.perf_counter() - started) * 1000)
    Path(out_file).write_text(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
