"""What the init imports and defines is what every cold start pays before its first answer (bench section 17).

Two things it once paid for and no request on local models needs: the HTTP client stack (http.client, ssl, email,
socket: 12 ms, only the S3 and DynamoDB clients use it) and tempfile (shutil, random, bz2, lzma: 3.5 ms, for a
directory name). And dataclasses: on Python 3.12 defining one costs 0.3-1.2 ms (its methods are generated and
exec'd one by one), and the init defined twenty, 11 ms of the 50 ms `import function.app` took beyond numpy and
LiteRT. Records on the init path and on a first request's are NamedTuples, or classes with __slots__ when they
change; the AWS clients, the bulk and S3 event adapters and the OpenAPI document keep theirs (they wait on the
network anyway).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support.function_fixtures import REPO, demo_models  # noqa: F401

# Packages no request on the image's own models needs: loading one at init is a cost every cold start pays.
NOT_AT_INIT = ("http.client", "ssl", "email", "socket", "tempfile", "shutil", "random", "bz2", "lzma", "dataclasses")

PROBE = r"""
import json, sys

loaded_before = set(sys.modules)
import function.app

loaded = sorted(set(sys.modules) - loaded_before)
tabular = function.app.SERVICE.registry.task("tabular").manifest
row = {spec.name: [0] * spec.shape[1] if len(spec.shape) > 1 else 0 for spec in tabular.inputs}
for path, body in [("/sentiment", {"text": "fine"}), ("/v1/models/tabular:predict", {"instances": [row]}),
                   ("/v2/models/tabular/infer", {"inputs": [{"name": name, "shape": [1, *([len(value)] if isinstance(
                       value, list) else [])], "datatype": "FP32" if isinstance(value, list) else "INT32",
                       "data": value if isinstance(value, list) else [value]} for name, value in row.items()]})]:
    event = {"version": "2.0", "rawPath": path, "headers": {"content-type": "application/json"},
             "requestContext": {"http": {"method": "POST", "path": path}, "requestId": path},
             "body": json.dumps(body), "isBase64Encoded": False}
    assert function.app.handler(event, None)["statusCode"] == 200, (path, function.app.handler(event, None))
defined = sorted(f"{name}.{attribute}" for name, module in list(sys.modules.items()) if name.startswith("function")
                 for attribute, value in vars(module).items()
                 if isinstance(value, type) and value.__module__ == name and "__dataclass_fields__" in vars(value))
print("RESULT " + json.dumps({"loaded": loaded, "dataclasses": defined}))
"""

def _init_facts(demo_models, tmp_path) -> dict:  # noqa: F811
    env = {**os.environ, "MODEL_DIR": str(demo_models), "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    for name in ("RESULTS_TABLE", "RESULTS_CACHE", "MODEL_SOURCE", "RESULTS_BUCKET"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def test_the_init_loads_no_package_a_request_on_local_models_does_not_need(demo_models, tmp_path):  # noqa: F811
    loaded = _init_facts(demo_models, tmp_path)["loaded"]
    assert "function.service" in loaded  # the probe did import the function
    assert [name for name in loaded if name.split(".")[0] in NOT_AT_INIT or name in NOT_AT_INIT] == []


def test_neither_the_init_nor_a_first_request_defines_a_dataclass(demo_models, tmp_path):  # noqa: F811
    assert _init_facts(demo_models, tmp_path)["dataclasses"] == []
