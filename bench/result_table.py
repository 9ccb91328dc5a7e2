"""DynamoDB results tables on moto's server (127.0.0.1), for the configurations that run with the shared store.

Reuses the test suite's server and table definitions (kit/dynamodb_server.py); moto, not DynamoDB Local,
because DynamoDB Local binds every interface and the benchmark does not run in a private network namespace.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator

from kit.dynamodb_server import FAKE_CREDENTIALS, DynamoDBServer, create_results_table


@contextlib.contextmanager
def moto_results_tables() -> Iterator[Callable[[], dict[str, str]]]:
    """Yields a maker of fresh empty tables: each call returns the environment that points the function at one,
    so no run answers from a result an earlier run stored."""
    os.environ.pop("TEST_PRIVATE_NETNS", None)  # never DynamoDB Local here: it would listen on every interface
    with DynamoDBServer() as server:
        client = server.client()

        def fresh_table_environment() -> dict[str, str]:
            # As serverless.yml deploys it: the DynamoDB store named explicitly.
            return {**FAKE_CREDENTIALS, "RESULTS_CACHE": "dynamodb", "RESULTS_TABLE": create_results_table(client),
                    "AWS_ENDPOINT_URL_DYNAMODB": server.endpoint}

        yield fresh_table_environment
