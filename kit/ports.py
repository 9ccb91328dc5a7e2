"""Loopback ports for the servers the tests and benchmarks start."""
from __future__ import annotations

import socket


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on right now (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
