"""Both models on the same inputs: the SavedModel (TensorFlow) as the reference, the converted one in LiteRT."""
from __future__ import annotations

import numpy as np

from convert.errors import ConversionError, first_line
from convert.litert_model import LiteRTModel
from convert.progress import progress
from convert.quiet import import_tensorflow
from convert.samples import Samples

REFERENCE_BATCH = 64


def reference_outputs(function, samples: Samples) -> dict[str, np.ndarray]:
    """The SavedModel's own answers as float32, in batches so large validation sets stay small in memory."""
    tf = import_tensorflow()
    chunks = []
    with progress().step("the SavedModel", total=samples.count) as step:
        for start in range(0, samples.count, REFERENCE_BATCH):
            batch = {name: tf.constant(array[start:start + REFERENCE_BATCH]) for name, array in samples.inputs.items()}
            try:
                result = function(**batch)
            except Exception as error:  # noqa: BLE001  (TF raises many types; all mean these inputs do not fit)
                raise ConversionError("reference_failed", f"the SavedModel itself fails on the validation inputs "
                                      f"({samples.source}): {first_line(error)}") from None
            chunks.append({name: np.asarray(tensor).astype(np.float32) for name, tensor in result.items()})
            step.advance(len(next(iter(batch.values()))))
    outputs = {name: np.concatenate([chunk[name] for chunk in chunks]) for name in chunks[0]}
    broken = [name for name, array in outputs.items() if not np.isfinite(array).all()]
    if broken:
        raise ConversionError("reference_failed", f"the SavedModel itself outputs NaN/Inf ({', '.join(broken)}) on "
                              f"{samples.source}: fix the model or its validation inputs before converting")
    return outputs


def converted_outputs(model: LiteRTModel, samples: Samples, mode: str) -> dict[str, np.ndarray]:
    """The converted model's answers, dequantized to float32 with the manifest's numbers."""
    try:
        with progress().step(f"{mode} in LiteRT", total=samples.count) as step:
            return model.predict_batches(samples.inputs, advance=step.advance)
    except (RuntimeError, ValueError) as error:
        raise ConversionError("converted_model_failed",
                              f"LiteRT cannot run the converted {mode} model: {first_line(error)}") from None
