"""The descriptions of OpenAI's routes: POST /v1/embeddings (function/router.py OPENAI) and GET /v1/models (under
TF Serving's /v1, function/router.py TF_SERVING)."""
from __future__ import annotations

from function.config import Env
from function.openapi import spec
from function.openapi.operation import Deployment, Operation
from function.routes.openai_embeddings import ENCODINGS, TASK


def describe_embeddings(deployment: Deployment) -> Operation:
    settings = deployment.settings
    text = {"type": "string", "minLength": 1, "maxLength": settings.max_text_chars}
    body = {"type": "object", "required": ["input"], "properties": {
        "input": {"oneOf": [text, spec.array(text, minItems=1, maxItems=settings.max_embedding_batch)],
                  "description": "A text or a list of texts (token ids are refused: the tokenizer must match)."},
        "model": spec.model_field(deployment, TASK),
        "encoding_format": {"enum": [*ENCODINGS, None], "default": "float"},
        "dimensions": {"type": ["integer", "null"], "description": "Only the model's own number of dimensions."},
        "user": {"description": "Accepted and ignored (OpenAI's clients may send it)."},
    }}
    base64 = {**spec.STRING, "contentEncoding": "base64",
              "description": "Little-endian float32 values (encoding_format base64)."}
    item = spec.obj({"object": {"const": "embedding"}, "index": spec.COUNT,
                     "embedding": {"oneOf": [spec.array({"type": "number"}, minItems=1), base64]}})
    usage = spec.obj({"prompt_tokens": spec.COUNT, "total_tokens": spec.COUNT})
    return spec.Operation(
        summary="OpenAI-compatible embeddings",
        description="OpenAI's embeddings API over the text_embedding task: OpenAI's clients work unchanged with "
                    "their base URL pointed here. Vectors are L2-normalised. Errors take OpenAI's shape.",
        request={"application/json": body},
        response=spec.obj({"object": {"const": "list"}, "data": spec.array(item, minItems=1), "model": spec.STRING,
                           "usage": usage}),
        errors=(*spec.JSON_BODY, "missing_field", "invalid_field", "unsupported_input", "batch_too_large",
                "empty_text", "text_too_large", "unsupported_dimensions", "too_many_tokens", "answer_too_large",
                *spec.MODEL_CHOICE),
        limits=(Env.MAX_BODY_BYTES, Env.MAX_EMBEDDING_BATCH, Env.MAX_TEXT_CHARS, Env.MAX_BATCH_TOKENS),
        tags=("embeddings",),
    )


# OpenAI's Model object, as GET /v1/models lists it and GET /v1/models/{name} carries it.
MODEL = {"id": spec.STRING, "object": {"const": "model"},
         "created": {**spec.COUNT, "description": "When the model was converted, in Unix seconds (0: unknown)."},
         "owned_by": spec.STRING}


def describe_list_models(deployment: Deployment) -> Operation:
    return spec.Operation(
        summary="OpenAI: list models",
        description="OpenAI's model list: every model served here, by name (GET /v1/models/{name} retrieves one, "
                    "in the same answer as TF Serving's model status). Loads nothing.",
        response=spec.obj({"object": {"const": "list"}, "data": spec.array(spec.obj(MODEL))}),
        tags=("embeddings",),
    )


DESCRIPTIONS = {"openai_embeddings:embeddings": describe_embeddings, "openai_models:list_models": describe_list_models}
