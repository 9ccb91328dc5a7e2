"""Keras SavedModel -> quantized TFLite for LiteRT, with a fidelity gate and a report (docs/conversion.md).

Tooling only: it imports TensorFlow, and nothing under function/ may import it.
"""
