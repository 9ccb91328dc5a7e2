"""The per-sample answers behind the report page (convert/report_page.py): report.samples.npz in the model directory.

For each converted mode, its scores for each sample beside the scores it is held against, and what a person needs to
recognise the sample (a thumbnail of a photo, the text). With raw samples that is the served model (the function's
own preprocessing, then LiteRT) against `expected`, the user's own pipeline; without them, the converted model
against the SavedModel on the validation inputs. Only for people: the gate never reads it, the function never lists
it (it reads the files its manifest names) and the Lambda image leaves it out (.dockerignore drops report.*).
Everything loads without pickle.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

SAMPLES_FILE = "report.samples.npz"
THUMBNAIL_SIDE = 96  # pixels, the longer side
MAX_VALUES = 250_000  # per mode: a 1,000-class model keeps 250 samples (1 MB of float32 per mode before zip)
CLASSIFIERS = ("image_classification", "text_classification")


@dataclass
class ReportSamples:
    comparison: str  # "raw": served vs expected on raw samples; "tensor": converted vs SavedModel
    modes: list[str]  # the written (or kept) mode first
    expected: np.ndarray  # (samples, values) float32
    served: dict[str, np.ndarray]  # mode -> (samples, values) float32
    total: int  # samples there were; the first len(expected) are kept
    labels: list[str] | None = None  # a classifier's: the values are its scores, one per label
    texts: list[str] | None = None
    thumbnails: list[np.ndarray] | None = None  # uint8 (height, width, channels)

    @property
    def count(self) -> int:
        return len(self.expected)


def _softmax(values: np.ndarray) -> np.ndarray:
    shifted = np.exp(values - values.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def scores(outputs: np.ndarray, output_kind: str | None, multi_label: bool) -> np.ndarray:
    """A classifier's outputs as the scores its answers carry: probabilities, one column per label (a single
    sigmoid unit becomes the two labels' [1 - p, p])."""
    flat = outputs.reshape(len(outputs), -1).astype(np.float64)
    if output_kind == "logits":
        flat = 1.0 / (1.0 + np.exp(-flat)) if multi_label or flat.shape[1] == 1 else _softmax(flat)
    if flat.shape[1] == 1 and not multi_label:
        flat = np.concatenate([1.0 - flat, flat], axis=1)
    return flat.astype(np.float32)


def _flat(outputs: dict[str, np.ndarray]) -> np.ndarray:
    """Every output of a sample in one row, outputs in name order."""
    return np.concatenate([outputs[name].reshape(len(outputs[name]), -1) for name in sorted(outputs)],
                          axis=1).astype(np.float32)


def thumbnail(pixels: np.ndarray) -> np.ndarray:
    image = Image.fromarray(pixels[:, :, 0] if pixels.shape[2] == 1 else pixels)
    image.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE), Image.Resampling.BILINEAR)
    small = np.asarray(image)
    return small[:, :, None] if small.ndim == 2 else small


