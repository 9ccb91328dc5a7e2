"""Path and method -> route function, from one table per protocol group: this project's API, OpenAI's embeddings,
TensorFlow Serving's REST API and the Open Inference Protocol v2. A group declares its routes, the body its errors
take and the path prefix it owns, so that a path no route matches still answers in the shape its protocol's
clients read. Paths may hold {name} parts; unknown paths are 404, known paths with another method 405. A new route
(or protocol codec) is one entry here and its description in function/openapi/; serverless.yml's httpApi routes
are checked against these tables (tests/unit/test_router_table.py)."""
from __future__ import annotations

import importlib
import re
from collections.abc import Callable

from function.errors import MethodNotAllowed, ServingError, quoted, refuse
from function.http_errors import ErrorBody, api_error_body, message_error_body, openai_error_body
from function.protocols.tfserving_paths import tf_serving_malformed
from function.records import named_tuple
from function.responses import Response
from function.routes.context import RouteContext

RouteFunction = Callable[[RouteContext], Response]


class LazyRoute:
    """A route function named "module:function" (a module of function/routes/), imported on its first request:
    a container's init pays for no route module (all of them, with their codecs, parsers and the OpenAPI
    descriptions: 23 modules, ~21 ms by `python -X importtime`), and a cold start only for the routes it serves."""

    def __init__(self, reference: str) -> None:
        self.module, self.name = reference.split(":")
        self._function: RouteFunction | None = None

    @property
    def function(self) -> RouteFunction:
        if self._function is None:
            self._function = getattr(importlib.import_module(f"function.routes.{self.module}"), self.name)
        return self._function

    def __call__(self, ctx: RouteContext) -> Response:
        return self.function(ctx)


@named_tuple
class Group:
    """One protocol's routes (path template -> method -> route) and the body its errors take."""

    name: str
    prefix: str | None  # every path under it is this group's, matched or not; None: every path no group owns
    error_body: ErrorBody
    routes: dict[str, dict[str, LazyRoute]]
    # API Gateway path variables are whole segments: "{name}:predict" is not one, so the group reaches the function
    # through greedy routes under its prefix (serverless.yml) and this router resolves the rest.
    greedy: bool = False
    # A path part's own pattern, where the protocol's is narrower than "anything but / and :".
    part_patterns: tuple[tuple[str, str], ...] = ()
    # The error for a path no route matches or a method the route does not take, where the protocol has its own
    # (TF Serving: 400 "Malformed request"); else route_not_found (404) and method_not_allowed (405).
    malformed: Callable[[str, str], ServingError] | None = None

    def owns(self, path: str) -> bool:
        prefix = self.prefix
        return prefix is not None and (path == prefix or path.startswith((prefix + "/", prefix + ":")))


def _routes(table: dict[str, dict[str, str]]) -> dict[str, dict[str, LazyRoute]]:
    return {template: {method: LazyRoute(reference) for method, reference in methods.items()}
            for template, methods in table.items()}


API = Group("api", None, api_error_body, _routes({
    "/classify": {"POST": "classify:classify"},
    "/classify-text": {"POST": "text:classify_text"},
    "/sentiment": {"POST": "text:sentiment"},  # /classify-text's first name, kept for its clients
    # /embed and /tokenize also take Hugging Face TEI's bodies ({"inputs": ...}), and /info is TEI's
    # (function/routes/tei.py): its clients use the same paths.
    "/tokenize": {"POST": "tei:tokenize"},
    "/embed": {"POST": "embed:embed"},
    "/info": {"GET": "tei:info"},
    "/models": {"GET": "catalog:list_models"},
    "/health": {"GET": "catalog:health"},
    "/openapi.json": {"GET": "openapi_document:openapi_document"},
    "/": {"GET": "page:page"},
}))
OPENAI = Group("openai", "/v1/embeddings", openai_error_body, _routes({
    "/v1/embeddings": {"POST": "openai_embeddings:embeddings"},
}))


def _model_routes(model_path: str, selectors: tuple[str, ...], table: dict[str, dict[str, str]]) -> dict:
    """A tensor protocol's model routes (suffix -> method -> route), each also under every selector of a version
    (".../versions/{version}", ".../labels/{label}"): the protocols spell every model route that way."""
    return {f"{model_path}{selector}{suffix}": methods
            for selector in ("", *selectors) for suffix, methods in table.items()}


# TensorFlow Serving's REST API (docs/api.md): every path under /v1 but OpenAI's /v1/embeddings, as TF Serving's
# handler owns "/v1/.*"; a version or a label, when given, names the version that answers, and a version is decimal
# digits, as TF Serving's path pattern has it. GET /v1/models, which TF Serving refuses ("Missing model name"), is
# OpenAI's model list, and GET /v1/models/{name} answers both protocols (function/routes/openai_models.py).
TF_SERVING = Group("tfserving", "/v1", message_error_body, greedy=True, part_patterns=(("version", "[0-9]+"),),
                   malformed=tf_serving_malformed, routes=_routes({
                       "/v1/models": {"GET": "openai_models:list_models"},
                       **_model_routes("/v1/models/{name}", ("/versions/{version}", "/labels/{label}"), {
                           "": {"GET": "tfserving:model_status"},
                           "/metadata": {"GET": "tfserving:model_metadata"},
                           ":predict": {"POST": "tfserving:predict_route"},
                       })}))
