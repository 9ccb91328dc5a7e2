"""A rehearsal of a Step Functions state machine whose work is a Distributed Map over S3 (the bulk-inference
definition, deploy/bulk-inference.asl.json), played against moto's S3 over HTTP with the function in-process.

What it plays as Step Functions documents it: Pass, Choice, Succeed and Fail states; a Distributed Map whose
ItemReader lists a prefix (ListObjectsV2, items as Step Functions hands them: Etag, Key, LastModified, Size,
StorageClass) or reads a JSON Lines / CSV object; ItemSelector; ItemBatcher (items per batch, bytes per batch,
BatchInput); a `lambda:invoke` Task per batch with its Retry policy (error names as Lambda reports them: the
exception's class for a function error, `Lambda.*` for the service's own), the 256 KB payload limit; the
ToleratedFailure threshold; and ResultWriter's files (manifest.json, SUCCEEDED_0.json, FAILED_0.json).

What it leaves out, on purpose: child executions run one after another (MaxConcurrency is read and kept, not
enacted), retries do not sleep (their waits are recorded), and the whole Map runs before the threshold is judged
(Step Functions may stop earlier). Anything the definition uses that is not played raises asl_paths.Unsupported.
"""
from __future__ import annotations

import csv
import io
import json
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.support.asl_paths import Unsupported, choice_matches, payload, read_path, write_path

PAYLOAD_LIMIT = 256 * 1024  # Step Functions' limit on a state's input and output
ACCOUNT, REGION = "123456789012", "us-east-1"


class StateFailure(Exception):
    def __init__(self, error: str, cause: str = ""):
        super().__init__(f"{error}: {cause}")
        self.error, self.cause = error, cause


class LambdaServiceError(Exception):
    """Lambda itself refused or failed the invocation (`Lambda.TooManyRequestsException`, ...): injected by a test."""

    def __init__(self, error: str):
        super().__init__(error)
        self.error = error


# (function name, event) -> the handler's result; raises what the handler raises.
Invoke = Callable[[str, dict], dict]


@dataclass
class ChildExecution:
    name: str
    input: dict
    status: str = "RUNNING"
    output: object = None
    error: str | None = None
    cause: str | None = None
    attempts: list[str] = field(default_factory=list)  # each invocation's outcome: "ok" or the error name


@dataclass
class MapRun:
    state: str
    arn: str
    max_concurrency: int
    tolerated_failure_percentage: float
    children: list[ChildExecution] = field(default_factory=list)
    result_writer_details: dict | None = None

    @property
    def failed(self) -> list[ChildExecution]:
        return [child for child in self.children if child.status == "FAILED"]


@dataclass
class Execution:
    status: str
    output: object = None
    error: str | None = None
    cause: str | None = None
    map_runs: list[MapRun] = field(default_factory=list)
    retry_waits: list[float] = field(default_factory=list)


def _json_round_trip(value, limit: int | None = None):
    """What crosses a service boundary is JSON; over `limit` bytes it does not cross at all."""
    text = json.dumps(value)
    if limit is not None and len(text.encode("utf-8")) > limit:
        raise StateFailure("States.DataLimitExceeded", f"{len(text)} bytes is over the {limit}-byte limit")
    return json.loads(text)


