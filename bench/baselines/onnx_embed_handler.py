"""Embedding baseline: /embed on ONNX Runtime + tokenizers, the stack usually recommended for sentence embeddings
on Lambda (instead of PyTorch + sentence-transformers), serving bench/minilm_onnx.py's all-MiniLM-L6-v2 graph.

Loads at init like the other baselines; one intra-op thread, like the function's LiteRT interpreter, since a
1,769 MB Lambda has one vCPU. tokenizer.json truncates at 256 tokens and pads each batch to its longest text.
"""

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

from bench.baselines import model_files, text_request

MODEL_DIR = model_files.model_dir()
SIDECAR = model_files.load_sidecar(MODEL_DIR)
TOKENIZER = Tokenizer.from_file(str(MODEL_DIR / SIDECAR["preprocessing"]["tokenizer"]))
_OPTIONS = onnxruntime.SessionOptions()
_OPTIONS.intra_op_num_threads = 1
SESSION = onnxruntime.InferenceSession(str(MODEL_DIR / "model.onnx"), _OPTIONS, providers=["CPUExecutionProvider"])
OUTPUT_NAME = SIDECAR["outputs"]["embedding"]


def handler(event, context):
    try:
        texts, normalize = text_request.embed_request(event)
    except text_request.BadRequest as error:
        return text_request.error(str(error))
    encodings = TOKENIZER.encode_batch(texts)
    feeds = {"input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
             "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64)}
    (vectors,) = SESSION.run([OUTPUT_NAME], feeds)
    if normalize:
        vectors = text_request.unit_rows(vectors)
    return text_request.response(SIDECAR["name"], vectors, [bool(e.overflowing) for e in encodings])
