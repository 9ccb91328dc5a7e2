"""The descriptions of the paths Hugging Face Text Embeddings Inference shares with this API (function/routes/tei.py):
POST /embed and POST /tokenize take either body ("inputs" makes it TEI's) and answer in the shape of the one sent;
GET /info is TEI's alone. Each TEI error is {"error", "error_type"} at TEI's status."""
from __future__ import annotations

from function.config import Env
from function.openapi import api_routes, spec
from function.openapi.operation import Deployment, Operation
from function.routes import tei

TAGS = ("embeddings", "text-embeddings-inference")
ERROR = spec.obj({"error": spec.STRING, "error_type": {"enum": [tei.VALIDATION, tei.EMPTY, tei.UNHEALTHY]}})
# status -> when TEI's body gets it (function/routes/tei.py tei_error).
ERRORS = {
    "400": "TEI's body: `inputs` is an empty list (error_type Empty)",
    "404": "TEI's body: \"model\" names a model not served here (error_type Validation)",
    "422": "TEI's body: anything else it refuses, as TEI does (error_type Validation): a field of the wrong type, "
           "an empty text, a text over max_length tokens without \"truncate\": true, too many texts or tokens, "
           "`dimensions` over the model's, a prompt_name, truncation_direction left",
    "503": "TEI's body: the model cannot be loaded now (error_type Unhealthy)",
}
DIALECT_ERRORS = {status: (description, ERROR) for status, description in ERRORS.items()}


def _inputs(deployment: Deployment) -> dict:
    settings = deployment.settings
    text = {"type": "string", "minLength": 1, "maxLength": settings.max_text_chars}
    return {"anyOf": [text, spec.array(text, minItems=1, maxItems=settings.max_embedding_batch)],
            "description": "A text or a list of texts (token ids are refused: the model's own tokenizer makes them)."}


def _optional(schema: dict, description: str) -> dict:
    return {"anyOf": [schema, {"type": "null"}], "description": description}


def describe_embed(deployment: Deployment) -> Operation:
    ours = api_routes.describe_embed(deployment)
    body = {"type": "object", "required": ["inputs"], "properties": {
        "inputs": _inputs(deployment),
        "normalize": _optional(spec.BOOLEAN, "L2-normalise each vector (after `dimensions` cuts it); default true."),
        "truncate": _optional(spec.BOOLEAN, "Embed the first max_length tokens of a longer text; default false: "
                              "such a text is refused (422)."),
        "truncation_direction": _optional({"enum": list(tei.DIRECTIONS)}, "Right only: the end of a text is cut."),
        "prompt_name": {"type": "null", "description": "No prompts are configured: a name is refused (422)."},
        "dimensions": _optional({"type": "integer", "minimum": 1}, "Keep the first this many values of each "
                                "vector (at most the model's), then normalise."),
        "model": spec.model_field(deployment, tei.TASK),
    }, "description": "TEI's EmbedRequest; fields TEI does not know are ignored, as TEI ignores them."}
    vectors = spec.array(spec.array({"type": "number"}, minItems=1), minItems=1,
                         description="TEI's answer: one vector per input, in order.")
    return spec.Operation(
        summary=ours.summary,
        description=f"{ours.description} Also Hugging Face Text Embeddings Inference's POST /embed: a body with "
                    "\"inputs\" is TEI's and gets TEI's answer, a list of vectors (`huggingface_hub`'s "
                    "InferenceClient(\".../embed\").feature_extraction reads it).",
        request={"application/json": {"anyOf": [ours.request["application/json"], body]}},
        response={"anyOf": [ours.response, vectors]},
        errors=ours.errors, limits=ours.limits, dialect_errors=DIALECT_ERRORS, tags=TAGS,
    )


def describe_tokenize(deployment: Deployment) -> Operation:
    ours = api_routes.describe_tokenize(deployment)
    body = {"type": "object", "required": ["inputs"], "properties": {
        "inputs": _inputs(deployment),
        "add_special_tokens": _optional(spec.BOOLEAN, "Include the model's special tokens; default true."),
        "prompt_name": {"type": "null", "description": "No prompts are configured: a name is refused (422)."},
        "model": spec.model_field(deployment, tei.TASK),
    }, "description": "TEI's TokenizeRequest; fields TEI does not know are ignored."}
    offset = _optional(spec.COUNT, "A UTF-8 byte offset into the text; null for a special token.")
    token = spec.obj({"id": spec.COUNT, "text": spec.STRING, "special": spec.BOOLEAN, "start": offset,
                      "stop": offset})
    return spec.Operation(
        summary=ours.summary,
        description=f"{ours.description} Also Hugging Face Text Embeddings Inference's POST /tokenize: a body with "
                    "\"inputs\" gets TEI's answer, a list of tokens per text (the default embedding model's "
                    "tokenizer unless \"model\" names another).",
        request={"application/json": {"anyOf": [ours.request["application/json"], body]}},
        response={"anyOf": [ours.response, spec.array(spec.array(token), minItems=1)]},
        errors=ours.errors, limits=(*ours.limits, Env.MAX_EMBEDDING_BATCH), dialect_errors=DIALECT_ERRORS,
        tags=(*ours.tags, "text-embeddings-inference"),
    )


def describe_info(deployment: Deployment) -> Operation:
    count = spec.COUNT
    info = spec.obj({
        "model_id": spec.STRING, "model_sha": spec.MODEL_VERSION,
        "model_dtype": {**spec.STRING, "description": "The model's quantization, as `convert` made it."},
        "model_type": spec.obj({"embedding": spec.obj({"pooling": spec.STRING})}),
        "served_model_name": spec.STRING, "max_concurrent_requests": count, "max_input_length": count,
        "max_batch_tokens": {**count, "description": "MAX_BATCH_TOKENS"}, "max_batch_requests": {"type": "null"},
        "max_client_batch_size": {**count, "description": "MAX_EMBEDDING_BATCH"},
        "auto_truncate": {"const": False}, "tokenization_workers": count, "version": spec.STRING,
        "sha": {"type": "null"}, "docker_label": {"type": "null"},
    })
    return spec.Operation(
        summary="TEI: the embedding model's info",
        description="Hugging Face Text Embeddings Inference's GET /info, for the default embedding model "
                    f"({Env.DEFAULT_EMBEDDING_MODEL}): its name, version, input length and this server's limits.",
        response=info,
        dialect_errors={"404": ("TEI's body: the default embedding model is not served here (error_type "
                                "Validation)", ERROR), "503": DIALECT_ERRORS["503"]},
        tags=TAGS,
    )


DESCRIPTIONS = {"embed:embed": describe_embed, "tei:tokenize": describe_tokenize, "tei:info": describe_info}
