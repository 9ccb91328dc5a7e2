"""CORS on the local server, as API Gateway applies the HTTP API's CorsConfiguration in AWS: one set of settings,
function/devserver/cors.json, which serverless.yml reads too (its `corsOrigins` param and the HttpApi's
CorsConfiguration).

As API Gateway does once CORS is configured: a preflight (OPTIONS with Origin and Access-Control-Request-Method) is
answered here, 204, never by the function; an allowed origin's preflight and answers carry the allowing headers,
another origin's carry none (the browser then refuses to read them). With no origin allowed (the default, as for a
deployment without the corsOrigins param), requests pass through untouched: OPTIONS reaches the function (405).
Development only, as all of function/devserver/.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from function.responses import Response

# Beside this module: an installed `lambda-tflite serve` has it too.
SETTINGS_FILE = Path(__file__).with_name("cors.json")


@dataclass(frozen=True)
class CorsPolicy:
    origins: tuple[str, ...]  # "*" for any; empty: CORS off
    allow_headers: tuple[str, ...]
    allow_methods: tuple[str, ...]
    max_age: int

    @classmethod
    def load(cls, origins: str | None = None, settings_file: Path = SETTINGS_FILE) -> CorsPolicy:
        """function/devserver/cors.json's settings; `origins` (comma-separated, as the corsOrigins param) replaces
        its default."""
        settings = json.loads(settings_file.read_text(encoding="utf-8"))
        listed = settings["origins"] if origins is None else origins
        return cls(tuple(origin.strip() for origin in listed.split(",") if origin.strip()),
                   tuple(settings["allowHeaders"]), tuple(settings["allowMethods"]), int(settings["maxAge"]))

    @property
    def enabled(self) -> bool:
        return bool(self.origins)

    def allowed_origin(self, origin: str | None) -> str | None:
        """What Access-Control-Allow-Origin says to this origin: "*", the origin itself, or None (not allowed)."""
        if not origin or not self.enabled:
            return None
        if "*" in self.origins:
            return "*"
        return origin if origin.rstrip("/").lower() in {o.rstrip("/").lower() for o in self.origins} else None

    @staticmethod
    def is_preflight(method: str, headers: dict[str, str]) -> bool:
        return method == "OPTIONS" and "origin" in headers and "access-control-request-method" in headers

    def preflight(self, headers: dict[str, str]) -> Response:
        """204; with the allowing headers when the origin, the method and every requested header are allowed."""
        allowed = self.allowed_origin(headers.get("origin"))
        method = headers.get("access-control-request-method", "").strip().upper()
        requested = {name.strip().lower() for name in headers.get("access-control-request-headers", "").split(",")
                     if name.strip()}
        answer = Response(204, b"", {"vary": "Origin"})
        if (allowed is None or method not in self.allow_methods
                or not requested <= {name.lower() for name in self.allow_headers}):
            return answer
        answer.headers.update({
            "access-control-allow-origin": allowed,
            "access-control-allow-methods": ",".join(self.allow_methods),
            "access-control-allow-headers": ",".join(name.lower() for name in self.allow_headers),
            "access-control-max-age": str(self.max_age),
        })
        return answer

    def decorate(self, headers: dict[str, str], response: Response) -> Response:
        """An answer to an allowed origin's request carries Access-Control-Allow-Origin."""
        allowed = self.allowed_origin(headers.get("origin"))
        if allowed is not None:
            response.headers["access-control-allow-origin"] = allowed
            response.headers["vary"] = "Origin"
        return response
