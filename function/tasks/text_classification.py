"""Text classification: strings -> token ids -> the most likely label and its probability, and with top_k the k best
labels ranked (None: every label; multi-label: every label at or above the threshold)."""
from __future__ import annotations

import numpy as np

from function.errors import quoted, refuse
from function.model.outputs import is_label_score, most_likely
from function.tasks.base import Batch, Result
from function.tasks.classification import (check_labels, is_multi_label_result, is_ranked_result,
                                           multi_label_results, ranked_count, ranked_results, threshold_of)
from function.tasks.text import TextTask


class TextClassification(TextTask):
    name = "text_classification"

    def check_manifest(self) -> None:
        super().check_manifest()
        check_labels(self)

    def cache_options(self, options: dict) -> dict:
        threshold = threshold_of(self, options)  # refuses a threshold for a model that picks one label
        if self.manifest.multi_label:
            if "top_k" in options:
                raise refuse("invalid_field", f"'top_k' applies to models that answer one label; model "
                             f"{quoted(self.manifest.name)} is multi-label and answers every label at or above "
                             "'threshold' (0 answers them all).", param="top_k")
            return {"threshold": threshold}
        return {"top_k": self.top_k(options)} if "top_k" in options else {}

    def top_k(self, options: dict) -> int:
        return ranked_count(options["top_k"], self.manifest.labels)

    def postprocess(self, outputs: dict[str, np.ndarray], batch: Batch, options: dict) -> list[Result]:
        manifest = self.manifest
        if manifest.multi_label:
            return multi_label_results(self, outputs["scores"], options)
        if "top_k" not in options:  # the one best label: the common answer, without ranking every row
            return most_likely(outputs["scores"], manifest.output, manifest.labels)
        return ranked_results(self, outputs["scores"], self.top_k(options))

    def is_valid_result(self, result: object, options: dict) -> bool:
        if self.manifest.multi_label:
            return is_multi_label_result(self, result, options)
        if "top_k" not in options:
            return is_label_score(result, frozenset(self.manifest.labels)) and set(result) == {"label", "score"}
        return is_ranked_result(self, result, self.top_k(options))
