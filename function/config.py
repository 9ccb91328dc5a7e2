"""Every environment variable the function reads, in one place: their names (Env) and what they resolve to
(ServiceSettings, CacheSettings, MetricsSettings, TaskLimits).

Resolution order everywhere: explicit argument, then environment variable, then the default documented here.
"""
from __future__ import annotations

import os
from pathlib import Path

from function.records import named_tuple


class Env:
    """The names of the environment variables, as serverless.yml and the docs spell them (each value is its own
    name): `Env.MAX_BATCH` is the variable, `ServiceSettings.max_batch` its value in force."""

    # Where converted models live: one sub-directory per model, as `python -m convert` writes it.
    MODEL_DIR = "MODEL_DIR"
    # Or s3://bucket/prefix/ where `python -m convert publish` put them (default: MODEL_DIR; docs/deploy.md).
    MODEL_SOURCE = "MODEL_SOURCE"
    MODEL_REFRESH_SECONDS = "MODEL_REFRESH_SECONDS"  # how often to look for a newly published version; 0 = never
    MODEL_DOWNLOAD_DIR = "MODEL_DOWNLOAD_DIR"  # where published models are downloaded to
    # true: MODEL_DIR is looked at on every request, its models added, replaced or removed without a restart
    # (`python -m function.devserver` sets it; an image's models/ never changes).
    MODEL_DIR_WATCH = "MODEL_DIR_WATCH"

    # S3 uploads and SQS messages (docs/events.md): where their results go, and which uploads are classified.
    RESULTS_BUCKET = "RESULTS_BUCKET"  # SQS results; uploads' results go to the upload's own bucket unless set
    RESULTS_PREFIX = "RESULTS_PREFIX"
    UPLOADS_PREFIX = "UPLOADS_PREFIX"  # the same rules as the bucket's event notification, checked again here
    UPLOADS_SUFFIX = "UPLOADS_SUFFIX"

    # Result cache (docs/caching.md).
    RESULTS_CACHE = "RESULTS_CACHE"  # auto | dynamodb | sqlite | memory | off
    RESULTS_TABLE = "RESULTS_TABLE"  # DynamoDB table name; `auto` picks DynamoDB when set
    RESULTS_SQLITE_PATH = "RESULTS_SQLITE_PATH"
    CACHE_TTL_SECONDS = "CACHE_TTL_SECONDS"
    CACHE_MEMORY_ITEMS = "CACHE_MEMORY_ITEMS"

    # Serving (docs/api.md lists the limits).
    DEFAULT_IMAGE_MODEL = "DEFAULT_IMAGE_MODEL"  # model /classify uses when the request names none
    DEFAULT_TEXT_MODEL = "DEFAULT_TEXT_MODEL"  # model /classify-text and /tokenize use when the request names none
    DEFAULT_EMBEDDING_MODEL = "DEFAULT_EMBEDDING_MODEL"  # model /embed uses when the request names none
    MAX_BODY_BYTES = "MAX_BODY_BYTES"
    MAX_IMAGE_PIXELS = "MAX_IMAGE_PIXELS"
    MAX_BATCH = "MAX_BATCH"  # images per request
    MAX_TEXT_BATCH = "MAX_TEXT_BATCH"  # texts per request on /sentiment and /tokenize
    MAX_EMBEDDING_BATCH = "MAX_EMBEDDING_BATCH"  # texts per embedding request (OpenAI's clients send up to 2,048)
    MAX_TENSOR_BATCH = "MAX_TENSOR_BATCH"  # instances per TF Serving / Open Inference request
    MAX_BATCH_TOKENS = "MAX_BATCH_TOKENS"  # tokens per request, over every text a model must run
    MAX_TEXT_CHARS = "MAX_TEXT_CHARS"
    PRELOAD_MODELS = "PRELOAD_MODELS"  # none (load on first use) | all (load at init)
    # auto (one thread per vCPU for a big model, one for the others: function/model/threads.py) | a number for all
    MODEL_THREADS = "MODEL_THREADS"
    SERVE_PAGE = "SERVE_PAGE"  # true: GET / serves the page to try every model (`python -m function.devserver` sets it)
    LOG_LEVEL = "LOG_LEVEL"

    # Metrics in the request's own log line (CloudWatch Embedded Metric Format; docs/deploy.md "Metrics").
    METRICS_ENABLED = "METRICS_ENABLED"  # true | false
    METRICS_NAMESPACE = "METRICS_NAMESPACE"
    METRICS_LATENCY_TARGET_MS = "METRICS_LATENCY_TARGET_MS"  # over_latency_target counts requests slower than this

    # Set by Lambda (or by hand outside it) and read by function/aws/: the region, the execution role's
    # credentials, and the SDKs' standard endpoint overrides that point a client at a local server.
    LAMBDA_TASK_ROOT = "LAMBDA_TASK_ROOT"  # set only inside Lambda: where the code is (read-only)
    # "snap-start" when Lambda initialises a version to snapshot it (function/snapstart.py), else on-demand etc.
    AWS_LAMBDA_INITIALIZATION_TYPE = "AWS_LAMBDA_INITIALIZATION_TYPE"
    # MB: what buys vCPUs (function/model/threads.py)
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"
    AWS_REGION = "AWS_REGION"
    AWS_DEFAULT_REGION = "AWS_DEFAULT_REGION"
    AWS_ACCESS_KEY_ID = "AWS_ACCESS_KEY_ID"
    AWS_SECRET_ACCESS_KEY = "AWS_SECRET_ACCESS_KEY"
    AWS_SESSION_TOKEN = "AWS_SESSION_TOKEN"
    AWS_ENDPOINT_URL = "AWS_ENDPOINT_URL"
    AWS_ENDPOINT_URL_S3 = "AWS_ENDPOINT_URL_S3"
    AWS_ENDPOINT_URL_DYNAMODB = "AWS_ENDPOINT_URL_DYNAMODB"


