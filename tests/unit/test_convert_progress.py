"""convert's progress line: drawn on a terminal (a real pty here), silent on anything else (a pipe), reaching the
terminal even while TensorFlow's native stderr is silenced, and out of the way of the messages printed meanwhile."""
from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

from convert.progress import CLEAR, Progress

REPO = Path(__file__).resolve().parents[2]


class Terminal:
    """A pty: the stream a Progress writes to, and everything that reached the other end."""

    def __init__(self):
        self.master, slave = pty.openpty()
        self.stream = os.fdopen(slave, "w", encoding="utf-8")
        self.received = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the slave end closed
                return
            if not chunk:
                return
            self.received += chunk

    def text(self) -> str:
        self.stream.close()
        self._reader.join()
        os.close(self.master)
        return self.received.decode()


def test_on_a_terminal_a_step_draws_its_count_and_bar_then_wipes_the_line():
    terminal = Terminal()
    progress = Progress(terminal.stream)
    assert progress.interactive
    with progress.step("the SavedModel", total=4) as step:
        step.advance(2)
        step.advance(2)
    text = terminal.text()
    assert "the SavedModel [" + "#" * 12 + "." * 12 + "] 2/4" in text
    assert "the SavedModel [" + "#" * 24 + "] 4/4" in text
    assert text.endswith(CLEAR)  # nothing left on the line for the next message


def test_nested_steps_show_outermost_first():
    terminal = Terminal()
    progress = Progress(terminal.stream)
    with progress.step("modes", total=5) as modes, progress.step("float16 in LiteRT", total=10) as inner:
        modes.advance()
        inner.advance(3)
    text = terminal.text()
    assert "  modes 1/5 > float16 in LiteRT [" + "#" * 7 + "." * 17 + "] 3/10 0s" in text  # one bar: the innermost


def test_a_step_without_a_total_counts_its_seconds_while_it_waits():
    terminal = Terminal()
    progress = Progress(terminal.stream, tick_seconds=0.01)
    with progress.step("converting to int8"):
        while b"converting to int8 1s" not in terminal.received:  # the ticker redraws while the call blocks
            threading.Event().wait(0.01)
    text = terminal.text()
    assert text.count("converting to int8 0s") == 1  # a line is drawn again only when it changes


def test_a_message_printed_meanwhile_gets_a_clean_line():
    terminal = Terminal()
    progress = Progress(terminal.stream)
    with progress.step("ranking", total=2) as step:
        step.advance()
        with progress.paused():
            terminal.stream.write("a stage line\n")
    text = terminal.text()
    assert CLEAR + "a stage line\r\n" + CLEAR + "  ranking [" in text  # a pty sends a newline as CR LF


def test_nothing_is_written_when_the_stream_is_not_a_terminal():
    read_end, write_end = os.pipe()
    stream = os.fdopen(write_end, "w")
    progress = Progress(stream)
    assert not progress.interactive
    with progress.step("the SavedModel", total=3) as step, progress.step("converting"):
        step.advance(3)
        with progress.paused():
            pass
    stream.close()
    with os.fdopen(read_end, "rb") as pipe:
        assert pipe.read() == b""


SCRIPT = """
from convert.progress import progress
from convert.quiet import quiet_native_stderr
with progress().step("converting to float16", total=2) as step:
    with quiet_native_stderr():  # what a converter call runs under
        step.advance(2)
"""


def run_with_stderr(stderr) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, stderr=stderr, stdout=subprocess.PIPE,
                          timeout=60, check=True)


def test_the_process_line_reaches_the_terminal_on_stderr_even_while_fd_2_is_silenced():
    master, slave = pty.openpty()
    received = bytearray()
    try:
        run_with_stderr(slave)
        os.close(slave)
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            received += chunk
    finally:
        os.close(master)
    assert b"converting to float16 [" + b"#" * 24 + b"] 2/2" in received


def test_the_process_says_nothing_on_a_stderr_that_is_not_a_terminal():
    assert run_with_stderr(subprocess.PIPE).stderr == b""
