"""minilm served as float16, float32 or mixed: which loads faster and holds less memory, side by side in fresh
processes.

`measure(rounds)` converts saved_model/minilm in each mode (`python -m convert --quantization MODE`, into
build/bench/modes/, reused while the SavedModel and convert/ are unchanged), then alternates fresh processes of the
Lambda venv on each (bench/rss_stages.py): the first invoke's milliseconds (XNNPACK packs the weights then; a
float16 model is widened to float32 first), the warm-ups' RSS and the peak after a 33-sentence batch.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

from bench import conversion, rss_stages
from bench.paths import BUILD_DIR, SAVED_MODEL_DIR

MODEL = "minilm"
MODES = ("float16", "float32", "mixed")  # the modes its gate passes (dynamic and int8 fail it)
MODES_DIR = BUILD_DIR / "modes"
FIRST_INVOKE = "+ first invoke, 1 sentence"


def converted(mode: str) -> Path:
    """models/minilm as `mode` would make it, converted (and gated) by the repo's own convert."""
    saved_model = SAVED_MODEL_DIR / MODEL
    out = MODES_DIR / f"{MODEL}-{mode}"
    stamp = conversion._inputs_digest(saved_model)  # noqa: SLF001  (the one digest of what a conversion depends on)
    if (out / ".stamp").is_file() and (out / ".stamp").read_text() == stamp:
        return out
    print(f"==> converting {MODEL} as {mode} for the mode comparison", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "convert", "--quantization", mode, str(saved_model), str(out)],
                   check=True, capture_output=True, timeout=conversion.CONVERT_TIMEOUT_SECONDS)
    (out / ".stamp").write_text(stamp)
    return out


def measure(rounds: int) -> dict[str, dict[str, list[float]]]:
    """mode -> {"first_invoke_ms", "rss_after_first_mb", "peak_mb", "file_mb"}: one value per round."""
    directories = {mode: converted(mode) for mode in MODES}
    results = {mode: {"first_invoke_ms": [], "rss_after_first_mb": [], "peak_mb": [], "file_mb": []}
               for mode in MODES}
    for round_number in range(rounds):
        for mode in MODES if round_number % 2 == 0 else MODES[::-1]:
            steps = {step: row for step, *row in rss_stages.measure(directories[mode])}
            rss, _, _, ms = steps[FIRST_INVOKE]
            results[mode]["first_invoke_ms"].append(ms)
            results[mode]["rss_after_first_mb"].append(rss)
            results[mode]["peak_mb"].append(steps["peak (VmHWM)"][0])
            results[mode]["file_mb"].append((directories[mode] / "model.tflite").stat().st_size / 2**20)
    return results


def medians(results: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, float]]:
    return {mode: {name: statistics.median(values) for name, values in measured.items()}
            for mode, measured in results.items()}
