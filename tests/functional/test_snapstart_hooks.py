"""function/snapstart.py's hooks on a real Service: the before-snapshot hook leaves no connection open (DynamoDB
over HTTP, the SQLite file) and every model invoked once; the after-restore hook renews random state and
credentials, and the next request's log line says it is the first after a restore."""
from __future__ import annotations

import json
import logging
import os
import random
from urllib.parse import urlsplit

import numpy as np

from function.aws.s3 import client_from_environment
from function.cache.dynamodb import DynamoDBResultStore
from function.cache.memory import MemoryResultStore
from function.cache.sqlite import SqliteResultStore
from function.cache.tiered import TieredResultStore
from function.catalog.s3_source import S3ModelSource
from function.entry import handle_event
from function.snapstart import after_restore, before_snapshot
from tests.support.digits_service import digit_png, digits_models, digits_service  # noqa: F401  (fixture)
from kit.dynamodb_server import FAKE_CREDENTIALS
from tests.support.dynamodb_fixtures import dynamodb_server, results_table  # noqa: F401
from kit.events import http_api_event
from tests.support.sockets import connections_to


def classify(service, column: int) -> dict:
    return handle_event(service, http_api_event("POST", "/classify", digit_png(column), "image/png"))


def sqlite_handles(path) -> int:
    """Files of the SQLite database (and its -wal, -shm) this process has open."""
    held = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            held += os.readlink(f"/proc/self/fd/{fd}").startswith(str(path))
        except OSError:  # the descriptor listdir itself used, closed by now
            continue
    return held


def test_before_snapshot_closes_the_dynamodb_connection_and_invokes_every_model(
        digits_models, results_table, dynamodb_server, caplog):  # noqa: F811
    store = TieredResultStore(MemoryResultStore(16, 60), DynamoDBResultStore(results_table, 60))
    service = digits_service(digits_models, store)
    port = urlsplit(dynamodb_server.endpoint).port
    baseline = connections_to(port)  # the test's own boto3 client, which made the table, keeps one too
    assert classify(service, 1)["statusCode"] == 200  # a miss and a write: a kept-alive connection to the table
    assert connections_to(port) == baseline + 1
    with caplog.at_level(logging.INFO, logger="function"):
        before_snapshot(service)
    assert connections_to(port) == baseline
    assert all(task.loaded for task in service.registry.tasks.values())
    logged = next(r for r in caplog.records if r.getMessage() == "before snapshot").fields
    assert logged["models"] == sorted(service.registry.tasks)
    assert classify(service, 2)["statusCode"] == 200  # and the store opens a new one when next asked
    assert connections_to(port) == baseline + 1


def test_before_snapshot_closes_the_sqlite_file(digits_models, tmp_path):  # noqa: F811
    path = tmp_path / "results.sqlite3"
    service = digits_service(digits_models, TieredResultStore(MemoryResultStore(16, 60),
                                                              SqliteResultStore(path, 60)))
    assert classify(service, 3)["statusCode"] == 200
    assert sqlite_handles(path) >= 1
    before_snapshot(service)
    assert sqlite_handles(path) == 0


def test_after_restore_renews_random_state_and_says_restore_once(digits_models, caplog):  # noqa: F811
    service = digits_service(digits_models, MemoryResultStore(16, 60))
    random.seed(7), np.random.seed(7)
    snapshot_draws = random.random(), np.random.random()
    random.seed(7), np.random.seed(7)
    after_restore(service)
    assert (random.random(), np.random.random()) != snapshot_draws
    with caplog.at_level(logging.INFO, logger="function"):
        classify(service, 4), classify(service, 5)
    requests = [r.fields for r in caplog.records if r.getMessage() == "request"]
    assert [fields["cold_start"] for fields in requests] == ["restore", False]
    assert json.dumps(requests[0]["cold_start"]) == '"restore"'


def test_after_restore_reads_the_model_source_credentials_again(digits_models, monkeypatch, tmp_path):  # noqa: F811
    for name, value in FAKE_CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    source = S3ModelSource("models", "published/", client_from_environment(), tmp_path)
    service = digits_service(digits_models, MemoryResultStore(16, 60))
    service.registry.source = source  # the S3 source as the snapshot held it; no request reaches S3 here
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIARESTOREDCOPY0000")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "token-of-the-restored-copy")
    after_restore(service)
    assert source.client.credentials.access_key == "AKIARESTOREDCOPY0000"
    assert source.client.credentials.token == "token-of-the-restored-copy"
