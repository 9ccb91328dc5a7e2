"""The bulk-inference state machine's definition (deploy/bulk-inference.asl.json) as the tests read it: the file,
its placeholders filled in as CloudFormation's DefinitionSubstitutions would, and npm asl-validator run on it."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFINITION = REPO_ROOT / "deploy" / "bulk-inference.asl.json"
ASL_VALIDATOR = REPO_ROOT / "tools" / "node_modules" / ".bin" / "asl-validator"
PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_]+)\}")
# What serverless.yml substitutes, with values a deployed stack could have.
EXAMPLE_SUBSTITUTIONS = {
    "FunctionArn": "arn:aws:lambda:us-east-1:123456789012:function:lambda-tflite-serving-ci-api",
    "InputBucket": "acme-photos", "InputPrefix": "archive/",
    "ResultsBucket": "acme-results", "ResultsPrefix": "predictions/",
    "ReportsPrefix": "bulk-reports/step-functions",
    "BatchSize": "10", "MaxConcurrency": "100", "ToleratedFailurePercentage": "5",
}


def definition_text() -> str:
    return DEFINITION.read_text(encoding="utf-8")


def placeholders(text: str | None = None) -> set[str]:
    return set(PLACEHOLDER.findall(definition_text() if text is None else text))


def substituted(substitutions: dict[str, str], text: str | None = None) -> dict:
    """The definition with every ${Name} replaced by its value, as text (DefinitionSubstitutions' way); a name
    without a value fails, as CloudFormation would."""
    text = definition_text() if text is None else text
    missing = placeholders(text) - set(substitutions)
    assert not missing, f"no substitution for {sorted(missing)}"
    return json.loads(PLACEHOLDER.sub(lambda match: substitutions[match.group(1)], text))


def validate(definition: dict | str, tmp_path: Path, check_arns: bool = True) -> subprocess.CompletedProcess:
    """npm asl-validator on a definition (a dict, or JSON text); returncode 0 when valid."""
    assert ASL_VALIDATOR.exists(), "tools/node_modules is missing: run `bash tools/install-test-deps.sh`"
    path = tmp_path / "definition.asl.json"
    path.write_text(definition if isinstance(definition, str) else json.dumps(definition), encoding="utf-8")
    options = [] if check_arns else ["--no-arn-check"]
    return subprocess.run([str(ASL_VALIDATOR), "--json-path", str(path), *options], capture_output=True,
                          text=True, timeout=60)


def map_states(definition: dict) -> dict[str, dict]:
    return {name: state for name, state in definition["States"].items() if state["Type"] == "Map"}


def inference_task(map_state: dict) -> dict:
    """The one Task of a Map's ItemProcessor: what every batch runs."""
    processor = map_state["ItemProcessor"]
    return processor["States"][processor["StartAt"]]
