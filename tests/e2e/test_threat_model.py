"""docs/threat-model.md's spend tables are what tools/worst_case_spend.py computes from the packaged template, so a
changed default or cap cannot leave the page behind."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from kit.script_module import load_script

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOL = REPO_ROOT / "tools" / "worst_case_spend.py"
PAGE = REPO_ROOT / "docs" / "threat-model.md"

pytestmark = pytest.mark.slow


def computed(template: Path) -> str:
    done = subprocess.run([sys.executable, str(TOOL), str(template)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def on_the_page(name: str) -> str:
    found = re.search(rf"<!-- tools/worst_case_spend.py: {name} -->\n(.*?)\n<!-- end -->", PAGE.read_text(), re.S)
    assert found, f"no '{name}' table in {PAGE.name}"
    return found.group(1).strip()


@pytest.mark.parametrize("variant", ["default", "public"])
def test_the_page_shows_the_computed_worst_case(packages, variant):
    assert on_the_page(variant) == computed(packages(variant).template_path)


def load_tool():
    return load_script(TOOL)


def test_the_caps_hold_compute_and_the_table_while_answer_size_sets_the_worst_case(packages):
    tool = load_tool()
    caps = tool.caps_of(packages("default").template)
    assert caps == tool.Caps(rate=50, burst=100, reserved=10, memory_gb=1769 / 1024, architecture="x86_64",
                             table_units=1000, access_logs=True)
    worst = {item.split(":")[0]: bound for item, _, _, bound in tool.rows(caps)}
    assert worst["Lambda compute, x86_64 (deployed)"] == pytest.approx(10 * 1769 / 1024 * 3600 * 0.0000166667)
    assert worst["DynamoDB writes"] == pytest.approx(1000 * 3600 * 0.625e-6)
    assert max(worst, key=worst.get) == "Data transfer out"
    unreserved = tool.caps_of(packages("jwt").template)  # reservedConcurrency=none, accessLogs=false
    assert unreserved.reserved is None and not unreserved.access_logs
    assert "no cap" in tool.table(unreserved)
