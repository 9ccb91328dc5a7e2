"""Protocol codecs over the tensor task: TensorFlow Serving's REST API and the Open Inference Protocol (v2).

Each codec turns a request body into one `TensorBatch` (an array per input, batch first) and the task's output
arrays (`output_arrays`) into its protocol's answer; neither runs a model nor touches the cache (routes call
ctx.predict). tensor_values.py holds what both share: JSON values to typed arrays, with one set of rules for
dtypes, ranges, NaN and shapes.
"""
