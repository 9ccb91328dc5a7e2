"""Drops from an installed runtime what runtime-prune.txt says the function never uses.

    python tools/prune_runtime.py SITE_PACKAGES --list runtime-prune.txt [--move-to DIR]

SITE_PACKAGES is where `pip install --target` (the Dockerfile) or a venv (tools/prepare-lambda-runtime.sh) put
requirements.txt; each pattern of the list is a glob relative to it (`**` spans folders). --move-to keeps what was
dropped under DIR, same layout, so a test can put it back and record whether anything opens it. Standard library
only: the Lambda base image's own Python runs it in the image's install layer. Prints one line per pattern.
"""
from __future__ import annotations

import argparse
import glob
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Pattern:
    glob: str  # relative to site-packages
    why: str  # the list's own comment: why the function can do without it


def read_patterns(path: Path) -> list[Pattern]:
    """`glob  # why` per line; blank lines and lines that are only a comment are skipped."""
    patterns = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        text, _, why = line.partition("#")
        if not text.strip():
            continue
        if not why.strip():
            raise ValueError(f"{path}:{number}: every pattern says why it may go, after a '#'")
        patterns.append(Pattern(text.strip(), why.strip()))
    return patterns


def matches(site: Path, pattern: Pattern) -> list[Path]:
    """What the pattern names under site: files or whole folders, outermost only (a folder covers its files)."""
    found = sorted(Path(site, hit) for hit in glob.glob(pattern.glob, root_dir=site, recursive=True))
    outermost = []
    for path in found:
        if not any(parent in path.parents for parent in outermost):
            outermost.append(path)
    return outermost


def tree_bytes(path: Path) -> int:
    """Apparent size of a file, or of every regular file below a folder (symlinks not followed)."""
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def prune(site: Path, patterns: list[Pattern], move_to: Path | None = None) -> dict[str, tuple[int, int]]:
    """Removes (or moves under move_to) every match; returns {glob: (paths, bytes)} in the list's order."""
    site = Path(site)
    dropped = {}
    for pattern in patterns:
        hits = matches(site, pattern)
        size = sum(tree_bytes(hit) for hit in hits)
        for hit in hits:
            if move_to is not None:
                target = Path(move_to, hit.relative_to(site))
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(hit, target)
            elif hit.is_dir() and not hit.is_symlink():
                shutil.rmtree(hit)
            else:
                hit.unlink()
        dropped[pattern.glob] = (len(hits), size)
    return dropped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the folder requirements.txt was installed into")
    parser.add_argument("--list", type=Path, required=True, help="runtime-prune.txt")
    parser.add_argument("--move-to", type=Path, help="keep what is dropped here instead of deleting it")
    args = parser.parse_args(argv)
    dropped = prune(args.site, read_patterns(args.list), args.move_to)
    for glob_text, (count, size) in dropped.items():
        print(f"pruned {size / 1e6:7.2f} MB in {count:3d} paths: {glob_text}")
    total = sum(size for _, size in dropped.values())
    print(f"pruned {total / 1e6:7.2f} MB in all from {args.site}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
