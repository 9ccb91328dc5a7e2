"""Convert time and served agreement of Keras text models converted from their .keras file: a TextVectorization
sentiment classifier with a pooled, an LSTM, a GRU and a Bidirectional(LSTM) body, and a three-label multi-label
model, each trained briefly on the VADER sentences and converted in each mode given (default float32 and dynamic).

Served agreement: /sentiment on the 200 raw held-out texts through the function's real handler, against
model.predict(strings): labels (label sets for multi-label) equal, and the largest score difference.

    .venv/bin/python -m bench.keras_text [MODE ...]
"""
from __future__ import annotations

import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tests.support import keras_text_models as kt


def served(out_root: Path, name: str, texts) -> list[dict]:
    import json

    from function.models.registry import ModelRegistry
    from tests.support.events import http_api_event
    from tests.support.function_fixtures import make_service

    service = make_service(ModelRegistry(out_root))
    predictions = []
    for start in range(0, len(texts), 100):
        body = {"model": name, "texts": [str(text) for text in texts[start:start + 100]]}
        predictions += json.loads(service.handle_event(http_api_event("POST", "/sentiment", body), None)["body"])[
            "predictions"]
    return predictions


def agreement(source: Path, out_root: Path, multi_label: bool) -> tuple[float, float]:
    import keras

    texts = np.load(source / "validation.npz")["raw_texts"]
    predicted = keras.saving.load_model(source / "model.keras").predict(kt.strings(texts), verbose=0)
    answers = served(out_root, source.name, texts)
    if multi_label:
        labels = kt.MULTI_LABELS
        same = [{e["label"] for e in a["labels"]} == {label for label, s in zip(labels, row) if s >= 0.5}
                for a, row in zip(answers, predicted)]
        diffs = [abs(e["score"] - row[labels.index(e["label"])]) for a, row in zip(answers, predicted)
                 for e in a["labels"]]
    else:
        p = predicted[:, 0]
        same = [a["label"] == ("positive" if q > 0.5 else "negative") for a, q in zip(answers, p)]
        diffs = [abs(a["score"] - max(q, 1 - q)) for a, q in zip(answers, p)]
    return float(np.mean(same)), float(max(diffs, default=0.0))


def main(modes: list[str]) -> None:
    from convert.__main__ import main as convert

    print("| model | mode | convert time | served agreement (200 raw texts) | max score diff |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        cases = [(kind, lambda kind=kind: kt.trained_sentiment_dir(root, kind), False) for kind in kt.BODIES]
        cases.append(("multi-label (3 labels)", lambda: kt.trained_multi_label_dir(root), True))
        for label, make, multi_label in cases:
            source = make()
            for mode in modes:
                out_root = root / f"out-{source.name}-{mode}"
                start = time.monotonic()
                with contextlib.redirect_stdout(io.StringIO()):
                    code = convert([str(source / "model.keras"), str(out_root / source.name), "--sidecar",
                                    str(source / "sidecar.json"), "--quantization", mode])
                seconds = time.monotonic() - start
                if code != 0:
                    print(f"| {label} | {mode} | {seconds:.1f} s | refused (see stderr) | - |")
                    continue
                share, diff = agreement(source, out_root, multi_label)
                print(f"| {label} | {mode} | {seconds:.1f} s | {share:.1%} | {diff:.2g} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["float32", "dynamic"])
