"""The standard-library DynamoDB client: its SigV4 signature against botocore's own signer, its error mapping and
retries against a real HTTP server on 127.0.0.1, and endpoint resolution. (DynamoDB Local and moto never check
signatures, so botocore's signer is the reference here.)"""
from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
import zlib
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials as BotoCredentials

from kit.ports import free_port
from function.cache.dynamodb import THROTTLING_CODES
from function.aws.dynamodb import (
    CONTENT_TYPE,
    Credentials,
    DeadlineExceeded,
    DynamoDBClient,
    DynamoDBError,
    Endpoint,
    ResponseCorrupted,
    client_from_environment,
    resolve_endpoint,
)
from function.aws.sigv4 import sign

WHEN = datetime(2026, 11, 29, 21, 5, 7, tzinfo=timezone.utc)
THROTTLED = (400, {"__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
                   "message": "The level of configured provisioned throughput for the table was exceeded."})
INTERNAL = (500, {"__type": "com.amazonaws.dynamodb.v20120810#InternalServerError", "message": "Internal error"})


class ScriptedDynamoDB:
    """A real HTTP/1.1 server on 127.0.0.1 answering each request with the next scripted (status, body[, crc]).

    A body that is not bytes is sent as JSON with DynamoDB's x-amz-crc32 header (or the scripted crc). With an
    empty script it answers 500, so an unexpected call fails the test. Records every request (headers, parsed
    body, client port).
    """

    def __init__(self, *answers, close_after_each: bool = False, tls: ssl.SSLContext | None = None) -> None:
        self.answers = list(answers)
        self.requests: list[dict] = []
        self.close_after_each = close_after_each
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as DynamoDB does

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                server.requests.append({"path": self.path, "headers": dict(self.headers), "raw": body,
                                        "body": json.loads(body), "port": self.client_address[1]})
                status, answer, *crc = server.answers.pop(0) if server.answers else INTERNAL
                payload = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", CONTENT_TYPE)
                self.send_header("Content-Length", str(len(payload)))
                if not isinstance(answer, bytes):
                    self.send_header("x-amz-crc32", str(crc[0] if crc else zlib.crc32(payload)))
                self.end_headers()
                self.wfile.write(payload)
                if server.close_after_each:
                    self.close_connection = True  # drop it without saying so, like an idle timeout

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> "ScriptedDynamoDB":
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()
        self._server.server_close()


def make_client(url: str, max_attempts: int = 2, **settings) -> DynamoDBClient:
    settings = {"connect_timeout": 0.5, "call_timeout": 1.0, "retry_codes": THROTTLING_CODES, **settings}
    return DynamoDBClient(resolve_endpoint("us-east-1", {"AWS_ENDPOINT_URL_DYNAMODB": url}), "us-east-1",
                          Credentials("AKIDEXAMPLE", "secret/key+example", "session-token=="),
                          max_attempts=max_attempts, **settings)


def botocore_authorization(url: str, headers: dict, body: bytes, credentials: Credentials, region: str,
                           when: datetime, monkeypatch) -> dict:
    """What botocore's SigV4Auth adds to the same request at the same instant."""
    monkeypatch.setattr("botocore.auth.get_current_datetime", lambda *a, **k: when.replace(tzinfo=None))
    request = AWSRequest(method="POST", url=url, headers=dict(headers), data=body)
    boto_credentials = BotoCredentials(credentials.access_key, credentials.secret_key, credentials.token)
    SigV4Auth(boto_credentials, "dynamodb", region).add_auth(request)
    return {name: request.headers[name] for name in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token")
            if name in request.headers}


@pytest.mark.parametrize("url, region, token", [
    ("https://dynamodb.eu-west-1.amazonaws.com", "eu-west-1", "IQoJb3JpZ2luX2VjEJr//////////wEaCXVz+token/=="),
    ("https://dynamodb.us-east-1.amazonaws.com", "us-east-1", None),
    ("http://127.0.0.1:8000", "us-east-1", "testing"),
    ("http://localhost:4566/", "ap-southeast-2", "tok"),
])
def test_signature_equals_botocores(url, region, token, monkeypatch):
    endpoint = resolve_endpoint(region, {"AWS_ENDPOINT_URL_DYNAMODB": url})
    credentials = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token)
    body = json.dumps({"RequestItems": {"results": {"Keys": [{"result_key": {"S": "é  a"}}]}}}).encode()
    headers = {"Host": endpoint.host_header, "Content-Type": CONTENT_TYPE,
               "X-Amz-Target": "DynamoDB_20120810.BatchGetItem"}
    ours = sign("POST", endpoint.path, headers, body, credentials, region, WHEN, "dynamodb")
    assert ours == botocore_authorization(url, headers, body, credentials, region, WHEN, monkeypatch)
    assert ours["X-Amz-Date"] == "20261129T210507Z"


