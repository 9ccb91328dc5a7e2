"""Image regression: image bytes -> the same decoded, resized, normalized pixels as an image classifier's -> every
output as values ({"outputs": {name: [...]}}). Its clients use TensorFlow Serving's REST API, which takes the image
as encoded bytes ({"b64": ...}) and answers every output (the Open Inference Protocol too, fed the pixel tensor);
/classify answers labels, which this model has none of, and says where to go instead."""
from __future__ import annotations

import numpy as np

from function.tasks.base import Batch, Result
from function.tasks.image_classification import ImageClassification
from function.tasks.values import is_values, value_rows, value_specs, values_line

ANSWERED_AT = ("it answers values: send the image to TensorFlow Serving's REST API, POST /v1/models/{name}:predict "
               "with {\"instances\": [{\"b64\": \"<image in base64>\"}]}")


class ImageRegression(ImageClassification):
    name = "image_regression"
    default_model = ""  # no route of its own: never a route's default model
    answered_at = ANSWERED_AT

    def check_manifest(self) -> None:
        self.check_image_input()
        self.require(not self.manifest.labels, "an image_regression model answers values: it has no labels")
        for spec in self.manifest.outputs:
            self.require(np.dtype(spec.dtype).kind == "f" or spec.scale is not None,
                         f"output {spec.name!r} is {spec.dtype}; an image_regression model answers float values")

    def cache_options(self, options: dict) -> dict:
        return {}

    def postprocess(self, outputs: dict[str, np.ndarray], batch: Batch, options: dict) -> list[Result]:
        return [{"outputs": values} for values in value_rows(outputs, value_specs(self.manifest))]

    def is_valid_result(self, result: object, options: dict) -> bool:
        return isinstance(result, dict) and set(result) == {"outputs"} and is_values(result["outputs"],
                                                                                     value_specs(self.manifest))

    def summary(self, result: Result) -> dict:
        return {"outputs": result["outputs"]}

    def summary_line(self, summary: dict) -> str:
        return "values: " + values_line(summary["outputs"])
