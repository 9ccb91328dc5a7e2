"""Every doc that lists the deployed API's routes lists exactly serverless.yml's httpApi routes (read from the YAML,
catch-alls included), so a route added there, or to the router behind a catch-all's new explicit route, cannot leave
threat-model.md or deploy.md telling an older story."""
from __future__ import annotations

import re

import pytest

from tests.support.function_fixtures import REPO
from tests.unit.test_router_table import serverless_routes

DOCS = ("threat-model.md", "deploy.md")
TABLE = re.compile(r"<!-- routes: serverless\.yml functions\.api\.events .*?-->\n(.*?)\n<!-- end -->", re.S)
ROW = re.compile(r"^\| ([A-Z, ]+) \| `([^`]+)` \|", re.M)


def documented_routes(name: str) -> set[str]:
    tables = TABLE.findall((REPO / "docs" / name).read_text(encoding="utf-8"))
    assert len(tables) == 1, f"docs/{name} needs one route table between its markers"
    return {f"{method.strip()} {path}" for methods, path in ROW.findall(tables[0]) for method in methods.split(",")}


@pytest.mark.parametrize("name", DOCS)
def test_the_route_table_is_serverless_yml_s(name):
    assert documented_routes(name) == serverless_routes()


def test_the_reading_sees_the_catch_alls():
    """The YAML reading itself: the greedy routes that hand /v1 and /v2 paths to the function are routes too."""
    routes = serverless_routes()
    assert {"GET /v1/{proxy+}", "POST /v1/{proxy+}", "GET /v2/{proxy+}", "POST /v2/{proxy+}"} <= routes
    assert "POST /classify-text" in routes and "POST /sentiment" in routes

