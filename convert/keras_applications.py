"""The pixel preprocessing of each keras.applications module, as sidecar fields the function applies.

Each module's `preprocess_input` is one of three modes of `keras.applications.imagenet_utils.preprocess_input`
("caffe", "tf", "torch") or nothing at all, for models that rescale inside themselves. The fields below are that
mode's arithmetic, step for step in float32 (function/preprocessing/image.py applies them in the same order), so
that the function feeds a model exactly what `<module>.preprocess_input` gives it. `convert` checks that on the
raw samples (convert/served_gate.py) against the installed Keras itself.
"""
from __future__ import annotations

# mode -> color_mode, divisor, mean and std in the model's channel order (B, G, R for caffe), as Keras has them.
MODES: dict[str, dict] = {
    "caffe": {"color_mode": "BGR", "divisor": 1.0, "mean": [103.939, 116.779, 123.68], "std": [1.0, 1.0, 1.0]},
    "tf": {"color_mode": "RGB", "divisor": 127.5, "mean": [1.0, 1.0, 1.0], "std": [1.0, 1.0, 1.0]},
    "torch": {"color_mode": "RGB", "divisor": 255.0, "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
    # The model includes its own Rescaling/Normalization: it takes RGB pixels 0..255 as they are.
    "none": {"color_mode": "RGB", "divisor": 1.0, "mean": [0.0, 0.0, 0.0], "std": [1.0, 1.0, 1.0]},
}

# keras.applications module -> its preprocess_input's mode (keras/src/applications/<module>.py).
PRESETS: dict[str, str] = {
    "resnet50": "caffe", "resnet": "caffe", "vgg16": "caffe", "vgg19": "caffe",
    "resnet_v2": "tf", "mobilenet": "tf", "mobilenet_v2": "tf", "inception_v3": "tf",
    "inception_resnet_v2": "tf", "xception": "tf", "nasnet": "tf",
    "densenet": "torch",
    "mobilenet_v3": "none", "efficientnet": "none", "efficientnet_v2": "none", "convnext": "none",
    "regnet": "none", "resnet_rs": "none",
}
FIELDS = ("color_mode", "divisor", "mean", "std")  # what a preset fills; the sidecar may not also give them


def preset_fields(module: str) -> dict:
    return {key: (list(value) if isinstance(value, list) else value) for key, value in MODES[PRESETS[module]].items()}


def modules_of(mode: str) -> list[str]:
    """The modules whose preprocess_input is this mode, for advice ("set ... resnet50, or vgg16 ...")."""
    return [module for module, own in PRESETS.items() if own == mode]


def mode_of(preprocessing: dict) -> str | None:
    """The known mode these (normalised) fields are, if any."""
    for mode, fields in MODES.items():
        if all(preprocessing.get(key) == value for key, value in fields.items()):
            return mode
    return None


def keras_preprocess(module: str):
    """The installed Keras's own `<module>.preprocess_input`, or None when this Keras has no such module (regnet and
    resnet_rs exist only in Keras 2; their models preprocess themselves)."""
    import importlib  # noqa: PLC0415

    try:
        return importlib.import_module(f"keras.applications.{module}").preprocess_input
    except (ImportError, AttributeError):
        return None
