"""The suite's DynamoDB fixtures, on kit/dynamodb_server.py's shared server.

Import the fixtures a test module uses: `from tests.support.dynamodb_fixtures import dynamodb_server, results_table`.
"""
from __future__ import annotations

import pytest

from kit.dynamodb_server import DynamoDBServer, create_results_table, shared_dynamodb_server


@pytest.fixture(scope="session")
def dynamodb_server() -> DynamoDBServer:
    return shared_dynamodb_server()


@pytest.fixture
def results_table(dynamodb_server, monkeypatch) -> str:
    """A fresh table per test, with AWS_ENDPOINT_URL_DYNAMODB pointing this process at the server."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", dynamodb_server.endpoint)
    return create_results_table(dynamodb_server.client())
