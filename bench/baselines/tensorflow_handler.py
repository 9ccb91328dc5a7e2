"""Baseline (b): /classify served the way the common tutorials do it, tensorflow-cpu loading the SavedModel.

Loads at import time (the Lambda init phase) like those tutorials; preprocessing and the answer's shape are the
function's own (bench/baselines/image_request.py), so only the inference stack differs.
"""

import tensorflow as tf

from bench.baselines import image_request, model_files

MODEL_DIR = model_files.model_dir()
SIDECAR = model_files.load_sidecar(MODEL_DIR)
MODEL = tf.saved_model.load(str(MODEL_DIR))
SERVE = MODEL.signatures["serving_default"]
INPUT_NAME = SIDECAR["inputs"]["image"]


def handler(event, context):
    batch = image_request.preprocess(image_request.images_from_event(event), SIDECAR["preprocessing"])
    outputs = SERVE(**{INPUT_NAME: tf.constant(batch)})
    scores = next(iter(outputs.values())).numpy()
    return image_request.response(SIDECAR["name"], "saved_model", SIDECAR["labels"],
                                  image_request.probabilities(scores, SIDECAR["output"]),
                                  image_request.requested_top_k(event))
