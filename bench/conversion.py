"""Section 7: the conversion table (size, agreement, latency per quantization mode) for each demo model.

Not re-measured here: it is `python -m convert SAVED_MODEL OUT --compare` (issue 3), run into build/bench/compare/
and reused while the SavedModel and convert/ are unchanged; this section only collects the tables it wrote.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from bench import keras_families, keras_text
from bench.paths import BUILD_DIR, MODELS_DIR, REPO_ROOT, SAVED_MODEL_DIR
from bench.report import SectionResult

NUMBER = 7
TITLE = "Conversion: size, agreement and latency per quantization mode"


def demo_models() -> list[str]:
    """The Makefile's DEMO_MODELS: the one list of demo models."""
    match = re.search(r"^DEMO_MODELS\s*:?=\s*(.+)$", (REPO_ROOT / "Makefile").read_text(), re.MULTILINE)
    return match.group(1).split()


CONVERT_TIMEOUT_SECONDS = 900


def _inputs_digest(saved_model: Path) -> str:
    digest = hashlib.sha256((saved_model / "saved_model.pb").read_bytes())
    for source in sorted((REPO_ROOT / "convert").rglob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()


def served_mode(name: str) -> str | None:
    """The mode `make models` serves: the built manifest's, else the Makefile's QUANTIZATION_<name>."""
    manifest = MODELS_DIR / name / "manifest.json"
    if manifest.exists():
        return json.loads(manifest.read_text())["quantization"]
    match = re.search(rf"^QUANTIZATION_{name}\s*:?=\s*(\S+)", (REPO_ROOT / "Makefile").read_text(), re.MULTILINE)
    return match.group(1) if match else None


def compare(name: str) -> Path:
    """OUT/report.md of a --compare conversion, converting again only when its inputs changed."""
    saved_model = SAVED_MODEL_DIR / name
    out = BUILD_DIR / "compare" / name
    stamp_file = BUILD_DIR / "compare" / f"{name}.stamp"
    stamp = _inputs_digest(saved_model)
    if (out / "report.md").exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
        print(f"==> {name}: reusing the --compare run of the same SavedModel and convert/", file=sys.stderr)
        return out / "report.md"
    # Relative paths: convert writes them into its report, and no machine path may reach BENCHMARKS.md.
    command = [sys.executable, "-m", "convert", str(saved_model.relative_to(REPO_ROOT)),
               str(out.relative_to(REPO_ROOT)), "--compare"]
    mode = served_mode(name)
    if mode:
        command += ["--quantization", mode]
    print(f"==> converting {name} in every mode (python -m convert --compare)", file=sys.stderr, flush=True)
    subprocess.run(command, cwd=REPO_ROOT, check=True, timeout=CONVERT_TIMEOUT_SECONDS, stdout=subprocess.DEVNULL)
    stamp_file.write_text(stamp)
    return out / "report.md"


def report_body(report_md: Path) -> str:
    """report.md without its own title: the source line and the table."""
    lines = report_md.read_text().splitlines()
    return "\n".join(line for line in lines if not line.startswith("# ")).strip()


def run(context) -> SectionResult:
    started = time.perf_counter()
    parts = ["Collected from `python -m convert saved_model/NAME OUT --compare` (issue 3): each mode converted, "
             "gated against the SavedModel on the sidecar's validation samples, and timed with LiteRT (1 thread, "
             "batch 1, mean and p99 over the runs convert states). The served mode is the Makefile's "
             "(`QUANTIZATION_<name>`)."]
    for name in demo_models():
        if not (SAVED_MODEL_DIR / name / "saved_model.pb").exists():
            parts += ["", f"### {name}", "", f"Not measured: `saved_model/{name}` is missing (run `make models`)."]
            continue
        try:
            report_md = compare(name)
            converted = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(report_md.stat().st_mtime))
            parts += ["", f"### {name}", "", report_body(report_md), "",
                      f"<sub>converted and timed {converted}; reused until the SavedModel or convert/ changes</sub>"]
        except subprocess.CalledProcessError as error:
            parts += ["", f"### {name}", "", f"`python -m convert --compare` failed with exit {error.returncode}."]
    parts += ["", "### keras.applications preprocessing families, served on raw photos", "",
              (keras_families.__doc__ or "").split("\n\n", 1)[1].strip().replace("\n", " "), ""]
    try:
        parts += keras_families.table()
    except subprocess.CalledProcessError as error:
        parts += [f"`python -m convert` failed with exit {error.returncode}."]
    parts += ["", "### Keras text models from .keras files, served on raw texts", "",
              (keras_text.__doc__ or "").split("\n\n")[1].replace("\n", " "), "",
              *keras_text.table()]
    return SectionResult(NUMBER, TITLE, "\n".join(parts), [], time.perf_counter() - started)
