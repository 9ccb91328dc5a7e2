"""TensorFlow Serving's encoded bytes, `{"b64": "<base64>"}` (its api_rest.md, "Encoding binary values"), for the one
input a model fills from bytes: an image model's image, one encoded image (JPEG, PNG, ...) per instance, as TF
Serving's documented image request sends it (`{"instances": [{"b64": "<JPEG>"}]}`), and Google's
`{"image_bytes": {"b64": ...}}`. Each image goes through the model's own task (`Task.tensor_from_bytes`: the decode,
colour, resize and normalisation of /classify), so the tensor protocols answer the scores /classify ranks.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from function.errors import refuse
from function.log import Timings
from function.model.manifest import TensorSpec
from function.protocols.tensor_values import B64_KEY, is_b64
from function.routes.inputs import decode_base64
from function.tasks.base import Task

BYTES_ALIAS = "image_bytes"  # Google's name for an image model's bytes input (AI Platform, Vertex AI)


def with_bytes_alias(value: dict, task: Task) -> dict:
    """A named instance (or columnar object) naming the bytes input `image_bytes`, as Google's clients do, with
    the input's own name instead; any other object as it is."""
    name = task.bytes_input()
    if name is None or BYTES_ALIAS not in value or name in value:
        return value
    return {(name if key == BYTES_ALIAS else key): item for key, item in value.items()}


def decoded_column(column: object, spec: TensorSpec, task: Task, where: str, where_of: Callable[[int], str],
                   max_images: int, timings: Timings) -> np.ndarray | None:
    """The batch of an input sent as encoded bytes (a list of {"b64": ...}, one per instance), decoded; None when
    the column holds no such value (numbers: the tensor reader takes them)."""
    if spec.name != task.bytes_input():
        return None  # numbers; a {"b64": ...} here is refused by the tensor reader, saying which inputs take bytes
    if not isinstance(column, list) or not any(map(is_b64, column)):
        if is_b64(_first_leaf(column)):  # one image without its batch, or images nested in lists
            raise refuse("invalid_shape", f"Input {spec.name!r} takes one encoded image per instance, batch first "
                         f"([{{\"b64\": \"<base64>\"}}, ...]); {where} holds {{\"b64\": ...}} "
                         f"{'without a batch' if is_b64(column) else 'nested in lists'}.")
        return None
    for index, value in enumerate(column):
        if not is_b64(value):
            raise refuse("invalid_tensor", f"{where_of(index)} is not {{\"b64\": \"<base64>\"}} like the other "
                         f"instances of input {spec.name!r}: send every image as encoded bytes, or every one as "
                         "numbers.")
    if len(column) > max_images:
        raise refuse("batch_too_large", f"{where} holds {len(column)} encoded images; the limit "
                     f"is {max_images} per request (MAX_BATCH, as on /classify).")
    arrays = [task.tensor_from_bytes(decode_base64(value[B64_KEY], where_of(index)), where_of(index), timings)
              for index, value in enumerate(column)]
    return np.stack(arrays).astype(spec.served_dtype, copy=False)


def _first_leaf(value: object) -> object:
    """The first value of nested lists, down the first items only (never a walk over a whole tensor)."""
    while isinstance(value, list) and value:
        value = value[0]
    return value