class StateMachineRehearsal:
    def __init__(self, definition: dict, s3, invoke: Invoke, name: str = "bulk-inference", seed: int = 0):
        self.definition = definition
        self.s3 = s3  # a boto3 S3 client: the service side of ItemReader and ResultWriter
        self.invoke = invoke
        self.arn = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{name}"
        self.random = random.Random(seed)  # JitterStrategy FULL
        self.execution: Execution | None = None

    def start_execution(self, execution_input: dict, name: str = "") -> Execution:
        name = name or uuid.uuid4().hex
        self.execution = execution = Execution("RUNNING")
        context = {"Execution": {"Id": f"{self.arn.replace(':stateMachine:', ':execution:')}:{name}",
                                 "Input": execution_input, "Name": name},
                   "StateMachine": {"Id": self.arn}}
        try:
            execution.output = self._run(self.definition, _json_round_trip(execution_input, PAYLOAD_LIMIT),
                                         context)
            execution.status = "SUCCEEDED"
        except StateFailure as failure:
            execution.status, execution.error, execution.cause = "FAILED", failure.error, failure.cause
        return execution

    # ---- states ------------------------------------------------------------------------------------

    def _run(self, machine: dict, data, context: dict):
        name = machine["StartAt"]
        while True:
            state = machine["States"][name]
            kind = state["Type"]
            if kind == "Choice":
                rule = next((r for r in state["Choices"] if choice_matches(r, data, context)), None)
                if rule is None and "Default" not in state:
                    raise StateFailure("States.NoChoiceMatched", name)
                name = rule["Next"] if rule else state["Default"]
                continue
            if kind == "Succeed":
                return data
            if kind == "Fail":
                raise StateFailure(state.get("Error", "States.Fail"), state.get("Cause", ""))
            effective = data if state.get("InputPath", "$") == "$" else read_path(state["InputPath"], data, context)
            if kind == "Pass":
                result = (payload(state["Parameters"], effective, context) if "Parameters" in state
                          else state.get("Result", effective))
            elif kind == "Task":
                result = self._task(name, state, effective, context)
            elif kind == "Map":
                result = self._map(name, state, effective, context)
            else:
                raise Unsupported(f"state type {kind}")
            if "ResultSelector" in state:
                result = payload(state["ResultSelector"], result, context)
            data = write_path(state.get("ResultPath"), data, result)
            if state.get("OutputPath", "$") != "$":
                data = read_path(state["OutputPath"], data, context)
            data = _json_round_trip(data, PAYLOAD_LIMIT)
            if state.get("End"):
                return data
            name = state["Next"]

    def _task(self, name: str, state: dict, data, context: dict):
        if state["Resource"] != "arn:aws:states:::lambda:invoke":
            raise Unsupported(f"Task resource {state['Resource']}")
        parameters = payload(state["Parameters"], data, context)
        retriers = state.get("Retry", [])
        attempts = [0] * len(retriers)
        child = context.get("Child")
        while True:
            try:
                event = _json_round_trip(parameters["Payload"])
                result = _json_round_trip(self.invoke(parameters["FunctionName"], event), PAYLOAD_LIMIT)
                if child:
                    child.attempts.append("ok")
                return {"ExecutedVersion": "$LATEST", "Payload": result, "StatusCode": 200}
            except StateFailure:
                raise
            except Exception as exc:  # noqa: BLE001  (what the handler raised is the function error Lambda reports)
                error = exc.error if isinstance(exc, LambdaServiceError) else type(exc).__name__
                cause = json.dumps({"errorMessage": str(exc), "errorType": error})
            if child:
                child.attempts.append(error)
            index = next((i for i, r in enumerate(retriers) if _retries(r, error)), None)
            if index is None or attempts[index] >= retriers[index].get("MaxAttempts", 3):
                raise StateFailure(error, cause)
            retrier = retriers[index]
            wait = retrier.get("IntervalSeconds", 1) * retrier.get("BackoffRate", 2.0) ** attempts[index]
            wait = min(wait, retrier.get("MaxDelaySeconds", wait))
            if retrier.get("JitterStrategy") == "FULL":
                wait = self.random.uniform(0, wait)
            self.execution.retry_waits.append(wait)
            attempts[index] += 1

    def _map(self, name: str, state: dict, data, context: dict):
        processor = state["ItemProcessor"]
        if processor.get("ProcessorConfig", {}).get("Mode") != "DISTRIBUTED":
            raise Unsupported("an inline Map")
        run = MapRun(name, f"arn:aws:states:{REGION}:{ACCOUNT}:mapRun:{context['Execution']['Name']}/"
                           f"{state.get('Label', name)}:{uuid.uuid4()}",
                     _setting(state, "MaxConcurrency", data, context, 0),
                     _setting(state, "ToleratedFailurePercentage", data, context, 0))
        self.execution.map_runs.append(run)
        items = self._read_items(state["ItemReader"], data, context)
        if "ItemSelector" in state:
            items = [payload(state["ItemSelector"], data, {**context, "Map": {"Item": {"Index": i, "Value": item}}})
                     for i, item in enumerate(items)]
        for index, batch in enumerate(self._batches(state.get("ItemBatcher"), items, data, context)):
            child = ChildExecution(f"{index:08d}", batch)
            run.children.append(child)
            child_context = {"Execution": {"Input": batch, "Name": child.name}, "Child": child}
            try:
                child.output = self._run(processor, batch, child_context)
                child.status = "SUCCEEDED"
            except StateFailure as failure:
                child.status, child.error, child.cause = "FAILED", failure.error, failure.cause
        if "ResultWriter" in state:
            run.result_writer_details = self._write_results(state["ResultWriter"], run, data, context)
        if run.children and len(run.failed) * 100.0 / len(run.children) > run.tolerated_failure_percentage:
            raise StateFailure("States.ExceedToleratedFailureThreshold",
                               f"{len(run.failed)} of {len(run.children)} child executions failed")
        if run.result_writer_details:
            return {"MapRunArn": run.arn, "ResultWriterDetails": run.result_writer_details}
        return [child.output for child in run.children]

    # ---- the Map's S3 side ---------------------------------------------------------------------------

    def _read_items(self, reader: dict, data, context: dict) -> list:
        parameters = payload(reader.get("Parameters", {}), data, context)
        config = reader.get("ReaderConfig", {})
        if reader["Resource"] == "arn:aws:states:::s3:listObjectsV2":
            items = []
            for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=parameters["Bucket"],
                                                                        Prefix=parameters.get("Prefix", "")):
                items += [{"Etag": o["ETag"], "Key": o["Key"], "LastModified": int(o["LastModified"].timestamp()),
                           "Size": o["Size"], "StorageClass": o.get("StorageClass", "STANDARD")}
                          for o in page.get("Contents", [])]
        elif reader["Resource"] == "arn:aws:states:::s3:getObject":
            text = self.s3.get_object(Bucket=parameters["Bucket"], Key=parameters["Key"])["Body"].read().decode()
            kind = config.get("InputType", "JSON")
            if kind == "JSONL":
                items = [json.loads(line) for line in text.splitlines() if line.strip()]
            elif kind == "CSV" and config.get("CSVHeaderLocation") == "FIRST_ROW":
                items = [dict(row) for row in csv.DictReader(io.StringIO(text))]  # every value a string
            elif kind == "JSON":
                items = json.loads(text)
            else:
                raise Unsupported(f"ItemReader input {kind} {config}")
        else:
            raise Unsupported(f"ItemReader {reader['Resource']}")
        return items[:config["MaxItems"]] if "MaxItems" in config else items

    def _batches(self, batcher: dict | None, items: list, data, context: dict):
        """Consecutive items, as many as fit both limits; every child's input is {"Items": [...], "BatchInput"}."""
        if batcher is None:
            raise Unsupported("a Map without ItemBatcher (one child per item)")
        max_items = _setting(batcher, "MaxItemsPerBatch", data, context, 0) or len(items) or 1
        max_bytes = _setting(batcher, "MaxInputBytesPerBatch", data, context, PAYLOAD_LIMIT)
        batch_input = payload(batcher.get("BatchInput", {}), data, context)
        batch: list = []
        for item in items:
            candidate = batch + [item]
            if batch and (len(candidate) > max_items or _size(candidate, batch_input) > max_bytes):
                yield {"Items": batch, "BatchInput": batch_input}
                candidate = [item]
            batch = candidate
        if batch:
            yield {"Items": batch, "BatchInput": batch_input}

    def _write_results(self, writer: dict, run: MapRun, data, context: dict) -> dict:
        parameters = payload(writer["Parameters"], data, context)
        bucket, base = parameters["Bucket"], f"{parameters['Prefix'].rstrip('/')}/{run.arn.rsplit(':', 1)[1]}/"
        files: dict[str, list] = {"FAILED": [], "PENDING": [], "SUCCEEDED": []}
        for status in ("SUCCEEDED", "FAILED"):
            records = [_record(child, run, self.arn) for child in run.children if child.status == status]
            if records:
                key = f"{base}{status}_0.json"
                body = json.dumps(records).encode()
                self.s3.put_object(Bucket=bucket, Key=key, Body=body)
                files[status].append({"Key": key, "Size": len(body)})
        manifest = {"DestinationBucket": bucket, "MapRunArn": run.arn, "ResultFiles": files}
        self.s3.put_object(Bucket=bucket, Key=f"{base}manifest.json", Body=json.dumps(manifest).encode())
        return {"Bucket": bucket, "Key": f"{base}manifest.json"}


def _setting(state: dict, name: str, data, context: dict, default):
    if name in state:
        return state[name]
    if f"{name}Path" in state:
        return read_path(state[f"{name}Path"], data, context)
    return default


def _retries(retrier: dict, error: str) -> bool:
    names = retrier["ErrorEquals"]
    return error in names or "States.ALL" in names or ("States.TaskFailed" in names and error != "States.Timeout")


def _size(items: list, batch_input: dict) -> int:
    return len(json.dumps({"Items": items, "BatchInput": batch_input}).encode("utf-8"))


def _record(child: ChildExecution, run: MapRun, machine_arn: str) -> dict:
    """One child execution as ResultWriter writes it: input and output as JSON strings."""
    record = {"ExecutionArn": f"{machine_arn.replace(':stateMachine:', ':express:')}/{child.name}",
              "Input": json.dumps(child.input), "InputDetails": {"Included": True}, "Name": child.name,
              "StateMachineArn": machine_arn, "Status": child.status}
    if child.status == "SUCCEEDED":
        record.update(Output=json.dumps(child.output), OutputDetails={"Included": True})
    else:
        record.update(Error=child.error, Cause=child.cause)
    return record
