"""What classifiers share: labels that fit the scores output."""
from __future__ import annotations

import numpy as np

from function.tasks.base import Task


def check_labels(task: Task) -> None:
    """A classifier's labels fit its scores output: one per unit, two for a single sigmoid unit."""
    manifest = task.manifest
    task.require(manifest.output in ("probabilities", "logits"),
                 f"output must be probabilities or logits, not {manifest.output!r}")
    task.require(bool(manifest.labels), "a classifier needs labels")
    scores = manifest.output_spec("scores")
    task.require(scores is not None, "a classifier needs an output with role 'scores'")
    task.require(len(manifest.outputs) == 1, f"a classifier has one output; {len(manifest.outputs)} would leave "
                 "all but 'scores' unanswered: serve the model with task tensor")
    units = int(np.prod(scores.shape[1:])) if len(scores.shape) > 1 else 1
    task.require(len(manifest.labels) == (2 if units == 1 else units),
                 f"{len(manifest.labels)} labels for an output of {units} unit(s)")