# Lambda's only writable place. tempfile.gettempdir() finds the same (TMPDIR, else /tmp) but imports shutil, random,
# bz2 and lzma for it: 3.5 ms of the init (python -X importtime -c "import function.app").
TEMP_DIR = Path(os.environ.get("TMPDIR") or "/tmp")

# What the variables above resolve to when unset or empty.
REPO_ROOT = Path(__file__).resolve().parent.parent  # once: resolving is a stat per part of the path
DEFAULT_MODEL_DIR = REPO_ROOT / "models"
DEFAULT_MODEL_DOWNLOAD_DIR = TEMP_DIR / "lambda-tflite-models"
DEFAULT_RESULTS_PREFIX = "predictions/"
DEFAULT_CACHE_TTL_SECONDS = 7 * 24 * 3600
DEFAULT_CACHE_MEMORY_ITEMS = 1024
# Outside Lambda, one file per checkout (ignored by git): two checkouts or servers never share cached answers.
# In Lambda the code is read-only, so the SQLite backend writes under /tmp.
PROJECT_SQLITE_PATH = REPO_ROOT / ".cache" / "results.sqlite3"
LAMBDA_SQLITE_PATH = TEMP_DIR / "lambda-tflite-results.sqlite3"


def default_sqlite_path(environ: dict | None = None) -> Path:
    return LAMBDA_SQLITE_PATH if _env(Env.LAMBDA_TASK_ROOT, environ) else PROJECT_SQLITE_PATH


def _env(name: str, environ: dict | None = None) -> str | None:
    value = (environ if environ is not None else os.environ).get(name, "").strip()
    return value or None


def model_threads_setting(environ: dict | None = None) -> int | None:
    """MODEL_THREADS: None for auto (the default), else the threads every model's interpreter gets."""
    raw = (_env(Env.MODEL_THREADS, environ) or "auto").lower()
    if raw == "auto":
        return None
    if not raw.isdigit() or int(raw) <= 0:
        raise ValueError(f"{Env.MODEL_THREADS} must be auto or a positive number of threads, not {raw!r}")
    return int(raw)