def decoded_thumbnail(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        grey = image.mode in ("1", "L", "LA", "I", "I;16")
        return thumbnail(np.asarray(image.convert("L" if grey else "RGB"))[..., None] if grey else
                         np.asarray(image.convert("RGB")))


def tensor_thumbnail(tensor: np.ndarray) -> np.ndarray:
    """A preprocessed image tensor (height, width, channels) stretched back to 0..255 to be seen."""
    low, high = float(tensor.min()), float(tensor.max())
    pixels = np.zeros(tensor.shape, np.uint8) if high <= low else ((tensor - low) / (high - low) * 255).round()
    pixels = pixels.astype(np.uint8)
    return thumbnail(pixels if pixels.shape[2] in (1, 3) else pixels[:, :, :1])


def collect(job, written_mode: str, results: dict) -> ReportSamples | None:
    """What the page needs from one conversion (a ConversionJob and its ModeResults by mode)."""
    modes = [mode for mode in [written_mode, *results] if mode in results]
    modes = list(dict.fromkeys(modes))
    if not modes:
        return None
    sidecar = job.sidecar
    classifier = sidecar is not None and sidecar.task in CLASSIFIERS and sidecar.labels
    # A classifier's scores are its class output's (the values beside it are not scores); else every output.
    shown = [job.binding.outputs["scores"]] if classifier else list(job.binding.outputs.values())

    def kept(outputs: dict[str, np.ndarray]) -> np.ndarray:
        return _flat({name: array for name, array in outputs.items() if name in shown})

    if job.raw is not None:
        several = not classifier and len(shown) > 1  # regression outputs: expected_<name> each, by name as _flat
        comparison = "raw"
        expected = _flat(job.served_gate.expected_values) if several else job.raw.expected.reshape(job.raw.count, -1)
        served = {mode: kept(job.raw_outputs(results[mode])) for mode in modes}
    else:
        comparison, expected = "tensor", kept(job.reference)
        served = {mode: kept(results[mode].outputs) for mode in modes}
    labels = None
    if classifier:
        labels = list(sidecar.labels)
        expected = scores(expected, sidecar.output, sidecar.multi_label)
        served = {mode: scores(array, sidecar.output, sidecar.multi_label) for mode, array in served.items()}
    total = len(expected)
    keep = min(total, max(1, MAX_VALUES // max(1, expected.shape[1])))
    samples = ReportSamples(comparison, modes, expected[:keep], {mode: array[:keep] for mode, array in served.items()},
                            total, labels)
    if job.raw is not None and job.raw.kind == "text":
        samples.texts = [str(text) for text in job.raw.items[:keep]]
    elif job.raw is not None and job.raw.kind == "image":
        samples.thumbnails = [decoded_thumbnail(item.data) for item in job.raw.items[:keep]]
    elif sidecar is not None and sidecar.task in ("image_classification", "image_regression"):
        (tensors,) = job.validation.inputs.values()
        samples.thumbnails = [tensor_thumbnail(tensor) for tensor in tensors[:keep]]
    return samples


def write(directory: Path, samples: ReportSamples | None) -> None:
    if samples is None:
        return
    arrays = {"comparison": np.array(samples.comparison), "modes": np.array(samples.modes),
              "expected": samples.expected, "total": np.array(samples.total)}
    arrays.update({f"served_{mode}": array for mode, array in samples.served.items()})
    if samples.labels is not None:
        arrays["labels"] = np.array(samples.labels)
    if samples.texts is not None:
        arrays["texts"] = np.array(samples.texts)
    if samples.thumbnails is not None:
        arrays["thumbnails"] = np.concatenate([image.ravel() for image in samples.thumbnails])
        arrays["thumbnail_shapes"] = np.array([image.shape for image in samples.thumbnails])
    np.savez_compressed(directory / SAMPLES_FILE, **arrays)


def read(directory: Path) -> ReportSamples | None:
    """The samples a conversion saved, or None (no file: a model converted before there was one)."""
    path = directory / SAMPLES_FILE
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as archive:
        arrays = {key: archive[key] for key in archive.files}
    modes = [str(mode) for mode in arrays["modes"]]
    samples = ReportSamples(str(arrays["comparison"]), modes, arrays["expected"],
                            {mode: arrays[f"served_{mode}"] for mode in modes}, int(arrays["total"]))
    if "labels" in arrays:
        samples.labels = [str(label) for label in arrays["labels"]]
    if "texts" in arrays:
        samples.texts = [str(text) for text in arrays["texts"]]
    if "thumbnails" in arrays:
        sizes = arrays["thumbnail_shapes"].prod(axis=1)
        ends = np.cumsum(sizes)
        samples.thumbnails = [arrays["thumbnails"][end - size:end].reshape(tuple(shape))
                              for end, size, shape in zip(ends, sizes, arrays["thumbnail_shapes"])]
    return samples
