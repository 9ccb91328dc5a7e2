"""How much of a file this process holds in memory through its mappings."""
from __future__ import annotations

import os
from pathlib import Path


def resident_bytes(path: Path) -> int:
    """Rss of every mapping of the file in this process, from /proc/self/smaps."""
    target, total, inside = os.path.realpath(path), 0, False
    with open("/proc/self/smaps") as lines:
        for line in lines:
            fields = line.split(maxsplit=5)
            if not fields[0].endswith(":"):  # a mapping's header line; its attributes ("Rss:", ...) follow it
                inside = len(fields) == 6 and fields[5].rstrip("\n") == target
            elif inside and fields[0] == "Rss:":
                total += int(fields[1]) * 1024
    return total
