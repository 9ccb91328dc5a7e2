"""docs/api.md's error and limit tables say what the code says: the same codes with the same statuses as
function/openapi/error_codes.py, and the defaults of every limit in function/config.py."""
from __future__ import annotations

import re

from function import config
from function.http_errors import status_of_kind
from function.openapi.error_codes import ERROR_CODES
from tests.support.function_fixtures import REPO

DOC = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
LOCAL_SERVER_ONLY = {("411", "length_required")}  # function/local_server.py's own answer to a chunked body


def section(title: str) -> str:
    start = DOC.index(f"\n## {title}\n")
    end = DOC.find("\n## ", start + 1)
    return DOC[start:end if end != -1 else None]


def test_the_error_table_lists_every_code_with_its_status():
    rows = set(re.findall(r"^\| (\d{3}) \| `(\w+)` \|", section("Errors"), re.MULTILINE))
    code_says = {(str(status_of_kind(entry.kind)), code) for code, entry in ERROR_CODES.items()}
    assert rows == code_says | LOCAL_SERVER_ONLY


def test_the_limit_table_gives_every_limit_its_default():
    rows = [line for line in section("Limits").splitlines() if line.startswith("| ")]
    for variable in config.LIMITS:
        [row] = [line for line in rows if f"`{variable}`" in line]
        assert f"{getattr(config, f'DEFAULT_{variable}'):,}" in row, (variable, row)