# The Open Inference Protocol v2 (docs/api.md).
OPEN_INFERENCE = Group("open_inference", "/v2", message_error_body, greedy=True, routes=_routes({
    "/v2": {"GET": "open_inference:server_metadata"},
    "/v2/health/live": {"GET": "open_inference:server_live"},
    "/v2/health/ready": {"GET": "open_inference:server_ready"},
    # Triton's extensions: repository index, model configuration, statistics (a model named "stats" is shadowed by
    # the all-models statistics path, as on Triton).
    "/v2/repository/index": {"POST": "open_inference:repository_index"},
    "/v2/models/stats": {"GET": "open_inference:model_statistics"},
    **_model_routes("/v2/models/{name}", ("/versions/{version}",), {
        "": {"GET": "open_inference:model_metadata"},
        "/ready": {"GET": "open_inference:model_ready"},
        "/infer": {"POST": "open_inference:infer"},
        "/config": {"GET": "open_inference:model_config"},
        "/stats": {"GET": "open_inference:model_statistics"},
    }),
}))
GROUPS = (API, OPENAI, TF_SERVING, OPEN_INFERENCE)
ROUTES: dict[str, dict[str, LazyRoute]] = {template: methods for group in GROUPS
                                           for template, methods in group.routes.items()}


class _Template:
    """A route template with {parts}: its regular expression, compiled when a path first ends the way it does. The
    TF Serving group's ten took its first request 0.65 ms to compile; a path ending in ":predict" needs two."""

    __slots__ = ("template", "end", "regex", "pattern")

    def __init__(self, template: str, group: Group) -> None:
        own = dict(group.part_patterns)
        parts = template.replace("}", "{").split("{")  # literals at the even places, part names between
        self.template = template
        self.end = parts[-1]  # what every path of the template ends with ("" when it ends with a part)
        self.regex = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>{own.get(part, '[^/:]+')})"
                             for i, part in enumerate(parts))
        self.pattern: re.Pattern | None = None

    def fullmatch(self, path: str) -> re.Match | None:
        if self.pattern is None:
            self.pattern = re.compile(self.regex)
        return self.pattern.fullmatch(path)


# A template without {parts} is found by its path alone. Those with parts belong to the group owning their prefix
# (/v1/models/..., /v2/...): a cold /classify compiles no pattern.
LITERAL_ROUTES = {template: group for group in GROUPS for template in group.routes if "{" not in template}
_templates: dict[str, list[_Template]] = {}  # group name -> its templates with parts


def _group_templates(group: Group) -> list[_Template]:
    found = _templates.get(group.name)
    if found is None:
        found = _templates[group.name] = [_Template(template, group) for template in group.routes if "{" in template]
    return found


@named_tuple
class Match:
    """Where a request's path leads: its group always, its route template when one matches."""

    path: str  # normalized
    group: Group
    template: str | None  # the route as the table names it: what the log line records, never the client's path
    params: dict[str, str]

    def route(self, method: str) -> LazyRoute:
        methods = self.group.routes[self.template] if self.template is not None else {}
        if method not in methods and self.group.malformed is not None:
            raise self.group.malformed(method, self.path)
        if self.template is None:
            raise refuse("route_not_found",
                         f"There is no route {quoted(self.path)}; GET /openapi.json lists every route.")
        if method not in methods:
            raise MethodNotAllowed(method, self.template, sorted(methods))
        return methods[method]


def normalize(path: str) -> str:
    return "/" + path.strip("/")


# Paths with {parts} that matched, as their Match: a warm model route finds its owner and tries its patterns once
# (~3 us a request). Bounded, since clients choose paths: emptied when full. Routes only read a Match's params.
_matched: dict[str, Match] = {}
MAX_MATCHED_PATHS = 256


def match(path: str) -> Match:
    normalized = normalize(path)
    literal = LITERAL_ROUTES.get(normalized)
    if literal is not None:
        return Match(normalized, literal, normalized, {})
    known = _matched.get(normalized)
    if known is not None:
        return known
    group = owner(normalized)
    for template in _group_templates(group):
        found = normalized.endswith(template.end) and template.fullmatch(normalized)
        if found:
            if len(_matched) >= MAX_MATCHED_PATHS:
                _matched.clear()
            known = _matched[normalized] = Match(normalized, group, template.template, found.groupdict())
            return known
    return Match(normalized, owner(path), None, {})


def owner(path: str) -> Group:
    """The group a path no route matches belongs to: the one with the longest prefix holding the path as the client
    sent it (/v1/embeddings/x is OpenAI's, /v1/x TF Serving's), else this API."""
    owners = [group for group in GROUPS if group.owns(path)]
    return max(owners, key=lambda group: len(group.prefix)) if owners else API
