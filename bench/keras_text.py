"""Section 7's Keras text table: models with strings in, converted from their .keras file and served on raw texts.

A TextVectorization sentiment classifier with a pooled, an LSTM, a GRU and a Bidirectional(LSTM) body, and a
three-label multi-label model, each trained briefly on the VADER sentences (kit/keras_text_models.py, the tests'
models too) and converted with `python -m convert MODEL.keras OUT --sidecar SIDECAR.json` in float32 and dynamic
(in this process, so the time is the load, export, conversion and gates without TensorFlow's import). Served
agreement: /sentiment through the function's Lambda entry on the 200 held-out raw texts, against
`model.predict(strings)`: the same label (label set for multi-label), and the largest score difference.

    .venv/bin/python -m bench.keras_text [MODE ...]    prints the table alone
"""
from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from kit import keras_text_models as kt
from kit.events import http_api_event

MODES = ("float32", "dynamic")
REQUEST_TEXTS = 100  # under MAX_TEXT_BATCH


def served(out_root: Path, name: str, texts) -> list[dict]:
    from function.catalog.registry import ModelRegistry  # noqa: PLC0415
    from function.entry import handle_event  # noqa: PLC0415
    from kit.service import make_service  # noqa: PLC0415

    service = make_service(ModelRegistry(out_root))
    predictions = []
    for start in range(0, len(texts), REQUEST_TEXTS):
        body = {"model": name, "texts": [str(text) for text in texts[start:start + REQUEST_TEXTS]]}
        answer = handle_event(service, http_api_event("POST", "/sentiment", body), None)
        predictions += json.loads(answer["body"])["predictions"]
    return predictions


def agreement(source: Path, out_root: Path, multi_label: bool) -> tuple[float, float]:
    """(share of texts answered as model.predict answers them, largest score difference)."""
    import keras  # noqa: PLC0415

    texts = np.load(source / "validation.npz")["raw_texts"]
    predicted = keras.saving.load_model(source / "model.keras").predict(kt.strings(texts), verbose=0)
    answers = served(out_root, source.name, texts)
    if multi_label:
        labels = kt.MULTI_LABELS
        same = [{entry["label"] for entry in answer["labels"]} == {label for label, score in zip(labels, row)
                                                                   if score >= 0.5}
                for answer, row in zip(answers, predicted)]
        diffs = [abs(entry["score"] - row[labels.index(entry["label"])]) for answer, row in zip(answers, predicted)
                 for entry in answer["labels"]]
    else:
        positive = predicted[:, 0]
        same = [answer["label"] == ("positive" if p > 0.5 else "negative") for answer, p in zip(answers, positive)]
        diffs = [abs(answer["score"] - max(p, 1 - p)) for answer, p in zip(answers, positive)]
    return float(np.mean(same)), float(max(diffs, default=0.0))


def table(modes: tuple[str, ...] = MODES) -> list[str]:
    from convert.__main__ import main as convert  # noqa: PLC0415

    lines = [f"| model (.keras, strings in) | mode | convert time | /sentiment agrees with model.predict "
             f"({kt.HELD_OUT} raw texts) | max score diff |", "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="bench-keras-text-") as work:
        root = Path(work)
        cases = [(f"TextVectorization + {kind}", lambda kind=kind: kt.trained_sentiment_dir(root, kind), False)
                 for kind in kt.BODIES]
        cases.append((f"multi-label ({len(kt.MULTI_LABELS)} labels)", lambda: kt.trained_multi_label_dir(root),
                      True))
        for label, make, multi_label in cases:
            source = make()
            for mode in modes:
                out_root = root / f"out-{source.name}-{mode}"
                started = time.perf_counter()
                with contextlib.redirect_stdout(io.StringIO()):
                    code = convert([str(source / "model.keras"), str(out_root / source.name), "--sidecar",
                                    str(source / "sidecar.json"), "--quantization", mode])
                seconds = time.perf_counter() - started
                if code != 0:
                    lines.append(f"| {label} | {mode} | {seconds:.1f} s | refused by the gate | - |")
                    continue
                share, diff = agreement(source, out_root, multi_label)
                lines.append(f"| {label} | {mode} | {seconds:.1f} s | {share:.1%} | {diff:.2g} |")
    return lines


if __name__ == "__main__":
    print("\n".join(table(tuple(sys.argv[1:]) or MODES)))