@named_tuple
class CacheSettings:
    backend: str  # dynamodb | sqlite | memory | off  (never "auto": resolved here)
    table: str | None
    sqlite_path: Path
    ttl_seconds: int
    memory_items: int
    # The default file of a Lambda container, in the /tmp that goes with it: nothing outlives a crash to recover.
    sqlite_ephemeral: bool = False

    def describe(self) -> str:
        """Where results are kept, in words: the local server's first line says it."""
        if self.backend == "sqlite":
            return f"SQLite file {self.sqlite_path}"
        if self.backend == "dynamodb":
            return f"DynamoDB table {self.table}"
        return {"memory": "this process's memory", "off": "nowhere (RESULTS_CACHE=off)"}[self.backend]

    @classmethod
    def from_env(cls, environ: dict | None = None) -> "CacheSettings":
        table = _env(Env.RESULTS_TABLE, environ)
        backend = (_env(Env.RESULTS_CACHE, environ) or "auto").lower()
        if backend == "auto":
            backend = "dynamodb" if table else "sqlite"
        if backend not in {"dynamodb", "sqlite", "memory", "off"}:
            raise ValueError(f"{Env.RESULTS_CACHE} must be auto, dynamodb, sqlite, memory or off, not {backend!r}")
        if backend == "dynamodb" and not table:
            raise ValueError(f"{Env.RESULTS_CACHE}=dynamodb needs {Env.RESULTS_TABLE}")
        sqlite_path = _env(Env.RESULTS_SQLITE_PATH, environ)
        return cls(
            backend=backend,
            table=table,
            sqlite_path=Path(sqlite_path or default_sqlite_path(environ)),
            ttl_seconds=int(_env(Env.CACHE_TTL_SECONDS, environ) or DEFAULT_CACHE_TTL_SECONDS),
            memory_items=int(_env(Env.CACHE_MEMORY_ITEMS, environ) or DEFAULT_CACHE_MEMORY_ITEMS),
            sqlite_ephemeral=not sqlite_path and bool(_env(Env.LAMBDA_TASK_ROOT, environ)),
        )


# Metrics in the request's own log line (CloudWatch Embedded Metric Format; docs/deploy.md "Metrics").
DEFAULT_METRICS_NAMESPACE = "lambda-tflite-serving"
DEFAULT_METRICS_LATENCY_TARGET_MS = 2000.0


@named_tuple
class MetricsSettings:
    enabled: bool = True
    namespace: str = DEFAULT_METRICS_NAMESPACE
    latency_target_ms: float = DEFAULT_METRICS_LATENCY_TARGET_MS

    @classmethod
    def from_env(cls, environ: dict | None = None) -> "MetricsSettings":
        enabled = (_env(Env.METRICS_ENABLED, environ) or "true").lower()
        if enabled not in {"true", "false"}:
            raise ValueError(f"{Env.METRICS_ENABLED} must be true or false, not {enabled!r}")
        namespace = _env(Env.METRICS_NAMESPACE, environ) or DEFAULT_METRICS_NAMESPACE
        # CloudWatch's own rule for a namespace: 1-255 ASCII characters, never starting with "AWS/".
        if len(namespace) > 255 or not namespace.isascii() or namespace.startswith("AWS/"):
            raise ValueError(f"{Env.METRICS_NAMESPACE} must be 1-255 ASCII characters not starting with AWS/, "
                             f"not {namespace!r}")
        raw_target = _env(Env.METRICS_LATENCY_TARGET_MS, environ)
        try:
            target = float(raw_target) if raw_target else DEFAULT_METRICS_LATENCY_TARGET_MS
        except ValueError:
            target = -1.0
        if not 0 < target < float("inf"):
            raise ValueError(f"{Env.METRICS_LATENCY_TARGET_MS} must be a positive number of milliseconds, "
                             f"not {raw_target!r}")
        return cls(enabled == "true", namespace, target)


