"""The floor of a route as a Lambda handler: bench.raw_pipeline's LiteRT engine behind the route's bare request and
answer (bench/baselines/route_answers.py), loaded at init. Its cold start is the least a fresh environment can
take to answer that route with these libraries; the function's is measured against it."""

from bench.baselines import model_files, route_answers
from bench.raw_pipeline import RawModel

MODEL = RawModel(model_files.model_dir())


def handler(event, context):
    return route_answers.answer(MODEL, event)
