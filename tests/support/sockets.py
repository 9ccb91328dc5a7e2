"""Which process holds which loopback TCP connection (Linux /proc): the SnapStart tests' check that no socket
outlives the before-snapshot hook, and the stand-in Runtime API's way to tell restored copies apart."""
from __future__ import annotations

import os
from pathlib import Path


def tcp_connections() -> list[tuple[int, int, str]]:
    """(local port, remote port, socket inode) of every IPv4 TCP socket in this network namespace."""
    found = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        found.append((int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16), fields[9]))
    return found


def socket_inodes(pid: int | str = "self") -> set[str]:
    """The inodes of the sockets process `pid` has open."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[len("socket:["):-1])
    except OSError:
        pass
    return inodes


def connections_to(port: int, pid: int | str = "self") -> int:
    """How many connections to `port` process `pid` holds open."""
    held = socket_inodes(pid)
    return sum(1 for _, remote, inode in tcp_connections() if remote == port and inode in held)


def peer_pid(client_port: int, server_port: int, pids: list[int]) -> int | None:
    """The process among `pids` that holds the connection from `client_port` to `server_port`."""
    inode = next((i for local, remote, i in tcp_connections() if (local, remote) == (client_port, server_port)), None)
    if inode is None:
        return None
    return next((pid for pid in pids if inode in socket_inodes(pid)), None)
