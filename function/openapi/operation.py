"""What a route declares about itself for GET /openapi.json: its request, its answer, its error codes and limits."""
from __future__ import annotations

from dataclasses import dataclass, field

from function.config import ServiceSettings


@dataclass(frozen=True)
class Deployment:
    """What a description may depend on: the settings in force and the models served (name -> task)."""

    settings: ServiceSettings
    models: dict[str, str]

    def served(self, task: str) -> list[str]:
        return sorted(name for name, kind in self.models.items() if kind == task)


@dataclass(frozen=True)
class Parameter:
    name: str
    schema: dict
    description: str
    # query | path: a template's {name} parts are path parameters without saying so; a path parameter declared
    # here (to give its schema) applies to the templates that hold it, as one route may serve several templates.
    location: str = "query"


@dataclass(frozen=True)
class Operation:
    summary: str
    description: str
    response: dict  # JSON Schema of the 200 answer's body
    response_type: str = "application/json"
    other_responses: dict[str, dict] = field(default_factory=dict)  # other media types the 200 answer may take
    request: dict[str, dict] = field(default_factory=dict)  # media type -> JSON Schema of the body
    request_required: bool = True  # False: an empty body is a request too (Triton's repository index)
    parameters: tuple[Parameter, ...] = ()
    errors: tuple[str, ...] = ()  # error codes, as function/errors.py ERROR_CODES lists them
    # Answers of another protocol's body on the same path (TEI's on /embed): status -> (description, JSON Schema),
    # beside this API's own errors of that status.
    dialect_errors: dict[str, tuple[str, dict]] = field(default_factory=dict)
    limits: tuple[str, ...] = ()  # function/config.py LIMITS that bound this route
    tags: tuple[str, ...] = ()
