"""`python -m function.devserver [--host 127.0.0.1] [--port 8080] [--model-dir DIR]`: the Lambda handler behind a
local HTTP server."""
from __future__ import annotations

import argparse
import os
import sys

from function.devserver.server import make_server


def port_number(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m function.devserver", description="Serve the API over HTTP, as "
                                     "API Gateway would call the handler.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=port_number, default=8080, help="port (default 8080; 0 picks a free one)")
    parser.add_argument("--model-dir", help="directory of converted models (default: MODEL_DIR or models/)")
    args = parser.parse_args(argv)

    if args.model_dir and not os.path.isdir(args.model_dir):
        parser.error(f"--model-dir {args.model_dir}: no such directory")
    return serve(args.host, args.port, args.model_dir)


def serve(host: str, port: int, model_dir: str | None) -> int:
    """Serve until Ctrl-C: the models in model_dir (default: MODEL_DIR, or its default); 2 when it cannot start.
    Also what `lambda-tflite serve` runs (function/devserver/command.py)."""
    # The page to try the models is for people at this server: on unless SERVE_PAGE says otherwise.
    os.environ.setdefault("SERVE_PAGE", "true")
    # Models converted, replaced or removed while it runs are picked up at the next request.
    os.environ.setdefault("MODEL_DIR_WATCH", "true")
    if model_dir:
        os.environ["MODEL_DIR"] = model_dir
    try:
        from function.app import CACHE_SETTINGS, SERVICE, SETTINGS, handler  # noqa: PLC0415  (reads MODEL_DIR: after --model-dir)
    except ValueError as exc:  # a bad environment variable
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        server = make_server(handler, host, port, SETTINGS.max_body_bytes)
    except OSError as exc:
        print(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    host, port = server.server_address[:2]
    models = ", ".join(SERVICE.registry.names) or "none"
    where = SERVICE.registry.source.description
    # One line before the request log (one JSON line per request): what is served, from where, cached where.
    page = f"; try them in a browser at http://{host}:{port}/" if SETTINGS.serve_page else ""
    print(f"serving on http://{host}:{port} (models in {where}: {models}; results cached in "
          f"{CACHE_SETTINGS.describe()}; the API: /openapi.json{page})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
