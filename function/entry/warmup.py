"""The scheduled {"warmup": true} event (serverless.yml): load every model, infer nothing."""
from __future__ import annotations

from function.responses import json_response, to_result
from function.service import Service


def handle(service: Service, event: dict, lambda_request_id: str) -> dict:
    return to_result(json_response(200, {"warm": True, "models": service.warm_up(lambda_request_id)}))
