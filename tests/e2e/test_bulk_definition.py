"""deploy/bulk-inference.asl.json: valid Amazon States Language (npm asl-validator, offline), before and after its
placeholders are filled in; its three Distributed Maps (a prefix, a JSON Lines file, a CSV file) run the same
batches the same way; throttling and the function's transient error are retried, nothing else."""
from __future__ import annotations

import copy
import json

import pytest

from tests.support.bulk_definition import (EXAMPLE_SUBSTITUTIONS, definition_text, inference_task, map_states,
                                           placeholders, substituted, validate)

pytestmark = pytest.mark.slow

READERS = {
    "ObjectsUnderPrefix": ("arn:aws:states:::s3:listObjectsV2", None),
    "RowsOfJsonLines": ("arn:aws:states:::s3:getObject", "JSONL"),
    "RowsOfCsv": ("arn:aws:states:::s3:getObject", "CSV"),
}
THROTTLING = {"Lambda.TooManyRequestsException", "Lambda.ServiceException", "Lambda.AWSLambdaException",
              "Lambda.SdkClientException"}


@pytest.fixture(scope="module")
def definition() -> dict:
    return substituted(EXAMPLE_SUBSTITUTIONS)


def test_the_file_and_the_substituted_definition_are_valid_amazon_states_language(definition, tmp_path):
    # The file's own FunctionName is a placeholder, not an ARN: only the substituted one is checked for ARNs.
    for candidate, arns in ((definition_text(), False), (definition, True)):
        done = validate(candidate, tmp_path, check_arns=arns)
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("break_it", [
    lambda d: d["States"]["ObjectsUnderPrefix"]["ItemBatcher"].update(MaxInputBytesPerBatch=300_000),
    lambda d: d["States"]["RowsOfCsv"].update(ToleratedFailurePercentage=150),
    lambda d: d["States"]["ItemSource"].update(Default="NoSuchState"),
    lambda d: inference_task(d["States"]["RowsOfJsonLines"])["Retry"][0].update(ErrorEquals="BatchNotFinished"),
], ids=["batch-over-256KB", "tolerance-over-100", "unknown-next-state", "retry-not-a-list"])
def test_the_validator_refuses_what_step_functions_would(definition, tmp_path, break_it):
    broken = copy.deepcopy(definition)
    break_it(broken)
    assert validate(broken, tmp_path).returncode != 0


def test_every_placeholder_is_one_serverless_yml_fills_in():
    assert placeholders() == set(EXAMPLE_SUBSTITUTIONS)


def test_the_three_maps_differ_only_in_where_their_items_come_from(definition):
    found = map_states(definition)
    assert set(found) == set(READERS)
    for name, (resource, input_type) in READERS.items():
        reader = found[name]["ItemReader"]
        assert reader["Resource"] == resource
        assert reader.get("ReaderConfig", {}).get("InputType") == input_type

    def shape(state: dict) -> str:
        state = copy.deepcopy(state)
        state.pop("ItemReader"), state.pop("Label")
        processor = state["ItemProcessor"]
        processor["States"] = {"Task": processor["States"].pop(processor.pop("StartAt"))}
        return json.dumps(state, sort_keys=True)
    assert len({shape(state) for state in found.values()}) == 1


def test_each_batch_is_one_invocation_of_the_function_with_the_runs_settings(definition):
    for state in map_states(definition).values():
        assert state["ItemProcessor"]["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": "EXPRESS"}
        task = inference_task(state)
        assert task["Resource"] == "arn:aws:states:::lambda:invoke"
        assert task["Parameters"] == {"FunctionName": EXAMPLE_SUBSTITUTIONS["FunctionArn"], "Payload.$": "$"}
        batcher = state["ItemBatcher"]
        assert batcher["MaxItemsPerBatchPath"] == "$.batchSize"
        assert batcher["MaxInputBytesPerBatch"] <= 256 * 1024  # Step Functions' payload limit
        assert batcher["BatchInput"]["results"] == {"bucket": "acme-results", "prefix": "predictions/"}
        assert {key.removesuffix(".$") for key in batcher["BatchInput"]} == {"task", "model", "options",
                                                                            "bucket", "results"}
        assert state["ResultWriter"]["Parameters"] == {"Bucket": "acme-results",
                                                       "Prefix": "bulk-reports/step-functions"}


def test_throttling_and_the_functions_transient_error_are_retried_and_nothing_else(definition):
    for state in map_states(definition).values():
        retried = [set(retrier["ErrorEquals"]) for retrier in inference_task(state)["Retry"]]
        assert set().union(*retried) >= THROTTLING | {"BatchNotFinished"}
        # A bad run input (InvalidBatchInput) or a bug is never retried: it would fail the same way again.
        assert not set().union(*retried) & {"States.ALL", "States.TaskFailed", "InvalidBatchInput"}
        for retrier in inference_task(state)["Retry"]:
            assert retrier["MaxAttempts"] >= 3 and retrier["BackoffRate"] > 1 and retrier["JitterStrategy"] == "FULL"
