"""Baseline (c): /classify on ONNX Runtime, running the SavedModel after tf2onnx converted it (bench/onnx_export.py).

Same init-time loading, preprocessing and answer shape as the TensorFlow baseline; one intra-op thread, like the
function's LiteRT interpreter, since a 1,769 MB Lambda has one vCPU.
"""

import onnxruntime

from bench.baselines import image_request, model_files

MODEL_DIR = model_files.model_dir()
SIDECAR = model_files.load_sidecar(MODEL_DIR)
_OPTIONS = onnxruntime.SessionOptions()
_OPTIONS.intra_op_num_threads = 1
SESSION = onnxruntime.InferenceSession(str(MODEL_DIR / "model.onnx"), _OPTIONS, providers=["CPUExecutionProvider"])
INPUT_NAME = SESSION.get_inputs()[0].name


def handler(event, context):
    batch = image_request.preprocess(image_request.images_from_event(event), SIDECAR["preprocessing"])
    scores = SESSION.run(None, {INPUT_NAME: batch})[0]
    return image_request.response(SIDECAR["name"], "onnx", SIDECAR["labels"],
                                  image_request.probabilities(scores, SIDECAR["output"]),
                                  image_request.requested_top_k(event))
