"""The command as users run it, in a fresh process: help, exit codes, and no traceback for a mistake."""
from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "convert", *map(str, args)], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300)


def test_help_documents_every_option_and_mode():
    result = run_cli("--help")
    assert result.returncode == 0
    for text in ("MODEL", ".keras", "--sidecar", "OUT_DIR", "--quantization", "--representative", "--compare",
                 "float32", "float16", "dynamic", "int8", "threshold", "exit codes", "docs/conversion.md"):
        assert text in result.stdout


def test_unknown_mode_is_a_usage_error():
    result = run_cli("somewhere", "out", "--quantization", "int4")
    assert result.returncode == 2
    assert "invalid choice: 'int4'" in result.stderr and "Traceback" not in result.stderr


def test_missing_directory_exits_2_with_one_line(tmp_path):
    result = run_cli(tmp_path / "missing", tmp_path / "out")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"convert: error: {tmp_path / 'missing'} does not exist: pass the directory model.export() wrote "
        "[missing_directory]"]


@pytest.mark.slow
def test_real_conversion_in_a_fresh_process(image_saved_model, tmp_path):
    result = run_cli(image_saved_model, tmp_path / "model", "--quantization", "int8")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # stderr is not a terminal: no progress line, and no native chatter
    assert "| **int8** (served)" in result.stdout
    assert json.loads((tmp_path / "model" / "manifest.json").read_text())["fidelity"]["passed"]
    page = subprocess.run([sys.executable, "-m", "convert.report_page", str(tmp_path / "model")], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)  # as docs/conversion.md has it
    assert (page.returncode, page.stdout, page.stderr) == (0, f"wrote {tmp_path / 'model' / 'report.html'}\n", "")


@pytest.mark.slow
def test_a_terminal_sees_the_progress_of_each_long_step(image_saved_model, tmp_path):
    """stderr on a pty, as when a person runs convert: each long step draws its count there; stdout keeps the
    stage lines."""
    master, slave = pty.openpty()
    received = bytearray()
    try:
        process = subprocess.Popen([sys.executable, "-m", "convert", str(image_saved_model), str(tmp_path / "m"),
                                    "--quantization", "int8", "--compare"], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                                   stderr=slave)
        os.close(slave)
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # every writer closed
                break
            if not chunk:
                break
            received += chunk
        assert process.wait(timeout=300) == 0
        assert b"wrote " in process.stdout.read()
    finally:
        os.close(master)
    for line in ("loading the SavedModel 0s", "converting to float32 0s", "the SavedModel [", "] 297/297",
                 "--compare: modes 3/5 > ", "mixed in LiteRT [", "mixed: ranking layers [",
                 "converting to int8 (calibrating) [",
                 "] 200/200", "timing [", "input bounds 0s"):
        assert line.encode() in received, line


@pytest.mark.slow
def test_gate_failure_in_a_fresh_process_is_exactly_one_stderr_line(weightless_saved_model, tmp_path):
    """Not even TensorFlow's or LiteRT's native start-up logging may come before the message."""
    result = run_cli(weightless_saved_model, tmp_path / "model", "--quantization", "float32")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("convert: error: ") and line.endswith("[weightless_export]")
    assert not (tmp_path / "model").exists()
