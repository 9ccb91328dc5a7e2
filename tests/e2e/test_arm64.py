"""Graviton (arm64): every wheel of requirements.txt exists for aarch64, and the handler, run on an arm64 Python under
qemu user-mode emulation with those wheels pruned as the image is, answers one request per task as x86_64 does.
Emulated speed says nothing about Graviton's: BENCHMARKS.md's arm64 figures are sizes only."""
from __future__ import annotations

import json
import math
import re

import pytest

from tests.support.arm64 import SITE, arm64_command, run_handler, x86_64_command
from kit.events import http_api_event
from kit.lambda_runtime import lay_out_task_root
from kit.photos import b64, cat_jpeg, is_cat
from kit.route_events import SERUM, SEX, VITALS
from kit.runtime_layer import MANYLINUX_TAGS, REPO_ROOT, wheels_dir

pytestmark = pytest.mark.slow

# |arm64 - x86_64| <= max(1e-5, 1e-5 x |value|), as the tensor tests compare conversions: the tabular progression
# (~100) differed by 7.6e-6, one unit in the last place of a float32 there; above 128 one unit is 1.5e-5.
TOLERANCE = 1e-5
# One request per task: image classification, text classification, embedding, tensor.
EVENTS = [
    http_api_event("POST", "/classify", {"image": b64(cat_jpeg()), "model": "efficientnet_lite0"}),
    http_api_event("POST", "/sentiment", {"text": "A moving, beautifully acted story."}),
    http_api_event("POST", "/embed", {"texts": ["a cat on a sofa"]}),
    http_api_event("POST", "/v1/models/tabular:predict",
                   {"instances": [{"vitals": VITALS, "sex": SEX, "serum": SERUM}]}),
]


def pins() -> dict[str, str]:
    lines = (REPO_ROOT / "requirements.txt").read_text().splitlines()
    return dict(line.split("#")[0].strip().split("==") for line in lines if "==" in line.split("#")[0])


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def test_every_pinned_wheel_exists_for_aarch64_on_lambda_s_python():
    wheels = {}
    for wheel in wheels_dir("aarch64", "3.12").glob("*.whl"):
        name, version, python, abi, platform = wheel.stem.split("-")
        wheels[canonical(name)] = (version, python, abi, platform)
    assert {canonical(name): version for name, version in pins().items()} == {
        name: version for name, (version, *_) in wheels.items()}
    aarch64_tags = {f"{tag}_aarch64" for tag in MANYLINUX_TAGS}
    for name, (_, python, abi, platform) in wheels.items():
        assert set(platform.split(".")) & aarch64_tags, (name, platform)
        assert python in ("cp312", "cp310") and abi in ("cp312", "abi3"), (name, python, abi)


def same_answer(arm: object, x86: object, where: str = "") -> list[str]:
    """Where the two answers differ beyond TOLERANCE (numbers) or at all (anything else)."""
    if isinstance(arm, dict) and isinstance(x86, dict):
        if arm.keys() != x86.keys():
            return [f"{where}: keys {sorted(arm)} != {sorted(x86)}"]
        return [d for key in arm for d in same_answer(arm[key], x86[key], f"{where}.{key}")]
    if isinstance(arm, list) and isinstance(x86, list):
        if len(arm) != len(x86):
            return [f"{where}: {len(arm)} items != {len(x86)}"]
        return [d for i, (a, b) in enumerate(zip(arm, x86)) for d in same_answer(a, b, f"{where}[{i}]")]
    if isinstance(arm, float | int) and isinstance(x86, float | int) and not isinstance(arm, bool):
        return [] if math.isclose(arm, x86, rel_tol=TOLERANCE, abs_tol=TOLERANCE) else [f"{where}: {arm} != {x86}"]
    return [] if arm == x86 else [f"{where}: {arm!r} != {x86!r}"]


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    task_root = lay_out_task_root(tmp_path_factory.mktemp("arm64") / "task")
    return (run_handler(arm64_command(), task_root, EVENTS, tmp_path_factory.mktemp("arm64"), site=SITE),
            run_handler(x86_64_command(), task_root, EVENTS, tmp_path_factory.mktemp("x86_64")))


def test_the_arm64_handler_answers_every_task_like_x86_64(answers):
    (arm_machine, arm), (x86_machine, x86) = answers
    assert (arm_machine, x86_machine) == ("aarch64", "x86_64")
    assert [a["statusCode"] for a in arm] == [200] * len(EVENTS), arm
    bodies = [(json_body(a), json_body(b)) for a, b in zip(arm, x86)]
    assert is_cat(bodies[0][0]["predictions"][0]["label"])
    differences = [d for number, (a, b) in enumerate(bodies) for d in same_answer(a, b, EVENTS[number]["rawPath"])]
    assert differences == []


def json_body(answer: dict) -> dict:
    return json.loads(answer["body"])
