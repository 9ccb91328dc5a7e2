"""`lambda-tflite serve [MODEL_DIR] [--host 127.0.0.1] [--port 8080]`: the development server of the installed command.

The same server as `python -m function.devserver` (what `make serve` runs); only the defaults suit a command run from
any folder: the models in ./models of the current folder (or MODEL_DIR / MODEL_SOURCE when set), and, outside a
checkout of the project, the results cached in the user's cache folder instead of beside the installed code.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from function.config import REPO_ROOT, Env
from function.devserver.__main__ import port_number, serve

# A checkout keeps its results in its own .cache/ (function/config.py); an installed package's folder is no place
# for them (often not writable, and shared by every user of that Python).
IN_A_CHECKOUT = (REPO_ROOT / "pyproject.toml").is_file()


def user_cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "lambda-tflite-serving" / "results.sqlite3"


def main(argv: list[str] | None = None, prog: str = "lambda-tflite serve") -> int:
    parser = argparse.ArgumentParser(prog=prog, description="Serve converted models over HTTP, as API Gateway would "
                                     "call the Lambda handler, with a page to try them in a browser.")
    parser.add_argument("model_dir", metavar="MODEL_DIR", nargs="?",
                        help="the folder of converted models, one sub-folder each as `lambda-tflite convert` writes "
                             "them (default: MODEL_DIR or MODEL_SOURCE when set, else ./models)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=port_number, default=8080, help="port (default 8080; 0 picks a free one)")
    args = parser.parse_args(argv)

    model_dir = args.model_dir
    if model_dir is None and not (os.environ.get(Env.MODEL_DIR, "").strip() or
                                  os.environ.get(Env.MODEL_SOURCE, "").strip()):
        model_dir = "models"
    if model_dir is not None and not os.path.isdir(model_dir):
        parser.error(f"{os.path.abspath(model_dir)}: no such folder; pass the folder that holds your converted models "
                     "(lambda-tflite serve MODEL_DIR)")
    if not IN_A_CHECKOUT and not os.environ.get(Env.RESULTS_SQLITE_PATH, "").strip():
        os.environ[Env.RESULTS_SQLITE_PATH] = str(user_cache_file())
    return serve(args.host, args.port, model_dir and os.path.abspath(model_dir))
