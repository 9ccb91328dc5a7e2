"""Text classification: strings -> token ids -> the most likely label and its probability, and with top_k the k best
labels ranked (None: every label); multi-label: every label at or above the threshold, at most top_k of them."""
from __future__ import annotations

import numpy as np

from function.model.outputs import is_label_score, most_likely
from function.tasks.base import Batch, Result
from function.tasks.classification import (check_labels, is_multi_label_result, is_ranked_result,
                                           multi_label_results, ranked_count, ranked_results, threshold_of)
from function.tasks.text import TextTask


class TextClassification(TextTask):
    name = "text_classification"
    default_model = "text"

    def check_manifest(self) -> None:
        super().check_manifest()
        check_labels(self)

    def cache_options(self, options: dict) -> dict:
        threshold = threshold_of(self, options)  # refuses a threshold for a model that picks one label
        ranking = {"top_k": self.top_k(options)} if "top_k" in options else {}
        return {"threshold": threshold, **ranking} if self.manifest.multi_label else ranking

    def top_k(self, options: dict) -> int:
        return ranked_count(options["top_k"], self.manifest.labels)

    def postprocess(self, outputs: dict[str, np.ndarray], batch: Batch, options: dict) -> list[Result]:
        manifest = self.manifest
        if manifest.multi_label:
            results = multi_label_results(self, outputs["scores"], options)
            if "top_k" in options:  # at most top_k of the labels at or above the threshold
                top_k = self.top_k(options)
                results = [{"labels": result["labels"][:top_k]} for result in results]
            return results
        if "top_k" not in options:  # the one best label: the common answer, without ranking every row
            return most_likely(outputs["scores"], manifest.output, manifest.labels)
        return ranked_results(self, outputs["scores"], self.top_k(options))

    def is_valid_result(self, result: object, options: dict) -> bool:
        if self.manifest.multi_label:
            return is_multi_label_result(self, result, options) and (
                "top_k" not in options or len(result["labels"]) <= self.top_k(options))
        if "top_k" not in options:
            return is_label_score(result, frozenset(self.manifest.labels)) and set(result) == {"label", "score"}
        return is_ranked_result(self, result, self.top_k(options))
