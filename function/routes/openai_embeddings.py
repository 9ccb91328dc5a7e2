"""POST /v1/embeddings: OpenAI's embeddings API over the text_embedding task, so that OpenAI's clients (and
LangChain, LlamaIndex, vector databases) work unchanged with base_url pointed here. Errors take OpenAI's shape
(its group in function/router.py). Vectors are L2-normalised, as OpenAI's are."""
from __future__ import annotations

import base64

from function.errors import refuse
from function.responses import Response
from function.routes import inputs
from function.routes.context import RouteContext
from function.routes.answer_limit import sized_answer
from function.routes.text import checked_texts
from function.tasks.text_embedding import output_vector

TASK = "text_embedding"
ENCODINGS = ("float", "base64")
STR_ONLY = frozenset({str})  # the types of a list of texts as JSON gives it


def _input_texts(ctx: RouteContext, body: dict) -> list[str]:
    if "input" not in body:
        raise refuse("missing_field", "'input' is required: a string or a list of strings.", param="input")
    value = body["input"]
    texts = [value] if isinstance(value, str) else value
    if not isinstance(texts, list) or not texts:
        raise refuse("invalid_field", "'input' must be a non-empty string or a non-empty list of strings.",
                     param="input")
    if not STR_ONLY.issuperset(map(type, texts)):  # anything but strings: which error it is, in that order
        if any(isinstance(item, (int, list)) and not isinstance(item, bool) for item in texts):
            raise refuse("unsupported_input", "'input' holds token ids; this server takes text only (its "
                         "tokenizer must match the model): send strings (LangChain's OpenAIEmbeddings: "
                         "check_embedding_ctx_length=False).", param="input")
        if not all(isinstance(item, str) for item in texts):
            raise refuse("invalid_field", "'input' must be a string or a list of strings.", param="input")
    if len(texts) > ctx.settings.max_embedding_batch:
        raise refuse("batch_too_large", f"'input' has {len(texts)} items; the limit is "
                     f"{ctx.settings.max_embedding_batch}.", param="input")
    return checked_texts(ctx, texts, lambda: ["'input'"] if isinstance(value, str) else
                         [f"'input[{i}]'" for i in range(len(texts))], param="input")


def embeddings(ctx: RouteContext) -> Response:
    inputs.check_body_size(ctx.request, ctx.settings.max_body_bytes)
    with ctx.timings.stage("parse"):
        body = inputs.json_object(ctx.request)
        texts = _input_texts(ctx, body)
        encoding = body.get("encoding_format")
        encoding = "float" if encoding is None else encoding
        if encoding not in ENCODINGS:
            raise refuse("invalid_field", f"'encoding_format' must be one of {', '.join(ENCODINGS)}.",
                         param="encoding_format")
    task = ctx.task(body, TASK)
    dimensions = body.get("dimensions")
    if dimensions is not None and (isinstance(dimensions, bool) or dimensions != task.dimensions):
        raise refuse("unsupported_dimensions", f"Model {task.manifest.name!r} gives {task.dimensions}-"
                     f"dimensional vectors and cannot shorten them; leave 'dimensions' out or send "
                     f"{task.dimensions}.", param="dimensions")
    prediction = ctx.predict(task, texts, {})
    data = []
    for index, result in enumerate(prediction.results):
        vector = output_vector(result, normalize=True)
        encoded = base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii") if encoding == "base64" \
            else vector.tolist()
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    tokens = sum(result["tokens"] for result in prediction.results)
    remedy = "send fewer texts" if encoding == "base64" else "ask for encoding_format base64 (a third of the " \
        "size; OpenAI's Python client does by default) or send fewer texts"
    return sized_answer({"object": "list", "data": data, "model": task.manifest.name,
                         "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}, remedy)
