"""The router's group tables are the one list of routes: serverless.yml's httpApi routes are exactly what they
need, each group's routes lie under its own prefix, and every route names a function that exists."""
from __future__ import annotations

import yaml

from function.router import API, GROUPS, ROUTES, Group, match, owner
from tests.support.function_fixtures import REPO


def gateway_path(group: Group, template: str) -> str:
    """The API Gateway route that reaches `template`: itself, or its group's greedy route below the prefix."""
    return f"{group.prefix}/{{proxy+}}" if group.greedy and template != group.prefix else template


def gateway_routes() -> set[str]:
    """Every route key API Gateway needs for the function's routes ("GET /v2/{proxy+}"), from the router's tables."""
    return {f"{method} {gateway_path(group, template)}" for group in GROUPS
            for template, methods in group.routes.items() for method in methods}


class TemplateLoader(yaml.SafeLoader):
    """serverless.yml holds CloudFormation's short tags (!Ref, !If...): read as plain values, which is all a route
    line needs."""


TemplateLoader.add_multi_constructor("!", lambda loader, tag, node: None)


def serverless_routes() -> set[str]:
    config = yaml.load((REPO / "serverless.yml").read_text(), Loader=TemplateLoader)  # noqa: S506
    return {f"{event['httpApi']['method']} {event['httpApi']['path']}"
            for event in config["functions"]["api"]["events"] if "httpApi" in event}


def test_serverless_yml_routes_are_exactly_those_of_the_router_tables():
    assert serverless_routes() == gateway_routes()


def test_every_group_holds_its_routes_under_its_prefix_and_no_other_group_claims_them():
    for group in GROUPS:
        for template in group.routes:
            assert owner(template) is group, (group.name, template)


def test_a_path_takes_the_error_body_of_its_route_and_else_of_the_group_owning_its_prefix():
    for group in GROUPS:
        for template in group.routes:
            found = match(template.replace("{name}", "digits").replace("{version}", "1"))
            assert (found.group, found.template) == (group, template)
    assert match("/v2/nowhere").group.name == "open_inference" and match("/v2/nowhere").template is None
    assert match("/v1/models/x/nowhere").group.name == "tfserving"
    assert match("/v1/embeddings/x").group.name == "openai"
    assert match("/nowhere").group is API and match("/v1/other").group.name == "tfserving"
    assert match("/v1").group.name == "tfserving" and match("/v1embeddings").group is API
    assert match("/classify/").template == "/classify"  # a trailing slash is the same route


def test_every_route_names_a_function_of_function_routes():
    for methods in ROUTES.values():
        for route in methods.values():
            assert callable(route.function) and route.function.__name__ == route.name
