"""The answer limit of the embedding routes (/embed, /v1/embeddings, TEI's /embed): the largest answers here."""
from __future__ import annotations

from function.config import LAMBDA_ANSWER_BYTES
from function.errors import refuse
from function.responses import Response, json_response


def sized_answer(payload: object, remedy: str) -> Response:
    """The 200 answer, unless it is over what Lambda can return (6 MB): vectors as JSON numbers take ~20 bytes a
    value, so ~800 vectors of 384 dimensions fill it. Refused with a 413 saying `remedy` rather than sent to become
    API Gateway's bare 502."""
    response = json_response(200, payload)
    if len(response.body) > LAMBDA_ANSWER_BYTES:
        raise refuse("answer_too_large", f"The answer would be {len(response.body):,} bytes, over the "
                     f"{LAMBDA_ANSWER_BYTES:,} an AWS Lambda function can return: {remedy}.", param="input")
    return response
