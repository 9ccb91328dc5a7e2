"""TFLiteConverter settings for each quantization mode, and converter failures turned into advice."""
from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from pathlib import Path

from convert.errors import ConversionError
from convert.progress import progress
from convert.quiet import import_tensorflow, quiet_native_stderr
from convert.samples import Samples
from convert.saved_model_inspect import SIGNATURE

# mixed is not a converter setting: convert/mixed_precision.py rewrites the float32 model's weights.
MODES = ("float32", "float16", "dynamic", "mixed", "int8")
# Flex op names that come from text handling inside the model (TextVectorization, lookups, ragged splits).
STRING_OP_MARKERS = ("String", "Regex", "Lookup", "Ragged", "Unicode")
# The scope of the op that failed, in the converter's location text: "functional_1/lstm_1/TensorArrayV2_1@..." names
# the layer (lstm_1); a Bidirectional layer's loops sit one scope deeper (bidirectional/forward_lstm).
TENSOR_LIST_SCOPE = re.compile(r'"TensorList\w*:", "[^/"]+/([^"@]+?)/(?:while/|TensorArray)')
# Calibration cost grows with every sample; a few hundred real inputs pin the activation ranges well enough.
CALIBRATION_LIMIT = 200


def _calibration_count(mode: str, representative: Samples | None) -> int | None:
    return min(representative.count, CALIBRATION_LIMIT) if mode == "int8" and representative is not None else None


def _representative_dataset(samples: Samples, advance: Callable[[int], None]):
    def generate():
        for index in range(min(samples.count, CALIBRATION_LIMIT)):
            yield samples.one(index)
            advance(1)
    return generate


def _configure(converter, mode: str, representative: Samples | None, advance: Callable[[int], None]) -> None:
    tf = import_tensorflow()

    if mode == "float32":
        return
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    if mode == "float16":
        converter.target_spec.supported_types = [tf.float16]
    elif mode == "int8":
        if representative is None:
            raise ConversionError("no_representative_data", "int8 needs real inputs to calibrate with: pass "
                                  "--representative FILE.npz (inputs_<role> arrays) or give the SavedModel a "
                                  "sidecar.json with validation samples")
        converter.representative_dataset = _representative_dataset(representative, advance)
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        # Float inputs/outputs become int8 tensors; int32 token ids stay int32 (the converter ignores the input type
        # for integer inputs: tests/functional/convert/test_convert_manifest_contract.py shows the manifest it gives).
        converter.inference_input_type = tf.int8
        converter.inference_output_type = tf.int8


def explain_converter_failure(text: str, mode: str) -> ConversionError:
    """The converter's exception text as one line saying what to change."""
    if "neither a custom op nor a flex op" in text or "TF Select ops" in text:
        found = re.search(r"TF Select ops: ([^\n]+)", text)
        names = [name.strip() for name in found.group(1).split(",")] if found else []
        ops = f" ({', '.join(names)})" if names else ""
        if any("HashTable" in name or "LookupTable" in name for name in names):
            advice = ("here the lookup tables of StringLookup / IntegerLookup layers: convert the model's .keras file "
                      "(python -m convert MODEL.keras OUT), which takes lookup and normalization layers at named "
                      "inputs out into the manifest (docs/tensor-models.md)")
        elif not names or any(marker in name for name in names for marker in STRING_OP_MARKERS):
            advice = "such as the string ops of a TextVectorization layer: tokenize outside the model, feed int32 ids"
        elif "StridedSlice" in names:
            advice = ("here a slice that adds axes (x[:, :, None]) to a tensor with open dimensions: use "
                      "keras.ops.expand_dims or a reshape instead, and export again")
        else:
            advice = "in the form this model uses them: rewrite those layers with ops TFLite has, and export again"
        return ConversionError("needs_flex", f"the model uses TensorFlow ops LiteRT cannot run{ops}, {advice}")
    if "TensorList" in text:
        scope = TENSOR_LIST_SCOPE.search(text)
        layer = f"recurrent layer '{scope.group(1)}'" if scope else "a recurrent layer (LSTM, GRU, RNN)"
        return ConversionError("recurrent_layer", f"{layer} runs a loop over TensorList ops, which the TFLite "
                               "converter lowers only when every shape is fixed, batch included: convert the "
                               "model's .keras file instead (python -m convert MODEL.keras OUT --sidecar "
                               "SIDECAR.json unrolls it), or build the layer with unroll=True over a fixed sequence "
                               "length and export again")
    if "'NoneType' object is not callable" in text:
        return ConversionError("underscore_layer_name", "the converter failed with \"'NoneType' object is not "
                               "callable\", which Keras layer names starting with '_' cause: rename them and "
                               "export again")
    lines = [without_location(line.strip()) for line in text.splitlines() if line.strip()]
    first_error = next((line for line in lines if "error" in line.lower()), lines[0] if lines else "no details")
    return ConversionError("converter_failed", f"the TFLite converter failed in {mode} mode: {first_error[:300]}")


def without_location(line: str) -> str:
    """An MLIR error line without its `loc(callsite(...))` prefix, which can fill hundreds of characters before
    the reason: "<unknown>:0: error: loc(...): 'tf.X' op requires ..." -> "error: 'tf.X' op requires ..."."""
    start = line.find("loc(")
    if start < 0:
        return line
    depth = 0
    for index in range(start + 3, len(line)):
        depth += {"(": 1, ")": -1}.get(line[index], 0)
        if depth == 0:
            prefix = line[:start].rsplit("error:", 1)
            head = "error: " if len(prefix) == 2 else prefix[0]
            return (head + line[index + 1:].lstrip(": ")).strip()
    return line


def convert_saved_model(saved_model_dir: Path, mode: str, representative: Samples | None = None) -> bytes:
    """The .tflite bytes of the SavedModel's serving signature in the given mode."""
    tf = import_tensorflow()

    converter = tf.lite.TFLiteConverter.from_saved_model(str(saved_model_dir), signature_keys=[SIGNATURE])
    calibration = _calibration_count(mode, representative)
    try:
        with (progress().step(f"converting to {mode}" + (" (calibrating)" if calibration else ""),
                              total=calibration) as step, quiet_native_stderr(), warnings.catch_warnings()):
            _configure(converter, mode, representative, step.advance)
            warnings.simplefilter("ignore")  # calibration uses the deprecated tf.lite.Interpreter and says so
            return converter.convert()
    except ConversionError:
        raise
    except Exception as error:  # noqa: BLE001  (the converter raises many types; each becomes one line of advice)
        raise explain_converter_failure(str(error), mode) from None
