"""Every route's request and answer, as little as each takes: event JSON -> inputs -> an engine -> answer JSON.

What the floor (bench/baselines/floor_handler.py, LiteRT) and the ONNX Runtime peer
(bench/baselines/onnx_route_handler.py) share, so they differ only in the engine behind `bench.raw_pipeline`'s
Pipeline. The route is read off the path; the answers carry what the function's answers carry that a client
reads (labels and scores, vectors, output tensors), with no validation beyond what decoding needs.
"""

from __future__ import annotations

import base64
import json

import numpy as np

TOP_K = 5


def _answer(payload: dict) -> dict:
    return {"statusCode": 200, "headers": {"content-type": "application/json"},
            "body": json.dumps(payload, separators=(",", ":")), "isBase64Encoded": False}


def _ranked(manifest: dict, scores: np.ndarray) -> list[dict]:
    best = np.argsort(scores)[::-1][:TOP_K]
    labels = manifest["labels"]
    return [{"label": labels[i], "score": round(float(scores[i]), 6)} for i in best]


def _sentiment(manifest: dict, scores: np.ndarray) -> dict:
    labels = manifest["labels"]
    if scores.shape[-1] == 1:  # one sigmoid: the probability of the second label
        positive = float(scores[0])
        index = int(positive > 0.5)
        return {"label": labels[index], "score": round(positive if index else 1.0 - positive, 6)}
    index = int(np.argmax(scores))
    return {"label": labels[index], "score": round(float(scores[index]), 6)}


def _tensor_feed(manifest: dict, columns: dict[str, list]) -> dict[str, np.ndarray]:
    return {spec["name"]: np.asarray(columns[spec["name"]], dtype=spec["dtype"]) for spec in manifest["inputs"]}


def answer(model, event: dict) -> dict:
    """The proxy result for an API Gateway v2 event on one of the benchmarked routes."""
    path = event["rawPath"]
    body = json.loads(event["body"])
    manifest = model.manifest
    if path == "/classify":
        scores = model.image_scores(base64.b64decode(body["image"]))[0]
        ranked = _ranked(manifest, scores)
        return _answer({"model": manifest["name"], "predictions": [{**ranked[0], "top_k": ranked}]})
    if path == "/sentiment":
        return _answer({"model": manifest["name"],
                        "predictions": [_sentiment(manifest, model.text_scores(body["text"])[0])]})
    if path == "/embed":
        vectors = model.embed(body["texts"] if "texts" in body else [body["text"]])
        return _answer({"model": manifest["name"], "dimensions": int(vectors.shape[1]),
                        "embeddings": [{"embedding": row} for row in vectors.tolist()]})
    if path == "/v1/embeddings":
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = model.embed(texts)
        return _answer({"object": "list", "model": body["model"],
                        "data": [{"object": "embedding", "index": i, "embedding": row}
                                 for i, row in enumerate(vectors.tolist())]})
    if path.endswith(":predict"):
        rows = body["instances"]
        outputs = model.invoke(_tensor_feed(manifest, {name: [row[name] for row in rows] for name in rows[0]}))
        names = [spec["name"] for spec in manifest["outputs"]]
        return _answer({"predictions": [{name: outputs[name][i].tolist() for name in names}
                                        for i in range(len(rows))]})
    if path.endswith("/infer"):
        columns = {item["name"]: np.asarray(item["data"]).reshape(item["shape"]) for item in body["inputs"]}
        outputs = model.invoke(_tensor_feed(manifest, columns))
        return _answer({"model_name": manifest["name"], "outputs": [
            {"name": spec["name"], "datatype": "FP32", "shape": list(outputs[spec["name"]].shape),
             "data": outputs[spec["name"]].ravel().tolist()} for spec in manifest["outputs"]]})
    raise ValueError(f"no floor for {path}")
