"""The image's contents, run as Lambda runs them: RIE + awslambdaric + requirements.txt alone + the Dockerfile's layout.

If these pass, the Docker image holds everything the function needs: no package from the dev venv, no file the
Dockerfile does not copy. Every route gets a real API Gateway event (kit/event_shapes, adapted per route).
"""
from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest

from kit.dynamodb_server import FAKE_CREDENTIALS

from tests.support.dynamodb_fixtures import dynamodb_server, results_table  # noqa: F401 (fixtures)
from kit.events import http_api_event, load_event
from kit.lambda_runtime import RUNTIME_PYTHON, LambdaRuntime, lambda_environment, lay_out_task_root
from kit.photos import cat_jpeg, is_cat

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def json_event(path: str, payload: dict) -> dict:
    return http_api_event("POST", path, payload)


def converted_models() -> set[str]:
    return {p.parent.name for p in (REPO_ROOT / "models").glob("*/manifest.json")}


@pytest.fixture(scope="module")
def task_root(tmp_path_factory) -> Path:
    assert converted_models(), "models/ holds no converted model: run `make models` first"
    return lay_out_task_root(tmp_path_factory.mktemp("lambda") / "task")


@pytest.fixture(scope="module")
def runtime(task_root):
    # sqlite: the function's default local store, in the emulated environment's own /tmp.
    with LambdaRuntime(task_root, environment={"RESULTS_CACHE": "sqlite"}) as emulated:
        emulated.cold = emulated.invoke(http_api_event("GET", "/health"))
        yield emulated


def test_cold_start_reports_init_and_answers_health(runtime):
    cold = runtime.cold
    assert cold.status == 200, cold.payload
    assert cold.json_body()["status"] == "ok"
    assert cold.report.init_duration_ms is not None  # the REPORT line of a cold start carries Init Duration
    assert cold.init_phase_ms and cold.init_phase_ms > 0
    assert cold.report.memory_size_mb == 1769
    warm = runtime.invoke(http_api_event("GET", "/health"))
    assert warm.status == 200
    assert warm.report.init_duration_ms is None and warm.init_phase_ms is None
    assert warm.report.request_id != cold.report.request_id


def test_the_function_logs_one_json_line_per_request_to_the_runtime(runtime):
    invocation = runtime.invoke(http_api_event("GET", "/health"))
    records = [json.loads(line) for line in invocation.logs if line.startswith("{")]
    assert [(r["route"], r["status"]) for r in records if "route" in r] == [("/health", 200)], invocation.logs


def test_models_lists_every_model_the_image_holds(runtime, task_root):
    invocation = runtime.invoke(http_api_event("GET", "/models"))
    assert invocation.status == 200, invocation.payload
    served = {model["name"] for model in invocation.json_body()["models"]}
    assert served == {p.parent.name for p in (task_root / "models").glob("*/manifest.json")} == converted_models()


@pytest.fixture(scope="module")
def cat_by_json(runtime) -> dict:
    invocation = runtime.invoke(json_event("/classify", {"image": base64.b64encode(cat_jpeg()).decode("ascii")}))
    assert invocation.status == 200, invocation.payload
    return invocation.json_body()


def test_classify_a_base64_json_photo(cat_by_json):
    (prediction,) = cat_by_json["predictions"]
    assert is_cat(prediction["label"]), prediction
    assert len(prediction["top_k"]) == 5


def test_classify_a_raw_binary_body_gives_the_same_answer(runtime, cat_by_json):
    invocation = runtime.invoke(http_api_event("POST", "/classify", cat_jpeg(), "image/jpeg"))
    assert invocation.status == 200, invocation.payload
    (prediction,) = invocation.json_body()["predictions"]
    assert prediction["label"] == cat_by_json["predictions"][0]["label"]
    assert prediction["cached"] is True  # same decoded bytes: the JSON request's result is reused


def test_classify_the_recorded_binary_event(runtime):
    event = load_event("http_api_v2_post_image_binary.json")
    invocation = runtime.invoke(event)
    assert invocation.status == 200, invocation.payload
    body = invocation.json_body()
    assert body["model"] == event["queryStringParameters"]["model"]
    assert len(body["predictions"][0]["top_k"]) == int(event["queryStringParameters"]["top_k"])


def test_sentiment_tells_praise_from_complaint(runtime):
    texts = ["What a wonderful, delightful film. I loved every minute.",
             "Dreadful. A boring, painful waste of two hours; I hated it."]
    invocation = runtime.invoke(json_event("/sentiment", {"texts": texts}))
    assert invocation.status == 200, invocation.payload
    assert [p["label"] for p in invocation.json_body()["predictions"]] == ["positive", "negative"]
    again = runtime.invoke(json_event("/sentiment", {"text": texts[0]}))
    assert again.json_body()["predictions"][0]["cached"] is True


