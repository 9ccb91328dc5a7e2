"""`lambda-tflite serve [MODEL_DIR] [--host 127.0.0.1] [--port 8080] [--cors-origins ORIGINS]`: the development
server of the installed command.

The same server as `python -m function.devserver` (what `make serve` runs); only the defaults suit a command run from
any folder: the models in ./models of the current folder (the checkout's models/ anywhere inside a checkout, as
`make serve` has them; MODEL_DIR or MODEL_SOURCE when set), and, outside a checkout of the project, the results
cached in the user's cache folder instead of beside the installed code.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from function.config import DEFAULT_MODEL_DIR, REPO_ROOT, Env
from function.devserver.__main__ import port_number, serve

# A checkout keeps its results in its own .cache/ (function/config.py); an installed package's folder is no place
# for them (often not writable, and shared by every user of that Python).
IN_A_CHECKOUT = (REPO_ROOT / "pyproject.toml").is_file()


def default_model_dir() -> Path:
    """The checkout's models/ from anywhere inside the checkout, else ./models of the current folder."""
    here = Path.cwd()
    if IN_A_CHECKOUT and (here == REPO_ROOT or REPO_ROOT in here.parents):
        return DEFAULT_MODEL_DIR
    return Path("models")


def user_cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "lambda-tflite-serving" / "results.sqlite3"


def main(argv: list[str] | None = None, prog: str = "lambda-tflite serve") -> int:
    parser = argparse.ArgumentParser(prog=prog, description="Serve converted models over HTTP, as API Gateway would "
                                     "call the Lambda handler, with a page to try them in a browser.")
    parser.add_argument("model_dir", metavar="MODEL_DIR", nargs="?",
                        help="the folder of converted models, one sub-folder each as `lambda-tflite convert` writes "
                             "them (default: MODEL_DIR or MODEL_SOURCE when set, else ./models; inside a checkout of "
                             "the project, its models/)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=port_number, default=8080, help="port (default 8080; 0 picks a free one)")
    parser.add_argument("--cors-origins", default=os.environ.get("CORS_ORIGINS"),
                        help="browser origins allowed to call the API, comma-separated ('*' for any), as the deployed "
                        "API's corsOrigins param (default: CORS_ORIGINS, else none)")
    args = parser.parse_args(argv)

    model_dir = args.model_dir
    if model_dir is None and not (os.environ.get(Env.MODEL_DIR, "").strip() or
                                  os.environ.get(Env.MODEL_SOURCE, "").strip()):
        model_dir = str(default_model_dir())
    if model_dir is not None and not os.path.isdir(model_dir):
        parser.error(f"{os.path.abspath(model_dir)}: no such folder; pass the folder that holds your converted models "
                     "(lambda-tflite serve MODEL_DIR)")
    if not IN_A_CHECKOUT and not os.environ.get(Env.RESULTS_SQLITE_PATH, "").strip():
        os.environ[Env.RESULTS_SQLITE_PATH] = str(user_cache_file())
    return serve(args.host, args.port, model_dir and os.path.abspath(model_dir), args.cors_origins)
