"""A DynamoDB results table on moto's server (127.0.0.1), for the configurations that run with the shared store.

Reuses the test suite's server and table definitions (tests/support/dynamodb_server.py); moto, not DynamoDB Local,
because DynamoDB Local binds every interface and the benchmark does not run in a private network namespace.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from tests.support.dynamodb_server import FAKE_CREDENTIALS, DynamoDBServer, create_results_table


@contextlib.contextmanager
def moto_results_table(name: str) -> Iterator[dict[str, str]]:
    """Yields the environment that points the function's DynamoDB store at a fresh table."""
    os.environ.pop("TEST_PRIVATE_NETNS", None)  # never DynamoDB Local here: it would listen on every interface
    with DynamoDBServer() as server:
        table = create_results_table(server.client(), name)
        # As serverless.yml deploys it: the DynamoDB store named explicitly.
        yield {**FAKE_CREDENTIALS, "RESULTS_CACHE": "dynamodb", "RESULTS_TABLE": table,
               "AWS_ENDPOINT_URL_DYNAMODB": server.endpoint}
