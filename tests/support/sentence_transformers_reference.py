"""sentence-transformers' own `encode` on a model directory, offline: runs in .venv-reference (torch lives there,
never in the dev venv; tools/prepare-reference-venv.sh builds it). `reference_vectors()` is the dev venv's side.

As a script: `python sentence_transformers_reference.py MODEL_DIR TEXTS.json OUT.npy`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REFERENCE_PYTHON = REPO / ".venv-reference" / "bin" / "python"


def reference_vectors(model_dir: Path, texts: list[str]):
    """(len(texts), dimensions) float32: SentenceTransformer(model_dir).encode(texts), as sentence-transformers
    returns them (normalised when the directory has 2_Normalize)."""
    import numpy as np  # noqa: PLC0415

    if not REFERENCE_PYTHON.is_file():
        raise RuntimeError(f"{REFERENCE_PYTHON} is missing: run `bash tools/prepare-reference-venv.sh` "
                           "(make test runs it through tools/install-test-deps.sh)")
    with tempfile.TemporaryDirectory() as scratch:
        texts_file, out = Path(scratch) / "texts.json", Path(scratch) / "vectors.npy"
        texts_file.write_text(json.dumps(texts), encoding="utf-8")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        subprocess.run([str(REFERENCE_PYTHON), __file__, str(model_dir), str(texts_file), str(out)], check=True,
                       env=env, cwd=scratch)
        return np.load(out)


def main(model_dir: str, texts_file: str, out: str) -> None:
    import numpy as np  # noqa: PLC0415
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415

    model = SentenceTransformer(model_dir, device="cpu", local_files_only=True)
    texts = json.loads(Path(texts_file).read_text(encoding="utf-8"))
    np.save(out, model.encode(texts, batch_size=16, convert_to_numpy=True).astype(np.float32))


if __name__ == "__main__":
    main(*sys.argv[1:])
