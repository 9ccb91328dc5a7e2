"""Fixtures for the tensor protocols' tests: the demo models (tabular among them, converted by `make models`) and
the tabular SavedModel's own outputs on its validation rows (saved_model/recipes/tabular.py writes them)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from function.catalog.registry import ModelRegistry
from function.service import Service
from tests.support.function_fixtures import REPO, demo_models, make_service  # noqa: F401

TABULAR = "tabular"
TABULAR_SAVED_MODEL = REPO / "saved_model" / TABULAR
# |served - SavedModel| <= ATOL + RTOL * |SavedModel|, per value of every output, for a float32 conversion
# (docs/tensor-models.md; measured: 6.1e-5 on progression values of ~25-350, 6.6e-7 on risk probabilities).
ATOL, RTOL = 1e-5, 1e-5


@pytest.fixture(scope="session")
def tensor_model_dir(demo_models: Path) -> Path:
    return demo_models


@pytest.fixture(scope="session")
def tensor_registry(tensor_model_dir: Path) -> ModelRegistry:
    return ModelRegistry(tensor_model_dir)


@pytest.fixture()
def tensor_service(tensor_registry: ModelRegistry) -> Service:
    """A warm service over every model, with an empty in-memory result cache."""
    return make_service(tensor_registry)


def tabular_samples() -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(validation inputs by input name, the SavedModel's own outputs on them by output name)."""
    inputs = np.load(TABULAR_SAVED_MODEL / "validation.npz")
    outputs = np.load(TABULAR_SAVED_MODEL / "reference_outputs.npz")
    return ({key.removeprefix("inputs_"): inputs[key] for key in inputs.files},
            {key.removeprefix("outputs_"): outputs[key] for key in outputs.files})


def assert_matches_saved_model(got: object, want: np.ndarray) -> None:
    np.testing.assert_allclose(np.asarray(got, np.float64), want.astype(np.float64), rtol=RTOL, atol=ATOL)
