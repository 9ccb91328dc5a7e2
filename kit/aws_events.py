"""S3 and SQS Lambda events for tests and benchmarks: the shapes AWS documents (kit/event_shapes/), filled in."""
from __future__ import annotations

import copy
from urllib.parse import quote_plus

from kit.events import load_event


def s3_object_created(bucket: str, key: str, size: int, event_name: str = "ObjectCreated:Put") -> dict:
    """One ObjectCreated record; the key URL-encoded with "+" for spaces, as S3 sends it."""
    event = copy.deepcopy(load_event("s3_object_created_put.json"))
    record = event["Records"][0]
    record["eventName"] = event_name
    record["s3"]["bucket"]["name"] = bucket
    record["s3"]["bucket"]["arn"] = f"arn:aws:s3:::{bucket}"
    record["s3"]["object"].update(key=quote_plus(key, safe="/"), size=size)
    return event


def sqs_batch(messages: list[dict], queue_arn: str = "arn:aws:sqs:us-east-1:123456789012:requests") -> dict:
    """The event Lambda's SQS poller sends for messages as ReceiveMessage returned them (with AttributeNames=All),
    or for dicts holding just "messageId" and "body"."""
    template = load_event("sqs_receive_message.json")["Records"][0]
    records = []
    for message in messages:
        record = copy.deepcopy(template)
        record.update(messageId=message.get("MessageId", message.get("messageId")),
                      body=message.get("Body", message.get("body")),
                      receiptHandle=message.get("ReceiptHandle", record["receiptHandle"]),
                      md5OfBody=message.get("MD5OfBody", record["md5OfBody"]), eventSourceARN=queue_arn)
        record["attributes"].update(message.get("Attributes", {}))
        records.append(record)
    return {"Records": records}
