"""The error codes GET /openapi.json publishes are the codes the code raises: every domain error raised in function/
has its code in ERROR_CODES with the same kind of error (hence status), and every code listed there is raised."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import function
from function import errors
from function.http_errors import INTERNAL_ERROR, status_of, status_of_kind
from function.openapi.error_codes import (ERROR_CODES, JSON_BODY, MODEL_CHOICE, ONE_OR_MANY, TENSOR_BODY,
                                          TENSOR_MODEL, TENSOR_VALUES, TEXTS)

SOURCE = Path(function.__file__).parent
KINDS = {name: kind for name, kind in vars(errors).items()
         if isinstance(kind, type) and issubclass(kind, errors.ServingError)}


def _takes_code(kind: type) -> bool:
    return list(inspect.signature(kind.__init__).parameters)[1] == "code"


def _literal(call: ast.Call) -> str | None:
    first = call.args[0] if call.args else None
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def raised_codes() -> tuple[set[tuple[str, type]], list[str]]:
    """({(code, kind)} of every domain error built in function/, [places whose code is not a literal])."""
    found, unreadable = set(), []
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in KINDS:  # super().__init__("code", ...) of a kind
                for call in ast.walk(node):
                    if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "__init__" and _literal(call):
                        found.add((_literal(call), KINDS[node.name]))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in KINDS \
                    and _takes_code(KINDS[node.func.id]):
                code = _literal(node)
                if code is None:
                    unreadable.append(f"{path.relative_to(SOURCE.parent)}:{node.lineno}")
                else:
                    found.add((code, KINDS[node.func.id]))
    return found, unreadable


def test_every_raised_code_is_listed_with_its_kind_and_every_listed_code_is_raised():
    found, unreadable = raised_codes()
    assert not unreadable, f"error codes must be string literals where raised: {unreadable}"
    assert found == {(code, entry.kind) for code, entry in ERROR_CODES.items()}


def test_the_scan_sees_the_codes_set_inside_error_classes_and_the_internal_error():
    found, _ = raised_codes()
    assert ("method_not_allowed", errors.MethodNotAllowed) in found
    assert ("unsupported_event", errors.UnsupportedEvent) in found
    assert ("internal_error", errors.ServingError) in found
    assert status_of_kind(ERROR_CODES["internal_error"].kind) == status_of(INTERNAL_ERROR) == 500


def test_the_shared_groups_name_only_listed_codes():
    assert {*JSON_BODY, *ONE_OR_MANY, *TEXTS, *MODEL_CHOICE, *TENSOR_MODEL, *TENSOR_BODY, *TENSOR_VALUES} <= set(
        ERROR_CODES)


def test_every_code_has_a_client_status_but_the_bug():
    statuses = {code: status_of_kind(entry.kind) for code, entry in ERROR_CODES.items()}
    # 5xx: our bug, or a model directory that cannot be served (one model's 503, or /v2/health/ready's)
    assert {code for code, status in statuses.items() if status >= 500} == {"internal_error", "model_unavailable",
                                                                            "not_ready"}
    assert all(400 <= status < 600 for status in statuses.values())