def test_tokenize_counts_tokens_of_non_ascii_text(runtime):
    invocation = runtime.invoke(json_event("/tokenize", {"text": "Crème brûlée — déjà vu"}))
    assert invocation.status == 200, invocation.payload
    (result,) = invocation.json_body()["results"]
    assert result["count"] == len(result["ids"]) == sum(result["attention_mask"]) > 0
    assert "—" in invocation.payload["body"]  # the em dash token as UTF-8, not a \u escape


def test_the_rest_api_event_format_works_too(runtime):
    event = load_event("rest_v1_post_json.json")
    invocation = runtime.invoke(event)
    assert invocation.status == 200, invocation.payload


def test_client_errors_are_answers_and_the_container_keeps_serving(runtime):
    broken = runtime.invoke(http_api_event("POST", "/classify", "{not json", "application/json"))
    assert broken.status == 400
    assert broken.json_body()["error"]["code"]
    unknown = runtime.invoke(http_api_event("GET", "/nowhere"))
    assert unknown.status == 404
    assert runtime.invoke(http_api_event("GET", "/health")).status == 200


def test_the_warmup_event_is_answered_without_a_server_error(runtime):
    # serverless.yml's optional schedule sends exactly this; it must never count as a function error.
    invocation = runtime.invoke({"warmup": True})
    assert isinstance(invocation.payload, dict) and invocation.payload.get("statusCode", 200) < 500
    assert runtime.invoke(http_api_event("GET", "/health")).status == 200


def test_as_deployed_two_containers_share_results_through_dynamodb(task_root, dynamodb_server, results_table):
    # serverless.yml's environment, run by requirements.txt alone: the standard-library DynamoDB client, no boto3
    # (the runtime-environment test below checks the venv holds exactly the lock).
    environment = {"RESULTS_CACHE": "dynamodb", "RESULTS_TABLE": results_table,
                   "AWS_ENDPOINT_URL_DYNAMODB": dynamodb_server.endpoint, **FAKE_CREDENTIALS}
    event = json_event("/sentiment", {"text": "An honest, moving and beautifully acted story."})
    with LambdaRuntime(task_root, environment=environment) as first_container:
        computed = first_container.invoke(event)
    with LambdaRuntime(task_root, environment=environment) as second_container:
        reused = second_container.invoke(event)
    assert computed.status == reused.status == 200, (computed.payload, reused.payload)
    assert reused.report.init_duration_ms is not None  # a cold container, so only the table can have the answer
    (fresh,), (cached,) = computed.json_body()["predictions"], reused.json_body()["predictions"]
    assert (fresh.pop("cached"), cached.pop("cached")) == (False, True)
    assert cached == fresh


def test_the_runtime_environment_has_requirements_txt_alone_and_no_tensorflow(task_root, tmp_path):
    probe = (
        "import importlib.util, json, sys\n"
        "import function.app\n"
        "print(json.dumps({'tf_loaded': sorted(m for m in sys.modules if m.split('.')[0] in "
        "('tensorflow', 'keras', 'tf_keras')),\n"
        "  'tf_installed': importlib.util.find_spec('tensorflow') is not None,\n"
        "  'prefix': sys.prefix}))\n"
    )
    environment = lambda_environment(task_root, tmp_path, 1769, 29, {"RESULTS_CACHE": "memory"})
    done = subprocess.run([str(RUNTIME_PYTHON), "-c", probe], cwd=task_root, env=environment,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    assert facts == {"tf_loaded": [], "tf_installed": False, "prefix": str(RUNTIME_PYTHON.parent.parent)}
    installed = subprocess.run([str(RUNTIME_PYTHON), "-m", "pip", "list", "--format=json",
                                "--disable-pip-version-check"],
                               capture_output=True, text=True, check=True, env=environment).stdout
    names = {p["name"].lower().replace("_", "-") for p in json.loads(installed)} - {"pip", "setuptools"}
    locked = {line.split("==")[0].strip().lower().replace("_", "-")
              for line in (REPO_ROOT / "requirements.txt").read_text().splitlines()
              if "==" in line and not line.lstrip().startswith("#")}
    base_image = {"awslambdaric", "simplejson", "snapshot-restore-py"}  # what the Lambda base image ships
    assert names == locked | base_image
