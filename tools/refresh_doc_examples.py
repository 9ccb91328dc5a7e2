"""Rerun every `$ curl ...` example in the docs against a fresh local server and write the real outputs back.

    .venv/bin/python tools/refresh_doc_examples.py docs/api.md README.md

Starts `python -m function.devserver` on 127.0.0.1:8080 with an empty result cache of its own for each file (so
"cached" flags are what a first request gets), in a temporary directory holding the example files the docs name:
cat.jpg and coffee.jpg (scikit-image's chelsea and coffee as JPEG, quality 90) and digit.png (scikit-learn's first
8x8 "3"). Each console block's commands run in order, so a block can show a miss and then a hit.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kit.photos import encode, photo  # noqa: E402

PORT = 8080
BLOCK = re.compile(r"```console\n(.*?)```", re.DOTALL)


def example_files(directory: Path) -> None:
    from sklearn.datasets import load_digits  # noqa: PLC0415

    (directory / "cat.jpg").write_bytes(encode(photo("chelsea"), "JPEG", quality=90))
    (directory / "coffee.jpg").write_bytes(encode(photo("coffee"), "JPEG", quality=90))
    digits = load_digits()
    first_three = digits.images[list(digits.target).index(3)]
    pixels = np.round(first_three / 16.0 * 255.0).astype(np.uint8)
    Image.fromarray(pixels, mode="L").save(directory / "digit.png")


def start_server(directory: Path) -> subprocess.Popen:
    env = {**os.environ, "RESULTS_CACHE": "sqlite", "RESULTS_SQLITE_PATH": str(directory / "results.sqlite3"),
           "PYTHONPATH": str(REPO)}
    server = subprocess.Popen([sys.executable, "-m", "function.devserver", "--port", str(PORT)], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{PORT}/health", timeout=1)
            return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the local server did not start")


def refresh_block(block: str, directory: Path) -> str:
    """Each `$ ` line run again, its output written under it; blank lines between commands are kept."""
    spaced = "\n\n" in block
    groups = []
    for line in block.splitlines():
        if line.startswith("$ "):
            done = subprocess.run(["bash", "-c", line[2:]], cwd=directory, capture_output=True, text=True, timeout=60)
            groups.append("\n".join([line, *done.stdout.rstrip("\n").splitlines()]))
    return ("\n\n" if spaced else "\n").join(groups) + "\n"


def main(paths: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="doc-examples-") as tmp:
        directory = Path(tmp)
        example_files(directory)
        for name in paths:
            (directory / "results.sqlite3").unlink(missing_ok=True)
            server = start_server(directory)
            try:
                path = REPO / name
                text = path.read_text(encoding="utf-8")
                refreshed = BLOCK.sub(lambda m: "```console\n" + refresh_block(m.group(1), directory) + "```", text)
                path.write_text(refreshed, encoding="utf-8")
                print(f"refreshed {name}")
            finally:
                server.terminate()
                server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["docs/api.md"]))
