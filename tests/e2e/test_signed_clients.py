"""The documented clients of the signed (auth=iam) API build requests that API Gateway's IAM authorization accepts.

They run, as written in docs/deploy.md and README.md, against tests/support/sigv4_endpoint.py: a local endpoint
that recomputes every SigV4 signature for `execute-api` from AWS's specification with the fake credentials
below, and refuses what API Gateway would refuse.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from botocore.credentials import Credentials

from kit.script_module import load_script
from tests.support.sigv4_endpoint import SignedEndpoint

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = REPO_ROOT / "examples" / "signed_request.py"
REGION = "us-east-1"  # the region the documented commands name
LONG_TERM = ("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
TEMPORARY = ("ASIAIOSFODNN7EXAMPLE", "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY", "FwoGZXIvYXdzEXAMPLE+session/token=")
SECRETS = {LONG_TERM[0]: LONG_TERM[1], TEMPORARY[0]: TEMPORARY[1]}
SESSION_TOKENS = {TEMPORARY[0]: TEMPORARY[2]}
CURL = shutil.which("curl")


def load_example():
    return load_script(EXAMPLE)


@pytest.fixture
def endpoint():
    with SignedEndpoint(SECRETS, REGION, SESSION_TOKENS) as running:
        yield running


def shell_environment(credentials: tuple[str, ...]) -> dict:
    """Only the given credentials: no AWS settings of this machine, no config files, the test venv's python first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ACCESS_KEY_ID=credentials[0], AWS_SECRET_ACCESS_KEY=credentials[1], AWS_REGION=REGION,
               AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull, AWS_EC2_METADATA_DISABLED="true",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    if len(credentials) == 3:
        env["AWS_SESSION_TOKEN"] = credentials[2]
    return env


def bash_block_after(markdown: Path, heading: str) -> str:
    """The first ```bash block after `heading` in a markdown file."""
    text = markdown.read_text()
    start = text.index(heading)
    return re.search(r"```bash\n(.*?)```", text[start:], re.S).group(1)


def run_bash(script: str, url: str, credentials: tuple[str, ...], workdir: Path) -> subprocess.CompletedProcess:
    # The documented URL points at a deployed stack; here it is the local endpoint.
    script = re.sub(r"^URL=\S+", f"URL={url}", script, flags=re.M)
    (workdir / "cat.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a photo: the endpoint checks signatures only")
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=workdir, env=shell_environment(credentials),
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(CURL is None, reason="needs curl")
@pytest.mark.parametrize("credentials", [LONG_TERM, TEMPORARY], ids=["access-key", "session-token"])
def test_the_documented_calls_are_signed_the_way_api_gateway_checks(endpoint, credentials, tmp_path):
    block = bash_block_after(REPO_ROOT / "docs" / "deploy.md", "## Call it")
    # The examples run from the repo root; here from a directory holding cat.jpg.
    block = block.replace("python examples/", f"python {REPO_ROOT}/examples/")
    done = run_bash(block, endpoint.url, credentials, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    calls = len(re.findall(r"^(sigcurl|python) ", block, re.M))
    assert calls >= 6 and len(endpoint.verdicts) == calls, (calls, endpoint.verdicts)
    assert [v.error for v in endpoint.verdicts] == [""] * calls, done.stdout
    assert {v.access_key for v in endpoint.verdicts} == {credentials[0]}
    assert {v.path for v in endpoint.verdicts} >= {"/health", "/models", "/classify", "/classify-text", "/tokenize"}
    if len(credentials) == 3:
        assert all("x-amz-security-token" in v.signed_headers for v in endpoint.verdicts)


@pytest.mark.skipif(CURL is None, reason="needs curl")
def test_the_readme_calls_are_signed(endpoint, tmp_path):
    block = bash_block_after(REPO_ROOT / "README.md", "## Deploy")
    commands = [c for c in re.split(r"(?<!\\)\n", block) if c.startswith(("curl ", "python "))]
    assert sum(c.startswith("curl ") for c in commands) >= 2 and all(
        "--aws-sigv4" in c for c in commands if c.startswith("curl ")), commands
    script = "\n".join(commands).replace("python examples/", f"python {REPO_ROOT}/examples/")
    done = run_bash("URL=set-below\n" + script, endpoint.url, LONG_TERM, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(endpoint.verdicts) == len(commands)
    assert all(v.valid for v in endpoint.verdicts), [v.error for v in endpoint.verdicts]


def test_the_python_client_signs_for_execute_api_and_reads_the_region_from_the_url(endpoint, tmp_path):
    example = load_example()
    assert example.region_of("https://abc123xyz.execute-api.ap-south-1.amazonaws.com/models") == "ap-south-1"
    assert example.region_of("http://127.0.0.1:8080/models") is None
    body = tmp_path / "photo.png"
    body.write_bytes(bytes(range(256)) * 8)
    done = subprocess.run([sys.executable, str(EXAMPLE), "POST", f"{endpoint.url}/classify?top_k=2&model=digits",
                           "--data", f"@{body}", "--content-type", "image/png", "--region", REGION],
                          env=shell_environment(TEMPORARY), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    (verdict,) = endpoint.verdicts
    assert verdict.valid and verdict.body == body.read_bytes()
    assert {"host", "x-amz-date", "x-amz-security-token", "content-type"} <= set(verdict.signed_headers)


def test_the_endpoint_refuses_what_api_gateway_refuses(endpoint):
    example = load_example()
    credentials = Credentials(*LONG_TERM)
    url = f"{endpoint.url}/sentiment"

    def send(request) -> int:
        with requests.Session() as http:
            return http.send(request, timeout=30).status_code

    good = example.signed_request("POST", url, b'{"text": "fine"}', "application/json", credentials, REGION)
    assert send(good) == 200
    tampered = example.signed_request("POST", url, b'{"text": "fine"}', "application/json", credentials, REGION)
    tampered.prepare_body(b'{"text": "changed"}', None)
    assert send(tampered) == 403
    other_region = example.signed_request("POST", url, b"{}", "application/json", credentials, "eu-west-1")
    assert send(other_region) == 403
    wrong_secret = example.signed_request("POST", url, b"{}", "application/json", Credentials(LONG_TERM[0], "x"),
                                          REGION)
    assert send(wrong_secret) == 403
    unsigned = requests.Request("POST", url, data=b"{}").prepare()
    assert send(unsigned) == 403
    assert [v.valid for v in endpoint.verdicts] == [True, False, False, False, False]
    assert "does not match" in endpoint.verdicts[1].error and "eu-west-1" in endpoint.verdicts[2].error


def test_the_python_client_exits_1_on_a_refused_request(endpoint):
    env = shell_environment(("AKIAUNKNOWNEXAMPLE", "secret"))
    done = subprocess.run([sys.executable, str(EXAMPLE), "GET", f"{endpoint.url}/models", "--region", REGION],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "invalid" in done.stdout
