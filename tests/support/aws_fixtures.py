"""The suite's S3 and SQS fixtures, on kit/aws_server.py's shared moto server.

`aws` is the session's server; `aws_environment` points this process's S3 calls at it with fake credentials, for one
test; `bucket` is a new empty bucket there, `buckets` two (the doors' tests: where inputs are, where results go).
"""
from __future__ import annotations

import pytest

from kit.aws_server import AwsServer, shared_aws_server
from kit.dynamodb_server import FAKE_CREDENTIALS


@pytest.fixture(scope="session")
def aws() -> AwsServer:
    return shared_aws_server()


@pytest.fixture
def aws_environment(aws, monkeypatch) -> AwsServer:
    for name, value in FAKE_CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", aws.endpoint)
    return aws


@pytest.fixture
def bucket(aws_environment) -> str:
    return aws_environment.bucket()


@pytest.fixture
def buckets(aws) -> tuple[str, str]:
    return aws.bucket(), aws.bucket()
