"""Text classification: strings -> token ids -> the most likely label and its probability (multi-label: every
label at or above the threshold)."""
from __future__ import annotations

import numpy as np

from function.model.outputs import is_label_score, most_likely
from function.tasks.base import Batch, Result
from function.tasks.classification import (check_labels, is_multi_label_result, multi_label_results,
                                           threshold_of)
from function.tasks.text import TextTask


class TextClassification(TextTask):
    name = "text_classification"

    def check_manifest(self) -> None:
        super().check_manifest()
        check_labels(self)

    def cache_options(self, options: dict) -> dict:
        threshold = threshold_of(self, options)  # refuses a threshold for a model that picks one label
        return {"threshold": threshold} if self.manifest.multi_label else {}

    def postprocess(self, outputs: dict[str, np.ndarray], batch: Batch, options: dict) -> list[Result]:
        if self.manifest.multi_label:
            return multi_label_results(self, outputs["scores"], options)
        return most_likely(outputs["scores"], self.manifest.output, self.manifest.labels)

    def is_valid_result(self, result: object, options: dict) -> bool:
        if self.manifest.multi_label:
            return is_multi_label_result(self, result, options)
        return is_label_score(result, frozenset(self.manifest.labels)) and set(result) == {"label", "score"}
