"""Models served as they predict: exported in inference mode, and a SavedModel exported in training mode refused.

Keras's `model.export()` traces the model's call without `training=False`, so a model with augmentation layers
(RandomFlip, RandomRotation, ... whose `training` defaults to True), Dropout or BatchNormalization can be exported
in training mode: augmentation runs on every request, BatchNormalization normalises with the batch's statistics
instead of its moving ones, and the export answers other than `model.predict`. convert exports `.keras` files
itself with an `ExportArchive` endpoint that calls `model(x, training=False)` (`export_for_inference`); a SavedModel
the user exported is checked for random ops in its graph (`check_graph`) and for answers that change between two
runs on the same inputs or with the batch they come in (`check_answers`), and refused saying how to export it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from convert.errors import ConversionError, first_line
from convert.quiet import import_tensorflow

CODE = "training_mode_export"
# Op types that draw random numbers: augmentation layers and Dropout traced with training=True.
RANDOM_OP_MARKERS = ("Random", "Rng")
SHOWN_OPS = 4
# How far two runs of a deterministic inference graph may differ (float32 kernels with other batch sizes).
ANSWER_TOLERANCE = 1e-3
CHECKED_SAMPLES = 8
ENDPOINT = "serve"

EXPORT_ADVICE = ("export it in inference mode: archive = keras.export.ExportArchive(); archive.track(model); "
                 "archive.add_endpoint(\"serve\", lambda x: model(x, training=False), input_signature=["
                 "keras.InputSpec(shape=model.input.shape, dtype=model.input.dtype)]); archive.write_out(DIR); or give "
                 "convert the model's .keras file, which it exports that way itself")


def export_for_inference(model, directory: Path, keras, source_name: str) -> None:
    """The model as a SavedModel whose `serving_default` calls it with training=False; the signature takes the
    inputs `model.export()` would name. A model Keras cannot export so is refused (export_failed), naming
    `source_name`, the file it came from."""
    try:
        _export(model, directory, keras)
    except Exception as error:  # noqa: BLE001  (Keras raises many types; each means the model cannot be exported)
        raise ConversionError("export_failed", f"exporting {source_name} in inference mode fails: "
                              f"{first_line(error)}") from None


def _export(model, directory: Path, keras) -> None:
    from keras.src.export.export_utils import get_input_signature  # noqa: PLC0415  (model.export()'s own signature)

    def named(outputs):
        """A list of outputs keyed by the model's output names (model.export() would call them output_0, ...), so
        the served outputs carry the names the user gave them."""
        if isinstance(outputs, (list, tuple)) and len(outputs) == len(model.output_names) > 1:
            return dict(zip(model.output_names, outputs))
        return outputs

    signature = get_input_signature(model)
    archive = keras.export.ExportArchive()
    archive.track(model)
    if len(signature) == 1:
        archive.add_endpoint(ENDPOINT, lambda inputs: named(model(inputs, training=False)), input_signature=signature)
    else:
        archive.add_endpoint(ENDPOINT, lambda *inputs: named(model(list(inputs), training=False)),
                             input_signature=signature)
    archive.write_out(str(directory), verbose=False)



def random_ops(function) -> list[str]:
    """The random op types in a concrete function's graph and every function it calls."""
    graph = function.graph.as_graph_def()
    nodes = list(graph.node) + [node for library in graph.library.function for node in library.node_def]
    return sorted({node.op for node in nodes if any(marker in node.op for marker in RANDOM_OP_MARKERS)})


def check_graph(path: Path, function) -> None:
    """Refuse a serving signature that draws random numbers: augmentation or Dropout traced in training mode."""
    found = random_ops(function)
    if found:
        shown = ", ".join(found[:SHOWN_OPS]) + (", ..." if len(found) > SHOWN_OPS else "")
        raise ConversionError(CODE, f"{path.name} was exported in training mode: its serving signature draws random "
                              f"numbers ({shown}), so augmentation or Dropout layers run on every request "
                              f"(model.export() traces them with training=True); {EXPORT_ADVICE}")


def _answers(function, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    tf = import_tensorflow()
    try:
        result = function(**{name: tf.constant(array) for name, array in inputs.items()})
    except Exception as error:  # noqa: BLE001  (the reference run reports these inputs' failure in its own words)
        raise ConversionError("reference_failed", f"the SavedModel itself fails on the validation inputs: "
                              f"{first_line(error)}") from None
    return {name: np.asarray(tensor, dtype=np.float32) for name, tensor in result.items()}


def _largest_difference(first: dict[str, np.ndarray], second: dict[str, np.ndarray]) -> float:
    return max(float(np.max(np.abs(first[name] - second[name]), initial=0.0)) for name in first)


def check_answers(path: Path, function, inputs: dict[str, np.ndarray]) -> None:
    """Refuse a signature whose answers on the same inputs change between runs, or with the batch around them
    (BatchNormalization using the batch's statistics)."""
    count = min(CHECKED_SAMPLES, *(len(array) for array in inputs.values()))
    if count < 1:
        return
    batch = {name: array[:count] for name, array in inputs.items()}
    first, second = _answers(function, batch), _answers(function, batch)
    scale = max(1.0, *(float(np.max(np.abs(array), initial=0.0)) for array in first.values()))
    difference = _largest_difference(first, second)
    if difference > ANSWER_TOLERANCE * scale:
        raise ConversionError(CODE, f"{path.name} answers the same {count} validation inputs differently on two runs "
                              f"(by up to {difference:.3g}): it was exported in training mode, with augmentation or "
                              f"Dropout running on every request; {EXPORT_ADVICE}")
    if count < 2:
        return
    alone = _answers(function, {name: array[:1] for name, array in batch.items()})
    difference = _largest_difference(alone, {name: array[:1] for name, array in first.items()})
    if difference > ANSWER_TOLERANCE * scale:
        raise ConversionError(CODE, f"{path.name} answers a validation input differently alone than in a batch of "
                              f"{count} (by up to {difference:.3g}): it was exported in training mode, with "
                              f"BatchNormalization using each batch's statistics; {EXPORT_ADVICE}")