def test_the_request_on_the_wire_carries_botocores_signature(monkeypatch):
    item = {"result_key": {"S": "k"}, "result": {"S": '{"label":"caf\u00e9"}'}, "expires_at": {"N": "1"}}
    with ScriptedDynamoDB((200, {"UnprocessedItems": {}})) as server:
        client = make_client(server.url)
        assert client.batch_write_item(RequestItems={"results": [{"PutRequest": {"Item": item}}]}) == {
            "UnprocessedItems": {}}
    (sent,) = server.requests
    headers = sent["headers"]
    assert sent["path"] == "/" and sent["body"] == {"RequestItems": {"results": [{"PutRequest": {"Item": item}}]}}
    assert headers["X-Amz-Target"] == "DynamoDB_20120810.BatchWriteItem" and headers["Content-Type"] == CONTENT_TYPE
    assert headers["Host"] == server.url.removeprefix("http://")
    when = datetime.strptime(headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    signed = {name: headers[name] for name in ("Host", "Content-Type", "X-Amz-Target")}
    expected = botocore_authorization(server.url, signed, sent["raw"], client.credentials, "us-east-1", when,
                                      monkeypatch)
    assert {name: headers[name] for name in expected} == expected


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command for a test certificate")
def test_https_with_a_port_verifies_the_certificate_and_signs_the_host_with_its_port(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=local",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    with ScriptedDynamoDB((200, {"Responses": {}}), tls=tls) as server:
        untrusting = make_client(server.url, max_attempts=1)
        with pytest.raises(ssl.SSLCertVerificationError):  # the system trust store does not know this certificate
            untrusting.batch_get_item(RequestItems={})
        trusting = make_client(server.url)
        trusting.transport.tls_context = ssl.create_default_context(cafile=str(cert))
        assert trusting.batch_get_item(RequestItems={}) == {"Responses": {}}
    assert server.requests[-1]["headers"]["Host"] == server.url.removeprefix("https://")


def test_a_throttling_answer_is_retried_once_then_raised_with_its_code():
    with ScriptedDynamoDB(THROTTLED, THROTTLED) as server:
        with pytest.raises(DynamoDBError) as raised:
            make_client(server.url).batch_get_item(RequestItems={"t": {"Keys": [{"result_key": {"S": "a"}}]}})
    assert raised.value.response["Error"] == {"Code": "ProvisionedThroughputExceededException",
                                              "Message": THROTTLED[1]["message"]}
    assert raised.value.status == 400 and len(server.requests) == 2


def test_other_client_errors_are_raised_at_once():
    invalid = (400, {"__type": "com.amazon.coral.validate#ValidationException", "message": "bad key"})
    with ScriptedDynamoDB(invalid) as server:
        with pytest.raises(DynamoDBError) as raised:
            make_client(server.url).batch_get_item(RequestItems={})
    assert raised.value.response["Error"]["Code"] == "ValidationException" and len(server.requests) == 1


def test_a_server_error_is_retried_once_then_raised():
    with ScriptedDynamoDB(INTERNAL, INTERNAL) as server:
        with pytest.raises(DynamoDBError) as raised:
            make_client(server.url).batch_get_item(RequestItems={})
    assert raised.value.response["Error"]["Code"] == "InternalServerError" and raised.value.status == 500
    assert len(server.requests) == 2


def test_a_server_error_then_an_answer_returns_the_answer():
    with ScriptedDynamoDB(INTERNAL, (200, {"Responses": {"t": []}})) as server:
        assert make_client(server.url).batch_get_item(RequestItems={}) == {"Responses": {"t": []}}


def test_an_error_page_without_a_dynamodb_body_is_coded_by_its_status():
    with ScriptedDynamoDB((503, b"<html>Service Unavailable</html>"), (503, b"<html>")) as server:
        with pytest.raises(DynamoDBError) as raised:
            make_client(server.url).batch_get_item(RequestItems={})
    assert raised.value.response["Error"]["Code"] == "503"


def test_a_body_that_fails_its_crc32_is_retried_then_raised():
    damaged = (200, {"Responses": {}}, 12345)  # DynamoDB's x-amz-crc32 header does not match the body
    with ScriptedDynamoDB(damaged, damaged) as server:
        with pytest.raises(ResponseCorrupted):
            make_client(server.url).batch_get_item(RequestItems={})
    assert len(server.requests) == 2


def test_nothing_listening_raises_quickly():
    started = time.monotonic()
    with pytest.raises(ConnectionRefusedError):
        make_client(f"http://127.0.0.1:{free_port()}").batch_get_item(RequestItems={})
    assert time.monotonic() - started < 0.5  # two refused connects and a backoff of at most 0.1 s


def test_a_silent_server_ends_the_call_at_its_deadline():
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            make_client(f"http://127.0.0.1:{silent.getsockname()[1]}", call_timeout=0.3).batch_get_item(
                RequestItems={})
        assert 0.3 <= time.monotonic() - started < 1.0  # one deadline for the call, not one per attempt


def test_an_explicit_deadline_overrides_the_call_timeout():
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        client = make_client(f"http://127.0.0.1:{silent.getsockname()[1]}", call_timeout=30)
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded):
            client.batch_get_item(deadline=started + 0.2, RequestItems={})
        assert time.monotonic() - started < 1.0
        with pytest.raises(DeadlineExceeded):  # a deadline already past: nothing is even attempted
            client.batch_get_item(deadline=time.monotonic() - 1, RequestItems={})


def test_one_connection_is_kept_per_thread():
    with ScriptedDynamoDB(*[(200, {})] * 3) as server:
        client = make_client(server.url)
        client.batch_get_item(RequestItems={})
        client.batch_get_item(RequestItems={})
        worker = threading.Thread(target=client.batch_get_item, kwargs={"RequestItems": {}})
        worker.start()
        worker.join()
    ports = [request["port"] for request in server.requests]
    assert ports[0] == ports[1] != ports[2]


def test_a_connection_the_server_dropped_is_reopened_without_spending_an_attempt():
    with ScriptedDynamoDB((200, {}), (200, {"UnprocessedKeys": {}}), close_after_each=True) as server:
        client = make_client(server.url, max_attempts=1)
        client.batch_get_item(RequestItems={})
        time.sleep(0.05)  # the server has closed its end by now
        assert client.batch_get_item(RequestItems={}) == {"UnprocessedKeys": {}}
    assert len(server.requests) == 2


def test_endpoint_resolution():
    assert resolve_endpoint("eu-central-1", {}) == Endpoint("https", "dynamodb.eu-central-1.amazonaws.com", 443, "/")
    assert resolve_endpoint("eu-central-1", {}).host_header == "dynamodb.eu-central-1.amazonaws.com"
    local = resolve_endpoint("us-east-1", {"AWS_ENDPOINT_URL": "http://generic:1", "AWS_ENDPOINT_URL_DYNAMODB":
                                           "http://127.0.0.1:8000"})
    assert local == Endpoint("http", "127.0.0.1", 8000, "/") and local.host_header == "127.0.0.1:8000"
    generic = resolve_endpoint("us-east-1", {"AWS_ENDPOINT_URL": "https://ddb.example:8443"})
    assert generic == Endpoint("https", "ddb.example", 8443, "/") and generic.host_header == "ddb.example:8443"
    assert resolve_endpoint("us-east-1", {"AWS_ENDPOINT_URL_DYNAMODB": "http://h:80"}).host_header == "h"
    with pytest.raises(ValueError):
        resolve_endpoint("us-east-1", {"AWS_ENDPOINT_URL_DYNAMODB": "ftp://h"})


def test_region_and_credentials_come_from_lambdas_environment():
    environ = {"AWS_REGION": "eu-west-3", "AWS_DEFAULT_REGION": "us-west-2", "AWS_ACCESS_KEY_ID": "AKID",
               "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token"}
    client = client_from_environment(environ, connect_timeout=0.5, call_timeout=1.0, max_attempts=2)
    assert client.region == "eu-west-3" and client.credentials == Credentials("AKID", "secret", "token")
    assert client.endpoint.host == "dynamodb.eu-west-3.amazonaws.com"
    del environ["AWS_REGION"]
    assert client_from_environment(environ, connect_timeout=0.5, call_timeout=1.0, max_attempts=2).region == \
        "us-west-2"
    del environ["AWS_SECRET_ACCESS_KEY"]
    with pytest.raises(RuntimeError, match="credentials"):
        client_from_environment(environ, connect_timeout=0.5, call_timeout=1.0, max_attempts=2)
    with pytest.raises(RuntimeError, match="region"):
        client_from_environment({}, connect_timeout=0.5, call_timeout=1.0, max_attempts=2)
