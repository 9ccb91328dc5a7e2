"""The error codes GET /openapi.json publishes are the codes the code raises: every domain error in function/ is
raised by its code (`refuse("code", ...)`, or a helper of function/errors.py that does), every code raised is
declared in ERROR_CODES, and every code declared there is raised."""
from __future__ import annotations

import ast
from pathlib import Path

import function
from function import errors
from function.errors import ERROR_CODES
from function.http_errors import INTERNAL_ERROR, status_of, status_of_kind
from function.openapi.spec import JSON_BODY, MODEL_CHOICE, ONE_OR_MANY, TENSOR_BODY, TENSOR_MODEL, TENSOR_VALUES, TEXTS

SOURCE = Path(function.__file__).parent
KINDS = {name for name, kind in vars(errors).items()
         if isinstance(kind, type) and issubclass(kind, errors.ServingError)}


def _literal(call: ast.Call) -> str | None:
    first = call.args[0] if call.args else None
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None


def _called(call: ast.Call) -> str:
    return getattr(call.func, "id", None) or getattr(call.func, "attr", "")


def raised_codes() -> tuple[set[str], list[str], list[str]]:
    """({code of every refuse() and of every error class's own super().__init__}, [places whose code is not a
    literal], [places that build a kind of error directly instead of by its code])."""
    found, unreadable, by_kind = set(), [], []
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in KINDS:  # super().__init__("code", ...) of a kind
                for call in ast.walk(node):
                    if isinstance(call, ast.Call) and _called(call) == "__init__" and _literal(call):
                        found.add(_literal(call))
            if not isinstance(node, ast.Call):
                continue
            where = f"{path.relative_to(SOURCE.parent)}:{node.lineno}"
            if _called(node) == "refuse":
                code = _literal(node)
                if code is None and path.name != "errors.py":  # refuse() itself passes its argument on
                    unreadable.append(where)
                elif code is not None:
                    found.add(code)
            elif _called(node) in KINDS and _called(node) != "MethodNotAllowed":  # it carries the Allow header
                by_kind.append(where)
    return found, unreadable, by_kind


def test_every_raised_code_is_declared_and_every_declared_code_is_raised():
    found, unreadable, _ = raised_codes()
    assert not unreadable, f"error codes must be string literals where raised: {unreadable}"
    assert found == set(ERROR_CODES)


def test_errors_are_raised_by_their_code_never_by_their_class():
    _, _, by_kind = raised_codes()
    assert not by_kind, f"raise refuse(\"<code>\", ...) instead of building the class: {by_kind}"


def test_refuse_builds_the_kind_its_code_declares():
    for code, entry in ERROR_CODES.items():
        if entry.kind is not errors.MethodNotAllowed:
            error = errors.refuse(code, "a sentence", param="field")
            assert (type(error), error.code, error.message, error.param) == (entry.kind, code, "a sentence", "field")


def test_the_scan_sees_the_codes_set_inside_error_classes_and_the_internal_error():
    found, _, _ = raised_codes()
    assert {"method_not_allowed", "unsupported_event", "internal_error", "wrong_model_task", "body_too_large"} <= found
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
