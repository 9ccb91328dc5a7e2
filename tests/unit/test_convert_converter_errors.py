"""Converter failures, as TF 2.21 words them, become one line of advice."""
from __future__ import annotations

from convert.quantize import explain_converter_failure

# Abridged from a real ConverterError of a model with a TextVectorization layer (TF 2.21).
FLEX_TEXT = """Could not translate MLIR to FlatBuffer.<unknown>:0: error: loc(callsite(fused["StringLower:", "..."])): 'tf.StringLower' op is neither a custom op nor a flex op
<unknown>:0: note: called from
<unknown>:0: error: failed while converting: 'main':
Some ops are not supported by the native TFLite runtime, you can enable TF kernels fallback using TF Select. See instructions: https://www.tensorflow.org/lite/guide/ops_select
TF Select ops: RaggedTensorToTensor, StaticRegexReplace, StringLower, StringSplitV2
Details:
\ttf.StringLower(tensor<?x1x!tf_type.string>) -> (tensor<?x1x!tf_type.string>)"""


def test_flex_ops_are_named_with_the_fix():
    error = explain_converter_failure(FLEX_TEXT, "dynamic")
    assert error.code == "needs_flex"
    assert "(RaggedTensorToTensor, StaticRegexReplace, StringLower, StringSplitV2)" in error.message
    assert error.message.endswith("tokenize outside the model, feed int32 ids")
    assert "\n" not in error.message


def test_lookup_tables_point_to_the_keras_file_route_not_to_text_vectorization():
    """A StringLookup model exported as a SavedModel: the converter's own list of ops (TF 2.21)."""
    text = FLEX_TEXT.replace("RaggedTensorToTensor, StaticRegexReplace, StringLower, StringSplitV2",
                             "HashTableV2, LookupTableFindV2, LookupTableImportV2")
    error = explain_converter_failure(text, "dynamic")
    assert error.code == "needs_flex" and "TextVectorization" not in error.message
    assert "StringLookup / IntegerLookup" in error.message and "python -m convert MODEL.keras OUT" in error.message


def test_underscore_layer_names():
    error = explain_converter_failure("'NoneType' object is not callable", "float32")
    assert error.code == "underscore_layer_name" and "starting with '_'" in error.message


def test_anything_else_keeps_the_first_error_line():
    error = explain_converter_failure("Converting...\nerror: 'tfl.custom' op has no kernel\nmore", "int8")
    assert error.code == "converter_failed"
    assert error.message == "the TFLite converter failed in int8 mode: error: 'tfl.custom' op has no kernel"


# Abridged from the converter's error for `mask[:, :, None]` on a (None, None) float tensor (TF 2.21).
NEW_AXIS_TEXT = """<unknown>:0: error: loc(...): 'tf.StridedSlice' op is neither a custom op nor a flex op
<unknown>:0: error: failed while converting: 'main':
Some ops are not supported by the native TFLite runtime, you can enable TF kernels fallback using TF Select.
TF Select ops: StridedSlice
\ttf.StridedSlice(tensor<?x?xf32>, ...) -> (tensor<?x?x1xf32>) : {new_axis_mask = 4 : i64}"""


def test_a_new_axis_slice_on_open_dimensions_gets_its_own_advice():
    error = explain_converter_failure(NEW_AXIS_TEXT, "float32")
    assert error.code == "needs_flex" and "(StridedSlice)" in error.message
    assert "x[:, :, None]" in error.message and "keras.ops.expand_dims" in error.message
    assert "tokenize" not in error.message


def test_other_flex_ops_are_not_blamed_on_text():
    error = explain_converter_failure("error: 'tf.Foo' op is neither a custom op nor a flex op\nTF Select ops: Foo",
                                      "float32")
    assert error.message.endswith("(Foo), in the form this model uses them: rewrite those layers with ops TFLite "
                                  "has, and export again")


# Abridged from the converter's error for a Keras 3 LSTM(unroll=False) exported with model.export() (TF 2.21).
TENSOR_LIST_TEXT = """<unknown>:0: error: loc(callsite(fused["TensorListReserve:", "functional_1/lstm_1/TensorArrayV2_1@__inference___call___615"] at callsite(fused["StatefulPartitionedCall:", "StatefulPartitionedCall@__inference_signature_wrapper___call___650"] at fused["StatefulPartitionedCall:", "StatefulPartitionedCall_1"]))): 'tf.TensorListReserve' op requires element_shape to be static during TF Lite transformation pass
<unknown>:0: error: Lowering tensor list ops is failed. Please consider using Select TF ops and disabling `_experimental_lower_tensor_list_ops` flag in the TFLite converter object."""


def test_a_recurrent_loop_names_the_layer_and_the_change():
    error = explain_converter_failure(TENSOR_LIST_TEXT, "dynamic")
    assert error.code == "recurrent_layer"
    assert error.message.startswith("recurrent layer 'lstm_1' runs a loop over TensorList ops")
    assert "python -m convert MODEL.keras" in error.message and "unroll=True" in error.message
    assert "\n" not in error.message


def test_a_bidirectional_loop_names_the_inner_layer():
    text = TENSOR_LIST_TEXT.replace("functional_1/lstm_1/", "functional_1/bidirectional/forward_lstm/")
    assert "'bidirectional/forward_lstm'" in explain_converter_failure(text, "float32").message


def test_a_location_prefix_does_not_hide_the_reason():
    text = """<unknown>:0: error: loc(callsite(fused["Foo:", "a/b@c"] at fused["X:", "y"])): 'tf.Foo' op has no lowering"""
    error = explain_converter_failure(text, "float16")
    assert error.code == "converter_failed"
    assert error.message == "the TFLite converter failed in float16 mode: error: 'tf.Foo' op has no lowering"
