"""moto in server mode on 127.0.0.1 for the S3 and SQS tests and benchmarks: the real protocols over HTTP.

`shared_aws_server()` is one server for the whole process; `aws_in_this_process()` points this process's S3 calls
at it (the function's own client reads AWS_ENDPOINT_URL_S3, as the SDKs do) with fake credentials. Setup and checks
use boto3. The tests' fixtures on it: tests/support/aws_fixtures.py.
"""
from __future__ import annotations

import atexit
import json
import logging
import os
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from kit.dynamodb_server import FAKE_CREDENTIALS, use_fake_credentials


@dataclass
class AwsServer:
    endpoint: str
    s3: object  # boto3 clients, for setting up and checking what the function did
    sqs: object
    _server: object

    def bucket(self) -> str:
        """A new empty bucket."""
        name = f"test-{uuid.uuid4().hex[:12]}"
        self.s3.create_bucket(Bucket=name)
        return name

    def read_json(self, bucket: str, key: str) -> dict:
        return json.loads(self.s3.get_object(Bucket=bucket, Key=key)["Body"].read())

    def tags(self, bucket: str, key: str) -> dict[str, str]:
        return {t["Key"]: t["Value"] for t in self.s3.get_object_tagging(Bucket=bucket, Key=key)["TagSet"]}

    def keys(self, bucket: str) -> list[str]:
        return sorted(o["Key"] for o in self.s3.list_objects_v2(Bucket=bucket).get("Contents", []))

    def stop(self) -> None:
        self._server.stop()


_shared: AwsServer | None = None
_lock = threading.Lock()


def shared_aws_server() -> AwsServer:
    global _shared
    with _lock:
        if _shared is None:
            import boto3  # noqa: PLC0415  (moto and boto3 load only once a server is asked for)
            from moto.server import ThreadedMotoServer  # noqa: PLC0415  (as boto3, above)

            use_fake_credentials()
            logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access-log line per request otherwise
            server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
            server.start()
            host, port = server.get_host_and_port()
            endpoint = f"http://{host}:{port}"
            session = boto3.session.Session()
            _shared = AwsServer(endpoint, session.client("s3", endpoint_url=endpoint, region_name="us-east-1"),
                                session.client("sqs", endpoint_url=endpoint, region_name="us-east-1"), server)
            atexit.register(_shared.stop)
        return _shared


@contextmanager
def aws_in_this_process() -> Iterator[tuple[AwsServer, dict[str, str]]]:
    """The shared server, with this process's S3 calls pointed at it (fake credentials) until the block ends, and
    those variables (for emulated Lambdas): `aws_environment` where a test's monkeypatch cannot reach (a module's
    fixture, a bench section)."""
    server = shared_aws_server()
    variables = {**FAKE_CREDENTIALS, "AWS_ENDPOINT_URL_S3": server.endpoint}
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield server, variables
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

