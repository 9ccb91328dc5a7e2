"""Progress of the steps that take more than a few seconds, on stderr: on a terminal one line redrawn in place (a
count and a bar when the step knows its total, the seconds so far when it does not); when stderr is not a terminal
(a log file, CI, a pipe) nothing at all, since the stage lines on stdout already say what ran and when.

    with progress().step("running the SavedModel on 2000 inputs", total=2000) as step:
        for batch in batches:
            ...
            step.advance(len(batch))

Steps nest (a mode of --compare, then its steps): the line shows them all, outermost first. Messages printed while
a line is drawn go through `paused()`, so that they never land in the middle of it.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from typing import TextIO

BAR_WIDTH = 24
TICK_SECONDS = 0.5  # how often the line is redrawn while nothing advances (the seconds of a converter call)
CLEAR = "\r\x1b[K"
DEFAULT_COLUMNS = 100


class Step:
    def __init__(self, progress: Progress, label: str, total: int | None) -> None:
        self._progress = progress
        self.label = label
        self.total = total
        self.done = 0
        self.start = time.monotonic()

    def advance(self, count: int = 1) -> None:
        self.done += count
        self._progress.draw()

    def text(self, now: float, innermost: bool = True) -> str:
        """The innermost step with its bar and seconds; the steps around it as a count, to fit one line."""
        if not innermost:
            return f"{self.label} {self.done}/{self.total}" if self.total else self.label
        seconds = f"{now - self.start:.0f}s"
        if not self.total:
            return f"{self.label} {seconds}"
        filled = round(min(1.0, self.done / self.total) * BAR_WIDTH)
        return f"{self.label} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {self.done}/{self.total} {seconds}"


def _terminal_stream() -> TextIO | None:
    """A stream on the terminal stderr is now: a duplicate of fd 2, so that the line still reaches the terminal
    while convert.quiet sends fd 2 into a sink around TensorFlow's native chatter (a converter call is the longest
    step of all)."""
    try:
        if not os.isatty(2):
            return None
        return os.fdopen(os.dup(2), "w", encoding="utf-8", errors="replace")
    except OSError:
        return None


class Progress:
    def __init__(self, stream: TextIO | None = None, interactive: bool | None = None,
                 tick_seconds: float = TICK_SECONDS) -> None:
        """stream: where the line goes (default: the terminal on stderr, if there is one). interactive: draw at all
        (default: whether the stream is a terminal)."""
        self._stream = stream
        self.interactive = bool(stream is not None and stream.isatty()) if interactive is None else interactive
        self._tick_seconds = tick_seconds
        self._steps: list[Step] = []
        self._lock = threading.RLock()
        self._drawn = False
        self._line = ""
        self._ticker: _Ticker | None = None

    @contextlib.contextmanager
    def step(self, label: str, total: int | None = None) -> Iterator[Step]:
        step = Step(self, label, total)
        with self._lock:
            self._steps.append(step)
            self._start_ticker()
        self.draw()
        try:
            yield step
        finally:
            with self._lock:
                self._steps.remove(step)
                ticker = None
                if self._steps:
                    self.draw()
                else:
                    self._clear()
                    ticker, self._ticker = self._ticker, None
            if ticker is not None:  # outside the lock, which the ticker takes to draw
                ticker.stop.set()
                ticker.join()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Wipe the line for the length of the block (a message is printed there), then draw it again."""
        with self._lock:
            self._clear()
            try:
                yield
            finally:
                self.draw()

    def draw(self) -> None:
        if not self.interactive or self._stream is None:
            return
        with self._lock:
            if not self._steps:
                return
            now = time.monotonic()
            line = " > ".join(step.text(now, step is self._steps[-1]) for step in self._steps)
            width = _columns(self._stream) - 1
            line = "  " + (line if len(line) <= width - 2 else line[:width - 5] + "...")
            if self._drawn and line == self._line:
                return  # the ticker found nothing new to say
            self._write(CLEAR + line)
            self._drawn, self._line = True, line

    def _clear(self) -> None:
        if self._drawn:
            self._write(CLEAR)
            self._drawn = False

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):  # the terminal went away: progress is never worth failing a conversion
            self.interactive = False

    def _start_ticker(self) -> None:
        if self.interactive and self._ticker is None:
            self._ticker = _Ticker(self.draw, self._tick_seconds)
            self._ticker.start()


class _Ticker(threading.Thread):
    """Redraws the line while a step waits on one long call (a converter run): its seconds keep counting."""

    def __init__(self, draw, seconds: float) -> None:
        super().__init__(name="progress", daemon=True)
        self.stop = threading.Event()
        self._draw, self._seconds = draw, seconds

    def run(self) -> None:
        while not self.stop.wait(self._seconds):
            self._draw()


def _columns(stream: TextIO) -> int:
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        columns = 0
    return columns or DEFAULT_COLUMNS  # a terminal that does not say its width (a fresh pty says 0)


_shared: Progress | None = None


def progress() -> Progress:
    """The process's one Progress on the terminal's stderr (made at first use, before any step silences fd 2)."""
    global _shared  # noqa: PLW0603  (one line on one terminal: one object for the whole process)
    if _shared is None:
        stream = _terminal_stream()
        _shared = Progress(stream) if stream is not None else Progress(None, interactive=False)
    return _shared


def use(instance: Progress) -> Progress | None:
    """Make `instance` the process's Progress (tests hand it a pty or a buffer); returns the one it replaces."""
    global _shared  # noqa: PLW0603
    previous, _shared = _shared, instance
    return previous
