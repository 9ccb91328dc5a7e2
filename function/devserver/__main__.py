"""`python -m function.devserver [--host 127.0.0.1] [--port 8080] [--model-dir DIR] [--cors-origins ORIGINS]`: the
Lambda handler behind a local HTTP server, with an API console at /docs."""
from __future__ import annotations

import argparse
import os
import sys

from function.devserver.cors import CorsPolicy
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
    parser.add_argument("--cors-origins", default=os.environ.get("CORS_ORIGINS"),
                        help="browser origins allowed to call the API, comma-separated ('*' for any), as the deployed "
                        "API's corsOrigins param (default: CORS_ORIGINS, else function/devserver/cors.json's, none)")
    args = parser.parse_args(argv)
    if args.model_dir and not os.path.isdir(args.model_dir):
        parser.error(f"--model-dir {args.model_dir}: no such directory")
    return serve(args.host, args.port, args.model_dir, args.cors_origins)


def serve(host: str, port: int, model_dir: str | None, cors_origins: str | None = None) -> int:
    """Serve until Ctrl-C: the models in model_dir (default: MODEL_DIR, or its default), CORS for cors_origins
    (default: the settings file's); 2 when it cannot start. Also what `lambda-tflite serve` runs
    (function/devserver/command.py)."""
    cors = CorsPolicy.load(cors_origins)
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
        server = make_server(handler, host, port, SETTINGS.max_body_bytes, cors)
    except OSError as exc:
        print(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    host, port = server.server_address[:2]
    models = ", ".join(SERVICE.registry.names) or "none"
    where = SERVICE.registry.source.description
    # One line before the request log (one JSON line per request): what is served, from where, cached where.
    page = f"; try them in a browser at http://{host}:{port}/" if SETTINGS.serve_page else ""
    origins = f"; CORS for {', '.join(cors.origins)}" if cors.enabled else ""
    print(f"serving on http://{host}:{port} (models in {where}: {models}; results cached in "
          f"{CACHE_SETTINGS.describe()}; the API: /openapi.json, its console: /docs{origins}{page})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
