"""The kinds of model convert knows, one class each (docs/model-format.md): what its sidecar holds, how that must fit
the SavedModel's signature, and which fidelity gate judges a conversion."""
from __future__ import annotations

from convert.tasks.base import TaskKind
from convert.tasks.classification import ImageClassification, TextClassification
from convert.tasks.guessed import Guessed
from convert.tasks.image_regression import ImageRegression
from convert.tasks.tensor import Tensor
from convert.tasks.text_embedding import TextEmbedding

TASK_KINDS: dict[str, TaskKind] = {kind.name: kind for kind in (
    ImageClassification(), ImageRegression(), TextClassification(), TextEmbedding(), Tensor())}
WITHOUT_SIDECAR: TaskKind = Guessed()
