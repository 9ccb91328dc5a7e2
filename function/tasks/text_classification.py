"""Text classification: strings -> token ids -> the most likely label and its probability."""
from __future__ import annotations

import numpy as np

from function.model.outputs import is_label_score, probabilities
from function.tasks.base import Batch, Result
from function.tasks.classification import check_labels
from function.tasks.text import TextTask


class TextClassification(TextTask):
    name = "text_classification"

    def check_manifest(self) -> None:
        super().check_manifest()
        check_labels(self)

    def cache_options(self, options: dict) -> dict:
        return {}

    def postprocess(self, outputs: dict[str, np.ndarray], batch: Batch, options: dict) -> list[Result]:
        results = []
        for row in probabilities(outputs["scores"], self.manifest.output):
            best = int(row.argmax())
            results.append({"label": self.manifest.labels[best], "score": round(float(row[best]), 6)})
        return results

    def is_valid_result(self, result: object, options: dict) -> bool:
        return is_label_score(result, frozenset(self.manifest.labels)) and set(result) == {"label", "score"}
