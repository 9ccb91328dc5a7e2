"""The fidelity gate: the converted model must answer like the SavedModel on the same inputs, or it is not written.

`runs` runs both models; each task kind judges the answers with its own gate: `classification` (top-1 agreement),
`embedding` (cosine similarity) and `tensor` (error per output). docs/conversion.md gives every threshold and why.
"""
