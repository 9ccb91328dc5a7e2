"""The function imports and serves with TensorFlow unimportable, and leaves boto3 alone unless DynamoDB is used."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support.function_fixtures import REPO, demo_models  # noqa: F401

# Runs in a fresh interpreter: a meta-path finder that refuses the heavy packages, then one real /classify.
PROBE = r"""
import base64, io, json, sys

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("tensorflow", "keras", "tf_keras", "boto3", "botocore"):
            raise ImportError(f"{name} must not be imported by the function")
        return None

sys.meta_path.insert(0, Refuse())
sys.modules["tensorflow"] = None

from PIL import Image
from function.app import handler

buffer = io.BytesIO()
Image.new("RGB", (64, 48), (200, 120, 40)).save(buffer, "JPEG")
event = {"version": "2.0", "routeKey": "$default", "rawPath": "/classify",
         "headers": {"content-type": "image/jpeg"},
         "requestContext": {"http": {"method": "POST", "path": "/classify"}, "requestId": "probe",
                            "stage": "$default"},
         "body": base64.b64encode(buffer.getvalue()).decode(), "isBase64Encoded": True}
result = handler(event, None)
text = {"version": "2.0", "routeKey": "$default", "rawPath": "/sentiment",
        "headers": {"content-type": "application/json"},
        "requestContext": {"http": {"method": "POST", "path": "/sentiment"}, "requestId": "probe2",
                           "stage": "$default"},
        "body": json.dumps({"text": "fine"}), "isBase64Encoded": False}
result2 = handler(text, None)
heavy = sorted(m for m, module in sys.modules.items()
               if module is not None and m.split(".")[0] in ("tensorflow", "keras", "boto3", "botocore"))
print("RESULT " + json.dumps({"status": [result["statusCode"], result2["statusCode"]], "heavy": heavy}))
"""


def test_serves_without_tensorflow_or_boto3(demo_models, tmp_path):  # noqa: F811
    env = {**os.environ, "MODEL_DIR": str(demo_models), "RESULTS_CACHE": "sqlite",
           "RESULTS_SQLITE_PATH": str(tmp_path / "results.db"), "PYTHONPATH": str(REPO)}
    env.pop("RESULTS_TABLE", None)
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    assert json.loads(line[len("RESULT "):]) == {"status": [200, 200], "heavy": []}
    # The request log lines are JSON and never carry the input.
    logs = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [entry["route"] for entry in logs] == ["/classify", "/sentiment"]
    assert logs[0]["cold_start"] is True and logs[1]["cold_start"] is False
    assert {"decode", "preprocess", "invoke", "postprocess"} <= set(logs[0]["timings_ms"])
    assert "fine" not in done.stdout.replace('"fine"', "")  # the text itself never reaches the log
