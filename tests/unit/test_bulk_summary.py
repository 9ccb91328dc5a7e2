"""A Distributed Map batch's answer stays under Step Functions' 256 KB whatever the batch holds, and the two bulk
engines' invocations are told apart from every other event by their shape."""
from __future__ import annotations

import json

from function.async_routes import async_route
from function.bulk import Item, Outcome, Run
from function.entry import event_kind
from function.entry.distributed_map import SUMMARY_BUDGET_BYTES, summary

RUN = Run(async_route("classify"), task=None, options={}, results_bucket="results", results_prefix="p/")


def outcomes(answered: int, refused: int, name_chars: int) -> list[Outcome]:
    def item(index: int) -> Item:
        return Item(f"{index:06d}".ljust(name_chars, "k"))
    return ([Outcome(item(i), "answered", summary={"label": "tabby", "score": 0.9}) for i in range(answered)]
            + [Outcome(item(answered + i), "refused", "unsupported_image", "x" * 300) for i in range(refused)])


def test_a_small_batch_reports_every_answer_and_every_refusal_in_full():
    answer = summary(RUN, outcomes(3, 2, 20))
    assert (answer["answered"], answer["refused"], len(answer["answers"]), len(answer["failed"])) == (3, 2, 3, 2)
    assert answer["results"] == {"bucket": "results", "prefix": "p/"} and "answers_omitted" not in answer
    assert answer["failed"][0]["code"] == "unsupported_image" and len(answer["failed"][0]["message"]) == 200


def test_a_huge_batch_drops_answers_then_messages_then_refusals_but_keeps_its_counts():
    for answered, refused in ((2000, 10), (10, 2000), (1000, 1000)):
        answer = summary(RUN, outcomes(answered, refused, 1024))
        assert len(json.dumps(answer).encode()) <= SUMMARY_BUDGET_BYTES
        assert (answer["answered"], answer["refused"]) == (answered, refused)
        assert len(answer["failed"]) + answer.get("failed_omitted", 0) == refused
        assert len(answer.get("answers", [])) + answer.get("answers_omitted", 0) == answered


def test_the_bulk_engines_invocations_are_told_apart_by_shape():
    assert event_kind({"Items": [], "BatchInput": {}}) == "distributed_map"
    assert event_kind({"invocationSchemaVersion": "2.0", "invocationId": "i", "tasks": []}) == "s3_batch_operations"
    assert event_kind({"Items": [{"Key": "a"}]}) == "api_gateway"  # no BatchInput: not ours, refused as unsupported
    assert event_kind({"Records": [{"eventSource": "aws:s3"}]}) == "s3"
