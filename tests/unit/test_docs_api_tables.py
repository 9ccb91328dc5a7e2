"""docs/api.md's error and limit tables say what the code says: the same codes with the same statuses as
function/errors.py, the local server's framing errors as function/devserver/framing.py answers them, and the
defaults of every limit in function/config.py."""
from __future__ import annotations

import ast
import re

from function import config
from function.devserver import framing
from function.errors import ERROR_CODES
from function.http_errors import status_of_kind
from tests.support.function_fixtures import REPO

DOC = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| (\d{3}) \| `(\w+)` \|", re.MULTILINE)


def section(title: str) -> str:
    start = DOC.index(f"\n## {title}\n")
    end = DOC.find("\n## ", start + 1)
    return DOC[start:end if end != -1 else None]


def tables(text: str) -> list[str]:
    """The markdown tables of `text`, in order: each a run of lines starting with "|"."""
    return re.findall(r"(?:^\|.*\n?)+", text, re.MULTILINE)


def framing_errors() -> set[tuple[str, str]]:
    """(status, code) of every FramingError function/devserver/framing.py builds."""
    tree = ast.parse(open(framing.__file__, encoding="utf-8").read())
    return {(str(call.args[0].value), call.args[1].value) for call in ast.walk(tree)
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "FramingError"}


def test_the_error_table_lists_every_code_with_its_status():
    api_table, local_server_table = tables(section("Errors"))
    code_says = {(str(status_of_kind(entry.kind)), code) for code, entry in ERROR_CODES.items()}
    assert set(ROW.findall(api_table)) == code_says
    assert set(ROW.findall(local_server_table)) == framing_errors()


def test_the_framing_scan_sees_the_local_servers_codes():
    assert {("400", "malformed_request"), ("501", "method_not_implemented")} <= framing_errors()


def test_the_limit_table_gives_every_limit_its_default():
    rows = [line for line in section("Limits").splitlines() if line.startswith("| ")]
    for variable in config.LIMIT_VARIABLES:
        [row] = [line for line in rows if f"`{variable}`" in line]
        assert f"{getattr(config, f'DEFAULT_{variable}'):,}" in row, (variable, row)
