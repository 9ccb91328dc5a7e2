"""Image classification: image bytes -> decoded, resized, normalized pixels -> ranked labels, and the values of any
other output beside them ("outputs": {name: [...]}, a value head)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from function.cache.keys import digest_bytes
from function.log import Timings
from function.preprocessing.color_modes import CHANNELS
from function.records import named_tuple
from function.tasks.base import Batch, Result, Task
from function.tasks.classification import (check_labels, is_multi_label_result, is_ranked_result,
                                           multi_label_results, ranked_count, ranked_results, threshold_of)
from function.tasks.values import is_values, value_rows, value_specs

DEFAULT_TOP_K = 5


@named_tuple
class ImageInput:
    data: bytes
    where: str = "the image"  # for error messages: "field 'images[2]'"


class ImageClassification(Task):
    name = "image_classification"
    default_model = "image"
    answers_values = True

    def check_manifest(self) -> None:
        self.check_image_input()
        check_labels(self)

    def check_image_input(self) -> None:
        """An image input that the preprocessing's size and colour mode fit."""
        manifest = self.manifest
        spec = manifest.input("image")
        self.require(spec is not None, "an image_classification model needs an input with role 'image'")
        self.require(len(spec.shape) == 4, f"input {spec.name!r} has shape {list(spec.shape)}; an image model takes "
                     "[batch, height, width, channels]")
        self.require(np.dtype(spec.dtype).kind == "f" or spec.scale is not None,
                     f"input {spec.name!r} is {spec.dtype}; an image model takes float pixels")
        preprocessing = manifest.preprocessing
        color_mode = preprocessing.get("color_mode", "RGB")
        self.require(color_mode in CHANNELS, f"preprocessing.color_mode {color_mode!r} is not {' or '.join(CHANNELS)}")
        channels = CHANNELS[color_mode]
        size = preprocessing.get("size")
        self.require(isinstance(size, list) and len(size) == 2, "preprocessing.size must be [height, width]")
        self.require(list(spec.shape[1:]) in ([*size, channels], [-1, -1, channels]),
                     f"preprocessing (size {size}, {color_mode}) does not fit input shape {list(spec.shape)}")

    def input_digest(self, item: ImageInput) -> str:
        return digest_bytes(item.data)

    def cache_options(self, options: dict) -> dict:
        threshold = threshold_of(self, options)  # refuses a threshold for a model that picks one label
        return {"threshold": threshold} if self.manifest.multi_label else {"top_k": self.top_k(options)}

    def top_k(self, options: dict) -> int:
        """How many labels to rank: the request's top_k (None: every label), capped at the model's labels."""
        return ranked_count(options.get("top_k", DEFAULT_TOP_K), self.manifest.labels)

    def preprocessor(self):
        from function.preprocessing.image import ImagePreprocessor  # noqa: PLC0415  (Pillow only where needed)

        return self.component("preprocessor",
                              lambda: ImagePreprocessor(self.manifest.preprocessing, self.limits.max_image_pixels))

    def load(self) -> None:
        self.runner()
        self.preprocessor()

    def bytes_input(self) -> str:
        return self.manifest.input("image").name

    def tensor_from_bytes(self, data: bytes, where: str, timings: Timings) -> np.ndarray:
        """One image's bytes -> the model's (height, width, channels) input: decoded, upright, in the model's colour
        mode, resized and normalized. /classify and the tensor protocols' encoded images both come this way."""
        preprocessor = self.preprocessor()
        with timings.stage("decode"):
            image = preprocessor.decode(data, where)
        with timings.stage("preprocess"):
            return preprocessor.to_array(image)

    def preprocess(self, items: Sequence[ImageInput], timings: Timings) -> Batch:
        # Resize each image right after decoding it: one full-size photo in memory at a time.
        arrays = [self.tensor_from_bytes(item.data, item.where, timings) for item in items]
        with timings.stage("preprocess"):
            # A single image is the common case: a view, not np.stack's copy (~0.25 ms of a ~5 ms request).
            return Batch({"image": arrays[0][np.newaxis] if len(arrays) == 1 else np.stack(arrays)})

    def postprocess(self, outputs: dict[str, np.ndarray], batch: Batch, options: dict) -> list[Result]:
        if self.manifest.multi_label:
            results = multi_label_results(self, outputs["scores"], options)
        else:
            results = ranked_results(self, outputs["scores"], self.top_k(options))
        beside = value_specs(self.manifest)
        if beside:
            for result, values in zip(results, value_rows(outputs, beside)):
                result["outputs"] = values
        return results

    def is_valid_result(self, result: object, options: dict) -> bool:
        beside = value_specs(self.manifest)
        if beside:
            if not isinstance(result, dict) or not is_values(result.get("outputs"), beside):
                return False
            result = {key: value for key, value in result.items() if key != "outputs"}
        if self.manifest.multi_label:
            return is_multi_label_result(self, result, options)
        return is_ranked_result(self, result, self.top_k(options))