# Lambda's synchronous payload limit: a bigger request never reaches the function in AWS anyway.
DEFAULT_MAX_BODY_BYTES = 6 * 1024 * 1024
# 40 MP covers phone and camera photos; a bigger header is refused before a single pixel is decoded.
DEFAULT_MAX_IMAGE_PIXELS = 40_000_000
DEFAULT_MAX_BATCH = 16
DEFAULT_MAX_TEXT_BATCH = 128
# OpenAI's own limit per embeddings request: LangChain's OpenAIEmbeddings sends 1,000 at a time. MAX_BATCH_TOKENS and
# Lambda's 6 MB answer bound such a batch in practice (docs/api.md, "Limits").
DEFAULT_MAX_EMBEDDING_BATCH = 2048
# Feature rows are tiny: a client scores a page of them at once. The body limit bounds big tensors long before this
# (one 224x224x3 float image in JSON is ~2-3 MB).
DEFAULT_MAX_TENSOR_BATCH = 256
# 2,048 texts of 16 tokens (or 128 of 256): MiniLM computes 6,000-9,000 tokens a second on one core, so a request
# asks for 4-6 s at most, inside the function's 15 s timeout with room for a cold start.
DEFAULT_MAX_BATCH_TOKENS = 32_768
DEFAULT_MAX_TEXT_CHARS = 10_000
# The limits a request is held to, by environment variable; each is the ServiceSettings field of the same name in
# lower case. GET /openapi.json publishes them with their values in force.
LIMIT_VARIABLES = (Env.MAX_BODY_BYTES, Env.MAX_IMAGE_PIXELS, Env.MAX_BATCH, Env.MAX_TEXT_BATCH, Env.MAX_EMBEDDING_BATCH,
                   Env.MAX_TENSOR_BATCH, Env.MAX_BATCH_TOKENS, Env.MAX_TEXT_CHARS)
# Lambda's synchronous answer limit (6 MB, the proxy result's JSON included): an answer over it never reaches the
# client (API Gateway reports a 502), so an embedding route refuses it with a 413 that says how to stay under it.
# The room left is for the result's headers and the quotes that JSON escapes in the body.
LAMBDA_ANSWER_BYTES = 6 * 1024 * 1024 - 16 * 1024


@named_tuple
class TaskLimits:
    """The bounds on what one request may ask of a model (docs/api.md, "Limits"): what a task is given."""

    max_image_pixels: int = DEFAULT_MAX_IMAGE_PIXELS
    max_batch_tokens: int = DEFAULT_MAX_BATCH_TOKENS


