"""Where a minilm process's memory goes: resident memory after each step of loading and answering, in the Lambda venv.

`measure(model_dir)` runs this file as a script in the function's venv (the libraries alone, as the floor uses them)
and returns [(step, VmRSS MB, anonymous MB, file-backed MB, ms the step took)]: the interpreter's own start, each
library's import, the interpreter on the model file, the first invoke (XNNPACK packs the weights then), one long
batch, and the peak.
File-backed pages are the mapped model and libraries (shared, reclaimable); anonymous ones are what the process
built: packed weights, tensor arenas, heaps.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

STEPS_MODEL = "minilm"


def _status() -> dict[str, float]:
    text = Path("/proc/self/status").read_text()
    return {key: int(re.search(rf"^{key}:\s+(\d+) kB", text, re.MULTILINE).group(1)) / 1024
            for key in ("VmRSS", "RssAnon", "RssFile", "VmHWM")}


def _steps(model_dir: Path, texts: list[str]) -> list[tuple[str, float, float, float, float]]:
    import time  # noqa: PLC0415  (the process's start is the first step measured)

    steps = []
    last = [time.perf_counter()]

    def note(step: str) -> None:
        status, now = _status(), time.perf_counter()
        steps.append((step, status["VmRSS"], status["RssAnon"], status["RssFile"], (now - last[0]) * 1000))
        last[0] = time.perf_counter()

    note("Python started")
    import numpy as np  # noqa: PLC0415  (each import is a measured step)
    note("+ import numpy")
    from tokenizers import Tokenizer  # noqa: PLC0415  (each import is a measured step)
    note("+ import tokenizers")
    from ai_edge_litert.interpreter import Interpreter  # noqa: PLC0415  (each import is a measured step)
    note("+ import ai_edge_litert")
    manifest = json.loads((model_dir / "manifest.json").read_text())
    tokenizer = Tokenizer.from_file(str(model_dir / manifest["preprocessing"]["tokenizer"]))
    tokenizer.no_padding()
    tokenizer.enable_truncation(manifest["preprocessing"]["max_length"])
    note("+ tokenizer loaded")
    interpreter = Interpreter(model_path=str(model_dir / manifest["model_file"]), num_threads=1)
    runner = interpreter.get_signature_runner(manifest.get("signature", "serving_default"))
    note("+ interpreter and signature runner")

    def invoke(batch: list[str]) -> None:
        encodings = tokenizer.encode_batch(batch)
        length = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(batch), length), np.int32)
        mask = np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, :len(encoding.ids)] = encoding.ids
            mask[row, :len(encoding.ids)] = 1
        runner(input_ids=ids, attention_mask=mask)

    invoke(texts[:1])
    note("+ first invoke, 1 sentence")
    invoke(texts)
    note(f"+ {len(texts)} sentences in one batch")
    steps.append(("peak (VmHWM)", _status()["VmHWM"], 0.0, 0.0, 0.0))
    return steps


def measure(model_dir: Path | None = None) -> list[tuple[str, float, float, float, float]]:
    from bench import inputs, venvs  # noqa: PLC0415  (the driver side, in the dev venv)
    from bench.paths import MODELS_DIR  # noqa: PLC0415

    texts = [inputs.EMBED_SHORT_SENTENCE, *inputs.embed_batch_texts()]
    done = subprocess.run([str(venvs.litert_venv().python), "-P", __file__, str(model_dir or MODELS_DIR / STEPS_MODEL),
                           json.dumps(texts)], capture_output=True, text=True, check=True, timeout=300)
    return [tuple(row) for row in json.loads(done.stdout.strip().splitlines()[-1])]


if __name__ == "__main__":
    print(json.dumps(_steps(Path(sys.argv[1]), json.loads(sys.argv[2]))))
