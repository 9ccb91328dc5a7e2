"""`osls package` offline, and the CloudFormation template it writes read the way CloudFormation would.

The framework needs Docker and STS for `provider.ecr.images`, so every run passes the documented switch
(`--param imageUri=<digest URI>` or FUNCTION_IMAGE_URI). `Osls` runs it with one HOME per test session: the
framework compiles its config schema into ~/.serverless on first use (12-15 s here), later runs take ~4 s. It
packages each named variant once; the tests share the result.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
OSLS = REPO_ROOT / "tools" / "node_modules" / ".bin" / "osls"
CFN_LINT = Path(sys.executable).parent / "cfn-lint"
TEMPLATE = "cloudformation-template-update-stack.json"
DIGEST_URI = "123456789012.dkr.ecr.{region}.amazonaws.com/lambda-tflite-serving@sha256:" + "ab" * 32
DEFAULT_IMAGE = ("--param", f"imageUri={DIGEST_URI.format(region='us-east-1')}")


@dataclass(frozen=True)
class Variant:
    options: tuple[str, ...]
    environment: dict = field(default_factory=dict)


JWT_ISSUER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_Example"
JWT_AUDIENCE = "example-app-client-id"
# The packagings the deploy tests share, by name. Each variant exercises several params, to keep runs few.
VARIANTS = {
    "default": Variant(("--stage", "ci", *DEFAULT_IMAGE)),
    "jwt": Variant(("--stage", "ci", *DEFAULT_IMAGE, "--param", "auth=jwt", "--param", f"jwtIssuer={JWT_ISSUER}",
                    "--param", f"jwtAudience={JWT_AUDIENCE}",
                    "--param", "corsOrigins=https://app.example.com,https://admin.example.com",
                    "--param", "alarms=true", "--param", "reservedConcurrency=none", "--param", "accessLogs=false")),
    # docs/threat-model.md's suggested settings for a public API.
    "public": Variant(("--stage", "ci", *DEFAULT_IMAGE, "--param", "auth=none", "--param", "corsOrigins=*",
                       "--param", "throttleRate=5", "--param", "throttleBurst=10",
                       "--param", "reservedConcurrency=2", "--param", "tableMaxUnits=100")),
    # Graviton: the function's architecture and the image it runs (test_deploy_config.py).
    "arm64": Variant(("--stage", "ci", *DEFAULT_IMAGE, "--param", "architecture=arm64")),
    # Everything issue 24 adds switched on (docs/deploy.md "Metrics"): dashboard, metric alarms, tracing.
    "observed": Variant(("--stage", "ci", *DEFAULT_IMAGE, "--param", "dashboard=true", "--param", "alarms=true",
                         "--param", "tracing=true", "--param", "metricsNamespace=Inference/ci")),
    # SnapStart with every event source on: each must invoke the `snapstart` alias (test_deploy_snapstart.py).
    "snapstart": Variant(("--stage", "ci", *DEFAULT_IMAGE, "--param", "snapStart=true", "--param", "warmup=true",
                          "--param", "uploadsBucket=example-uploads", "--param", "queue=true")),
    # SnapStart with bulk runs and tracing: the state machine and S3 Batch Operations invoke the alias too.
    "snapstart-bulk": Variant(("--stage", "ci", *DEFAULT_IMAGE, "--param", "snapStart=true", "--param", "batch=true",
                               "--param", "batchBucket=acme-photos", "--param", "tracing=true")),
    "prod": Variant(("--stage", "prod", "--region", "eu-west-1", "--param", "warmup=true",
                     "--param", "provisionedConcurrency=2"),
                    {"FUNCTION_IMAGE_URI": DIGEST_URI.format(region="eu-west-1")}),
}


@dataclass
class Packaged:
    directory: Path
    output: str  # what the framework printed

    @property
    def template_path(self) -> Path:
        return self.directory / TEMPLATE

    @property
    def template(self) -> dict:
        return json.loads(self.template_path.read_text())


class Osls:
    """The framework CLI with fake credentials, none of the caller's AWS settings, and a HOME of its own."""

    def __init__(self, root: Path):
        self.root = root
        self.home = root / "home"
        self.home.mkdir()
        self.variants: dict[str, Packaged] = {}

    def run(self, arguments: list[str], service_dir: Path = REPO_ROOT, environment: dict | None = None):
        assert OSLS.exists(), "tools/node_modules is missing: run `bash tools/install-test-deps.sh`"
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "FUNCTION_IMAGE_URI"}
        env.update({
            "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE", "AWS_SECRET_ACCESS_KEY": "fake-secret-for-offline-packaging",
            "HOME": str(self.home), "SLS_TELEMETRY_DISABLED": "1", "SLS_NOTIFICATIONS_MODE": "off",
        })
        env.update(environment or {})
        return subprocess.run([str(OSLS), *arguments], cwd=service_dir, env=env, capture_output=True, text=True,
                              timeout=180)

    def package(self, output: Path, *options: str, service_dir: Path = REPO_ROOT, environment: dict | None = None):
        """`osls package` into `output` (never the repo's .serverless/); returns the completed process."""
        return self.run(["package", "--package", str(output), *options], service_dir, environment)

    def variant(self, name: str) -> Packaged:
        """VARIANTS[name], packaged on first use."""
        if name not in self.variants:
            variant = VARIANTS[name]
            output = self.root / "variants" / name
            ran = self.package(output, *variant.options, environment=variant.environment)
            assert ran.returncode == 0, ran.stdout + ran.stderr
            self.variants[name] = Packaged(output, ran.stdout + ran.stderr)
        return self.variants[name]


def cfn_lint(*templates: Path) -> subprocess.CompletedProcess:
    # W3005 (a DependsOn that a Ref already implies) is how the framework writes every template.
    return subprocess.run([str(CFN_LINT), "-i", "W3005", "--", *map(str, templates)],
                          capture_output=True, text=True, timeout=300)


def resources_of_type(template: dict, kind: str) -> dict[str, dict]:
    return {name: r for name, r in template["Resources"].items() if r["Type"] == kind}


def only_named(mapping: dict) -> tuple[str, dict]:
    """The one (logical id, resource) of `mapping`; fails if there are more or none."""
    assert len(mapping) == 1, sorted(mapping)
    return next(iter(mapping.items()))


def only(mapping: dict) -> dict:
    return only_named(mapping)[1]


def as_list(value) -> list:
    return value if isinstance(value, list) else [value]
