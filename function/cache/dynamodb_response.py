"""What a BatchGetItem or BatchWriteItem answer must look like before the store reads anything from it.

A 200 whose JSON has another shape (`{"Responses": null}`, `"UnprocessedKeys": "x"`, a list, more unprocessed
keys than were sent) comes from something that is not DynamoDB working normally: a proxy, a bug, a fault. It
raises MalformedResponse, which the store treats like any failed call (counted, breaker opened), never as data.
Damage inside one item is another matter: dynamodb_item.parse_item makes that item a miss (`corrupt`).
"""
from __future__ import annotations


class MalformedResponse(ValueError):
    """The answer is JSON, but not shaped like DynamoDB's answer to the call that was made."""


def read_get_answer(answer: object, table: str, sent: int) -> tuple[list[dict], dict]:
    """(items found, the request for the keys left unprocessed: {} when none) of a BatchGetItem answer."""
    answer = _mapping(answer, "the answer")
    if "Responses" not in answer:
        raise MalformedResponse("the answer has no Responses")
    items = _list_of_mappings(_mapping(answer["Responses"], "Responses").get(table, []), f"Responses.{table}")
    if len(items) > sent:
        raise MalformedResponse(f"{len(items)} items answered for {sent} keys asked")
    unprocessed = _mapping(answer.get("UnprocessedKeys", {}), "UnprocessedKeys")
    if table not in unprocessed:
        return items, {}
    keys = _list_of_mappings(_mapping(unprocessed[table], f"UnprocessedKeys.{table}").get("Keys"),
                             f"UnprocessedKeys.{table}.Keys")
    if len(keys) > sent:
        raise MalformedResponse(f"{len(keys)} keys unprocessed of {sent} sent")
    return items, ({table: {"Keys": keys}} if keys else {})


def read_write_answer(answer: object, table: str, sent: int) -> dict:
    """The request for the writes left unprocessed by a BatchWriteItem answer ({} when none)."""
    unprocessed = _mapping(_mapping(answer, "the answer").get("UnprocessedItems", {}), "UnprocessedItems")
    if table not in unprocessed:
        return {}
    writes = _list_of_mappings(unprocessed[table], f"UnprocessedItems.{table}")
    if len(writes) > sent:
        raise MalformedResponse(f"{len(writes)} writes unprocessed of {sent} sent")
    return {table: writes} if writes else {}


def _mapping(value: object, where: str) -> dict:
    if not isinstance(value, dict):
        raise MalformedResponse(f"{where} is {type(value).__name__}, not an object")
    return value


def _list_of_mappings(value: object, where: str) -> list[dict]:
    if not isinstance(value, list) or not all(isinstance(entry, dict) for entry in value):
        raise MalformedResponse(f"{where} is not a list of objects")
    return value
