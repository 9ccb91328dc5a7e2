"""SnapStart rehearsed with the real runtime client: awslambdaric, told AWS_LAMBDA_INITIALIZATION_TYPE=snap-start,
imports the handler (the init), runs the before-snapshot hooks, asks the Runtime API for restore/next, runs the
after-restore hooks, then serves. Here a stand-in Runtime API answers it (tests/support/runtime_api.py), and the
process forks after the before-snapshot hooks (tests/support/snapstart_copies.py): two copies restored from one
initialised process, as Lambda restores many copies of one snapshot (a real checkpoint/restore cannot run on
these kernels). The models come from S3 (moto over HTTP), so the init holds a kept-alive socket that the
before-snapshot hook must close."""
from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from convert.publish import publish
from function.aws.s3 import client_from_environment
from tests.support.aws_fixtures import aws  # noqa: F401
from kit.dynamodb_server import FAKE_CREDENTIALS
from kit.dockerfile import handler_command
from kit.lambda_runtime import RUNTIME_PYTHON, ensure_prepared, lambda_environment, lay_out_task_root
from kit.route_events import PAGE_ENVIRONMENT, route_events
from tests.support.runtime_api import RuntimeApiStandIn

pytestmark = pytest.mark.slow

LAUNCHER = Path(__file__).resolve().parents[1] / "support" / "snapstart_copies.py"
MODELS = ("digits", "efficientnet_lite0", "minilm", "sentiment", "tabular")
ANSWER_SECONDS = 60


def descendants(pid: int) -> list[int]:
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                pending += [int(c) for c in Path(f"/proc/{current}/task/{task}/children").read_text().split()]
        except OSError:
            continue
    return found


@pytest.fixture(scope="module")
def rehearsal(aws, tmp_path_factory):  # noqa: F811
    """Both copies' answers to every route, their reports, and the runtime's output."""
    ensure_prepared()
    tmp = tmp_path_factory.mktemp("snapstart")
    with pytest.MonkeyPatch.context() as patch:  # this process's S3 client, for publishing, points at moto
        for name, value in {**FAKE_CREDENTIALS, "AWS_ENDPOINT_URL_S3": aws.endpoint}.items():
            patch.setenv(name, value)
        server = aws
        bucket = server.bucket()
        task_root = lay_out_task_root(tmp / "task")
        client = client_from_environment()
        for name in MODELS:
            publish(task_root / "models" / name, f"s3://{bucket}/published/", client)
        reports = tmp / "reports"
        reports.mkdir()
        events = list(route_events().values())
        process: subprocess.Popen | None = None
        with RuntimeApiStandIn(events, processes=lambda: descendants(process.pid) if process else []) as api:
            environment = lambda_environment(task_root, tmp, 1769, 15, {
                **FAKE_CREDENTIALS, **PAGE_ENVIRONMENT, "AWS_ENDPOINT_URL_S3": server.endpoint,
                "MODEL_SOURCE": f"s3://{bucket}/published/", "RESULTS_CACHE": "sqlite",
                "AWS_LAMBDA_RUNTIME_API": api.address, "AWS_LAMBDA_INITIALIZATION_TYPE": "snap-start",
                "SNAPSTART_REPORT_DIR": str(reports)})
            output = tmp / "runtime.log"
            with output.open("wb") as sink:
                process = subprocess.Popen([str(RUNTIME_PYTHON), str(LAUNCHER), handler_command()[0]],
                                           cwd=task_root, env=environment, stdin=subprocess.DEVNULL, stdout=sink,
                                           stderr=subprocess.STDOUT, start_new_session=True)
                try:
                    copies = api.wait_for_answers(copies=2, timeout=ANSWER_SECONDS)
                finally:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(timeout=10)
            yield {"api": api, "copies": copies, "events": events, "output": output.read_text(),
                   "reports": {int(p.stem): json.loads(p.read_text()) for p in reports.glob("[0-9]*.json")},
                   "snapshot": json.loads((reports / "snapshot.json").read_text())}


def test_two_copies_restore_from_one_snapshot_and_answer_every_route(rehearsal):
    api, copies = rehearsal["api"], rehearsal["copies"]
    assert not api.init_errors and not api.restore_errors, (api.init_errors, api.restore_errors)
    assert len(copies) == 2, rehearsal["output"][-3000:]
    for copy in copies.values():
        assert copy.restored  # restore/next was asked before any invocation/next
        first_next = next(i for i, call in enumerate(api.calls) if call[0] == copy.pid and "invocation" in call[2])
        restore = next(i for i, call in enumerate(api.calls) if call[0] == copy.pid and "restore" in call[2])
        assert restore < first_next
        statuses = [copy.answers[request_id]["statusCode"] for request_id in copy.handed]
        assert statuses == [200] * len(rehearsal["events"]), dict(zip(route_events(), statuses))
    first, second = copies.values()
    assert not set(first.handed) & set(second.handed)
    assert [first.answers[r]["body"] for r in first.handed][:2] == [second.answers[r]["body"]
                                                                   for r in second.handed][:2]


def test_each_copy_draws_its_own_random_numbers(rehearsal):
    reports = list(rehearsal["reports"].values())
    assert len(reports) == 2
    first, second = reports
    assert first["numpy"] != second["numpy"]  # fork does not reseed numpy: the after-restore hook does
    assert first["random"] != second["random"]
    assert first["uuid"] != second["uuid"]


def test_no_socket_or_sqlite_file_is_shared_by_the_copies(rehearsal):
    first, second = rehearsal["reports"].values()
    shared = set(first["open"].values()) & set(second["open"].values())
    assert not [target for target in shared if target.startswith("socket:") or ".sqlite" in target], shared
    held = rehearsal["snapshot"]["open"].values()
    assert not [target for target in held if target.startswith("socket:")], held


def test_every_model_was_loaded_and_invoked_before_the_snapshot(rehearsal):
    lines = [json.loads(line) for line in rehearsal["output"].splitlines() if line.startswith("{")]
    before = [line for line in lines if line.get("message") == "before snapshot"]
    assert len(before) == 1  # once, in the process that was snapshotted
    assert before[0]["models"] == sorted(MODELS)
    requests = [line for line in lines if line.get("message") == "request"]
    assert requests and all(line["cold_start"] in ("restore", False) for line in requests)
    assert sum(line["cold_start"] == "restore" for line in requests) == 2  # the first request of each copy
