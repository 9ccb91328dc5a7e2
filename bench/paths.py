"""Where the benchmark reads and writes, relative to the repository so no machine path is ever recorded."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = REPO_ROOT / "build" / "bench"
MODELS_DIR = REPO_ROOT / "models"
SAVED_MODEL_DIR = REPO_ROOT / "saved_model"
BENCHMARKS_MD = REPO_ROOT / "BENCHMARKS.md"
# Sentence-transformers directories a user would bring, and their conversions (`make models-mpnet`), apart from
# models/ so that the demo catalogue stays as it is.
ENCODERS_DIR = REPO_ROOT / "build" / "encoders"