@named_tuple
class ServiceSettings:
    model_dir: Path
    model_source: str | None  # None: model_dir
    model_refresh_seconds: int
    model_download_dir: Path
    results_bucket: str | None
    results_prefix: str
    uploads_prefix: str
    uploads_suffix: str
    default_image_model: str
    default_text_model: str
    default_embedding_model: str
    max_body_bytes: int
    max_image_pixels: int
    max_batch: int
    max_text_batch: int
    max_embedding_batch: int
    max_tensor_batch: int
    max_batch_tokens: int
    max_text_chars: int
    preload_models: bool
    log_level: str
    serve_page: bool = False
    model_dir_watch: bool = False
    metrics: MetricsSettings = MetricsSettings()

    def limit(self, variable: str) -> int:
        """The value in force of one of LIMIT_VARIABLES, named by its environment variable."""
        return getattr(self, variable.lower())

    def task_limits(self) -> TaskLimits:
        return TaskLimits(self.max_image_pixels, self.max_batch_tokens)

    def default_model(self, kind: str) -> tuple[str, str]:
        """(the model a route uses when the request names none, the variable that sets it), for the `kind` of
        default its task class names (function.tasks.default_kind: "image", "text" or "embedding")."""
        return getattr(self, f"default_{kind}_model"), getattr(Env, f"DEFAULT_{kind.upper()}_MODEL")

    @classmethod
    def from_env(cls, environ: dict | None = None, **overrides) -> "ServiceSettings":
        def number(name: str, default: int) -> int:
            raw = _env(name, environ)
            if raw is None:
                return default
            if not raw.isdigit() or int(raw) <= 0:
                raise ValueError(f"{name} must be a positive integer, not {raw!r}")
            return int(raw)

        def seconds(name: str) -> int:
            raw = _env(name, environ) or "0"
            if not raw.isdigit():
                raise ValueError(f"{name} must be a whole number of seconds (0 = off), not {raw!r}")
            return int(raw)

        results_prefix = _env(Env.RESULTS_PREFIX, environ) or DEFAULT_RESULTS_PREFIX
        uploads_prefix = _env(Env.UPLOADS_PREFIX, environ) or ""
        if uploads_prefix.startswith(results_prefix):
            raise ValueError(f"{Env.UPLOADS_PREFIX} {uploads_prefix!r} is inside {Env.RESULTS_PREFIX} "
                             f"{results_prefix!r}: the function never classifies its own results, so it would "
                             "classify nothing")
        model_threads_setting(environ)  # read again by each interpreter's maker: a wrong value stops the init here
        preload = (_env(Env.PRELOAD_MODELS, environ) or "none").lower()
        if preload not in {"none", "all"}:
            raise ValueError(f"{Env.PRELOAD_MODELS} must be none or all, not {preload!r}")
        def flag(name: str) -> bool:
            raw = (_env(name, environ) or "false").lower()
            if raw not in {"true", "false"}:
                raise ValueError(f"{name} must be true or false, not {raw!r}")
            return raw == "true"

        values = dict(
            model_dir=Path(_env(Env.MODEL_DIR, environ) or DEFAULT_MODEL_DIR),
            model_source=_env(Env.MODEL_SOURCE, environ),
            model_refresh_seconds=seconds(Env.MODEL_REFRESH_SECONDS),
            model_download_dir=Path(_env(Env.MODEL_DOWNLOAD_DIR, environ) or DEFAULT_MODEL_DOWNLOAD_DIR),
            results_bucket=_env(Env.RESULTS_BUCKET, environ),
            results_prefix=results_prefix,
            uploads_prefix=uploads_prefix,
            uploads_suffix=_env(Env.UPLOADS_SUFFIX, environ) or "",
            default_image_model=_env(Env.DEFAULT_IMAGE_MODEL, environ) or "efficientnet_lite0",
            default_text_model=_env(Env.DEFAULT_TEXT_MODEL, environ) or "sentiment",
            default_embedding_model=_env(Env.DEFAULT_EMBEDDING_MODEL, environ) or "minilm",
            max_body_bytes=number(Env.MAX_BODY_BYTES, DEFAULT_MAX_BODY_BYTES),
            max_image_pixels=number(Env.MAX_IMAGE_PIXELS, DEFAULT_MAX_IMAGE_PIXELS),
            max_batch=number(Env.MAX_BATCH, DEFAULT_MAX_BATCH),
            max_text_batch=number(Env.MAX_TEXT_BATCH, DEFAULT_MAX_TEXT_BATCH),
            max_embedding_batch=number(Env.MAX_EMBEDDING_BATCH, DEFAULT_MAX_EMBEDDING_BATCH),
            max_tensor_batch=number(Env.MAX_TENSOR_BATCH, DEFAULT_MAX_TENSOR_BATCH),
            max_batch_tokens=number(Env.MAX_BATCH_TOKENS, DEFAULT_MAX_BATCH_TOKENS),
            max_text_chars=number(Env.MAX_TEXT_CHARS, DEFAULT_MAX_TEXT_CHARS),
            preload_models=preload == "all",
            log_level=(_env(Env.LOG_LEVEL, environ) or "INFO").upper(),
            serve_page=flag(Env.SERVE_PAGE),
            model_dir_watch=flag(Env.MODEL_DIR_WATCH),
            metrics=MetricsSettings.from_env(environ),
        )
        values.update(overrides)
        return cls(**values)
