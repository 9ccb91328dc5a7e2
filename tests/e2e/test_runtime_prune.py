"""runtime-prune.txt, checked: every pattern names something the install holds, the Lambda runtime venv the e2e tests
run is pruned exactly as the image is, and no route opens or maps a dropped file (strace records the real runtime,
with the dropped files put back). The size of the image's dependency layer: test_image_layer.py."""
from __future__ import annotations

import pytest

from kit.file_access import opened_files, strace_prefix, under
from kit.lambda_runtime import LambdaRuntime, lay_out_task_root
from kit.route_events import PAGE_ENVIRONMENT, route_events
from kit.runtime_layer import (
    PRUNE_LIST, PRUNED_STORE, RUNTIME_PYTHON, install_layer, prune_tool, recording_venv, site_packages, wheels_dir,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def patterns():
    return prune_tool().read_patterns(PRUNE_LIST)


@pytest.fixture(scope="module")
def unpruned_layers(tmp_path_factory):
    """requirements.txt as the image installs it, before the prune, for each architecture serverless.yml offers."""
    root = tmp_path_factory.mktemp("layers")
    return {arch: install_layer(root / arch, arch, prune=False) for arch in ("x86_64", "aarch64")
            if any(wheels_dir(arch).glob("*.whl"))}


def test_both_architectures_wheels_are_cached(unpruned_layers):
    assert set(unpruned_layers) == {"x86_64", "aarch64"}, "run `bash tools/install-test-deps.sh`"


def test_every_pattern_says_why_and_names_something_the_install_holds(patterns, unpruned_layers):
    tool = prune_tool()
    assert len(patterns) >= 4 and all(pattern.why for pattern in patterns)
    # NPU plugins (vendors/, tools/apply_plugin_main) ship in the x86_64 wheel only: a pattern may match one layer.
    dead = [p.glob for p in patterns if not any(tool.matches(layer, p) for layer in unpruned_layers.values())]
    assert dead == [], f"patterns that match nothing: {dead}"


def test_the_issue_s_four_big_unused_parts_are_listed(patterns, unpruned_layers):
    tool, layer = prune_tool(), unpruned_layers["x86_64"]
    dropped = {path.relative_to(layer).as_posix() for p in patterns for path in tool.matches(layer, p)}
    assert {"ai_edge_litert/libLiteRtWebGpuAccelerator.so", "ai_edge_litert/tools", "ai_edge_litert/vendors",
            "numpy/_core/tests", "numpy/linalg/tests"} <= dropped


def test_the_lambda_runtime_venv_is_pruned_by_the_same_list(patterns):
    tool, site = prune_tool(), site_packages(RUNTIME_PYTHON.parent.parent)
    assert [p.glob for p in patterns if tool.matches(site, p)] == []
    # What was dropped is kept aside, pattern by pattern, for the recording test below.
    assert [p.glob for p in patterns if not tool.matches(PRUNED_STORE, p)] == []


def test_no_route_opens_or_maps_a_pruned_file(tmp_path):
    task_root = lay_out_task_root(tmp_path / "task")
    python = recording_venv(tmp_path / "venv")
    log = tmp_path / "opens.log"
    environment = {"RESULTS_CACHE": "memory", **PAGE_ENVIRONMENT}
    with LambdaRuntime(task_root, python=python, environment=environment, command_prefix=strace_prefix(log)) as runtime:
        statuses = {route: runtime.invoke(event).status for route, event in route_events().items()}
    assert set(statuses.values()) == {200}, statuses
    opened = under(opened_files(log), site_packages(tmp_path / "venv"))
    dropped = {path.relative_to(PRUNED_STORE) for path in PRUNED_STORE.rglob("*") if path.is_file()}
    # The recording saw the runtime's own native libraries: it records what the native code opens, not only Python.
    assert any(path.name.startswith("libpywrap_litert_common") for path in opened), sorted(opened)
    assert sorted(opened & dropped) == []
