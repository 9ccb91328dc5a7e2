"""One real API Gateway event per route the function serves, each answered 200 by the demo models: what the prune
test (tests/e2e/test_runtime_prune.py) and the cold-start bytes benchmark walk through.

    for route, event in route_events().items(): runtime.invoke(event)

The page (`GET /`) is served only with SERVE_PAGE=true: run the runtime with PAGE_ENVIRONMENT.
"""
from __future__ import annotations

from kit.events import http_api_event
from kit.photos import b64, cat_jpeg, encode, photo

PAGE_ENVIRONMENT = {"SERVE_PAGE": "true"}
# Every format the function decodes (function/preprocessing/image.py): each loads its own Pillow decoder and library.
IMAGE_FORMATS = ("PNG", "WEBP", "GIF", "BMP", "TIFF")
# One row of the tabular demo model's inputs (shapes from models/tabular/manifest.json; any finite values answer).
VITALS, SEX, SERUM = [0.04, 0.05, 0.06], 1, [0.02, -0.04, 0.03, 0.01, -0.02, 0.0]


def route_events() -> dict[str, dict]:
    """{route as the client names it: its event}, in the order a walk through the API would go."""
    post = http_api_event
    return {
        "GET /health": post("GET", "/health"),
        "GET /models": post("GET", "/models"),
        "GET /openapi.json": post("GET", "/openapi.json"),
        "GET /": post("GET", "/", content_type=None),
        "POST /classify": post("POST", "/classify", {"image": b64(cat_jpeg())}),
        **{f"POST /classify ({fmt})": post("POST", "/classify", small_photo(fmt), f"image/{fmt.lower()}")
           for fmt in IMAGE_FORMATS},
        "POST /classify-text": post("POST", "/classify-text", {"text": "A moving, beautifully acted story.",
                                                                "top_k": "all"}),
        "POST /sentiment": post("POST", "/sentiment", {"text": "A moving, beautifully acted story."}),
        "POST /tokenize": post("POST", "/tokenize", {"text": "Crème brûlée, déjà vu"}),
        "POST /embed": post("POST", "/embed", {"texts": ["a cat on a sofa"]}),
        "POST /v1/embeddings": post("POST", "/v1/embeddings", {"model": "minilm", "input": "a cat on a sofa"}),
        "POST /v1/models/tabular:predict": post("POST", "/v1/models/tabular:predict",
                                                {"instances": [{"vitals": VITALS, "sex": SEX, "serum": SERUM}]}),
        "POST /v2/models/tabular/infer": post("POST", "/v2/models/tabular/infer", {"inputs": [
            {"name": "vitals", "shape": [1, 3], "datatype": "FP32", "data": VITALS},
            {"name": "sex", "shape": [1], "datatype": "INT32", "data": [SEX]},
            {"name": "serum", "shape": [1, 6], "datatype": "FP32", "data": SERUM}]}),
    }


def small_photo(fmt: str) -> bytes:
    """The cat photo at 96x96 in `fmt`: small enough for any event, decoded by that format's own code."""
    return encode(photo("chelsea").resize((96, 96)), fmt)
