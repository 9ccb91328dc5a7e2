"""Convert a Keras SavedModel into a quantized TFLite model that LiteRT serves, and prove it still answers alike.

Writes OUT_DIR/model.tflite, manifest.json (docs/model-format.md), report.json, report.md, report.samples.npz (each
sample's scores per mode: python -m convert.report_page OUT_DIR makes report.html of them) and, for text models,
tokenizer.json. OUT_DIR appears only when the whole conversion succeeded; a failure leaves an earlier OUT_DIR as it
was. Before anything is converted, sidecar.json is checked (strictly) and held against the SavedModel's signature. The
fidelity gate runs the SavedModel (TensorFlow) and the converted model (LiteRT) on the sidecar's validation samples
(or generated inputs when there is no sidecar.json) and fails on any NaN/Inf or when the task's own measure falls
short: top-1 agreement for classifiers, cosine similarity for embeddings, error per output for tensor models.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

# Before anything imports TensorFlow: keep its C++ start-up chatter off the terminal.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from convert.agreement_interval import samples_needed  # noqa: E402
from convert.errors import ConversionError  # noqa: E402
from convert.fidelity.classification import SCORE_BOUNDS, THRESHOLDS  # noqa: E402
from convert.fidelity.embedding import MEAN_COSINE, MIN_COSINE  # noqa: E402
from convert.fidelity.tensor import TOLERANCES  # noqa: E402
from convert.quantize import MODES  # noqa: E402
from convert.sidecar import SIDECAR_FILE  # noqa: E402
from convert.transformer.directory import is_encoder_directory  # noqa: E402

EXIT_USER_ERROR = 2

MODES_HELP = """quantization modes (threshold = lowest top-1 agreement with the SavedModel a classifier's gate
accepts; a class the SavedModel scores within 0.001 of its own top-1 counts as agreeing):
  float32   no quantization: the yardstick, largest file                          threshold {float32:.0%}
  float16   weights stored as float16, computed in float32: ~1/2 the size          threshold {float16:.0%}
  dynamic   int8 weights on every layer the converter picks (embedding tables
            too), float activations quantized on the fly: ~1/4 the size           threshold {dynamic:.0%}
  mixed     int8 weights on the fully connected layers, float32 on the fewest
            the gate needs (ranked by the error each adds alone: one run of
            the model per layer); everything else stays float32                   threshold {mixed:.0%}
  int8      full integer: int8 weights and activations, int8 input/output tensors
            for float inputs (scale/zero point in the manifest), int32 token ids
            stay int32; needs representative inputs to calibrate              threshold {int8:.0%}

""".format(**THRESHOLDS) + """
text_embedding gate, in every mode: cosine similarity to the SavedModel >= {min_cosine} on every sample and
>= {mean_cosine} on average.
tensor gate: per output, max error as a fraction of the output's range <= {float32:g} (float32),
{float16:g} (float16), {dynamic:g} (dynamic and mixed), {int8:g} (int8).

served gate (raw samples + expected in the validation file): the same top-1 or label-set thresholds, and every
score an answer shows within {score_float32:g} (float32), {score_float16:g} (float16), {score_dynamic:g} (dynamic,
mixed, int8) of expected's.

agreement figures carry their 95% confidence interval; a verdict whose samples are too few for the threshold (e.g.
fewer than {needed_99} for 99%) is "not enough samples": the model is written, with a warning on stderr naming the
count. Without --quantization every mode is converted, gated and timed, and the fastest that passes its gate with
margin is written (docs/conversion.md says what margin means).

exit codes: 0 converted; 2 a problem with the input or the gate failed (one line on stderr says what to do).
progress: on a terminal, each long step draws a count on stderr; nothing when stderr is not a terminal.
details: docs/conversion.md
publish a converted model to S3 for MODEL_SOURCE: python -m convert publish MODEL_DIR s3://BUCKET/PREFIX/""".format(
    min_cosine=MIN_COSINE, mean_cosine=MEAN_COSINE, needed_99=samples_needed(0.99), **TOLERANCES,
    **{f"score_{mode}": bound for mode, bound in SCORE_BOUNDS.items()})


def build_parser(prog: str = "python -m convert") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__, epilog=MODES_HELP,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("saved_model_dir", metavar="MODEL", type=Path,
                        help="a Keras 3 model.export() directory, ideally with sidecar.json beside saved_model.pb, "
                             "a Keras 3 .keras (or .h5) file (its sidecar inferred, or --sidecar), or a "
                             "sentence-transformers / Hugging Face encoder directory (config.json, model.safetensors, "
                             "tokenizer.json; bert or mpnet)")
    parser.add_argument("out_dir", metavar="OUT_DIR", type=Path,
                        help="where the converted model goes (created; an earlier conversion there is replaced, "
                             "except by --compare alone)")
    parser.add_argument("--quantization", choices=MODES,
                        help="the mode to convert and write (default: chosen by measurement: every mode is "
                             "converted, gated and timed, and the fastest that passes its gate with margin is "
                             "written; with --compare, the model already in OUT_DIR is kept unless this is given)")
    parser.add_argument("--representative", metavar="FILE.npz", type=Path,
                        help="inputs to calibrate int8 with: inputs_<role> arrays (inputs_<signature input name> for "
                             "task tensor), preprocessed, batch first (default: the sidecar's "
                             "validation.representative, else its validation.samples)")
    parser.add_argument("--min-agreement", metavar="FRACTION", type=float,
                        help="classifiers only: accept a lower (or demand a higher) top-1 agreement than the mode's "
                             "threshold, e.g. 0.85 to serve int8 knowingly; the manifest records the threshold used")
    parser.add_argument("--sidecar", metavar="SIDECAR.json", type=Path,
                        help="for a .keras file: its sidecar, whose fields override the ones convert infers from the "
                             "model and the labels.txt and validation.npz beside it (docs/model-format.md); the "
                             "validation files it names are read from beside it (default: the sidecar.json beside "
                             "the .keras file when there is one, as `init` writes it)")
    parser.add_argument("--custom-objects", metavar="MODULE.py", type=Path,
                        help="for a .keras/.h5 file: the Python module defining its custom layers and functions "
                             "(e.g. a TextVectorization standardize), imported before the file is loaded")
    parser.add_argument("--unsafe-deserialization", action="store_true",
                        help="for a .keras/.h5 file you trust: load its Lambda layers' Python code (Keras's "
                             "safe_mode=False)")
    parser.add_argument("--name", metavar="NAME",
                        help="the name the model is served under (default: the sidecar's \"name\", else the "
                             "SavedModel directory's name), e.g. to serve a float16 and an int8 conversion of one "
                             "SavedModel side by side")
    parser.add_argument("--compare", action="store_true",
                        help="convert, gate and time all five modes and put them side by side in the printed table "
                             "and OUT_DIR's report files. A model already in OUT_DIR stays byte-identical (only its "
                             "report files are rewritten) unless --quantization names the mode to write instead; "
                             "an OUT_DIR without a model gets the mode chosen by measurement. No other mode is ever "
                             "written. Each mode is also served by the function in fresh processes (cold start, first "
                             "invoke, warm p50 at 1 and 2 threads, peak RSS) and a mode and Lambda memory size are "
                             "recommended")
    return parser


def convert(args: argparse.Namespace) -> None:
    """A SavedModel directory as it is; a .keras file through a temporary export (convert/keras_file.py)."""
    from convert.keras_file import prepare_keras_file  # noqa: PLC0415  (keeps --help instant)
    from convert.keras_loading import KERAS_SUFFIXES, LoadOptions  # noqa: PLC0415
    from convert.output_dir import check_replaceable  # noqa: PLC0415
    from convert.pipeline import run  # noqa: PLC0415

    source = args.saved_model_dir
    encoder = is_encoder_directory(source)
    # No --quantization: the mode chosen by measurement, or with --compare the model already in OUT_DIR (pipeline.run).
    options = dict(mode=args.quantization, representative_path=args.representative, compare=args.compare,
                   min_agreement=args.min_agreement, name=args.name)
    if encoder:
        convert_encoder_directory(args, options)
        return
    if source.suffix not in KERAS_SUFFIXES and not source.is_file():
        for flag, value in (("--custom-objects", args.custom_objects),
                            ("--unsafe-deserialization", args.unsafe_deserialization)):
            if value:
                raise ConversionError("bad_custom_objects", f"{flag} is for .keras and .h5 files: a SavedModel "
                                      "holds its graph and needs no Python code to load")
        if args.sidecar is not None:
            raise ConversionError("bad_sidecar", f"--sidecar is for .keras files: a SavedModel directory's sidecar "
                                  f"is the sidecar.json inside it ({source / 'sidecar.json'})")
        run(source, args.out_dir, **options)
        return
    check_replaceable(args.out_dir)  # before the minutes a load and export can take
    sidecar = args.sidecar
    if sidecar is not None and not sidecar.is_file():
        raise ConversionError("bad_sidecar", f"--sidecar {sidecar} does not exist: pass the sidecar.json of the "
                              "model (docs/model-format.md)")
    if sidecar is None and (source.parent / SIDECAR_FILE).is_file():
        sidecar = source.parent / SIDECAR_FILE  # what `lambda-tflite init` wrote there, perhaps edited since
        print(f"  reading {sidecar} (beside the model: its fields override what convert infers; --sidecar names "
              "another)")
    from convert.progress import progress  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="convert-keras-") as work:
        print(f"  loading {source} with Keras and exporting it in inference mode")
        loading = LoadOptions(args.custom_objects, args.unsafe_deserialization)
        with progress().step(f"loading and exporting {source.name}"):
            saved_model, inference = prepare_keras_file(source, sidecar, Path(work), loading=loading)
        run(saved_model, args.out_dir, source=source, settle_preprocessing=inference.settle_preprocessing, **options)


def convert_encoder_directory(args: argparse.Namespace, options: dict) -> None:
    """A sentence-transformers / Hugging Face encoder directory: rebuilt in Keras, checked against the numpy
    reference and exported into a temporary SavedModel (convert/transformer/prepare.py), then converted as usual."""
    from convert.output_dir import check_replaceable  # noqa: PLC0415
    from convert.pipeline import run  # noqa: PLC0415
    from convert.sidecar_fields import served_name  # noqa: PLC0415
    from convert.transformer.directory import read_encoder_directory  # noqa: PLC0415
    from convert.transformer.prepare import prepare_encoder_directory  # noqa: PLC0415

    source = args.saved_model_dir
    for flag, value in (("--sidecar", args.sidecar), ("--representative", args.representative)):
        if value is not None:
            raise ConversionError("bad_option", f"{flag} is not for a Hugging Face model directory: convert writes "
                                  f"the sidecar and samples of {source} itself; drop {flag}")
    check_replaceable(args.out_dir)  # before the minutes a rebuild and export can take
    name = args.name or read_encoder_directory(source).name  # every refusal about the directory comes first
    if args.name is None:
        try:
            served_name(name)
        except ConversionError:
            raise ConversionError("bad_name", f"the directory name {name!r} cannot be a served name: pass --name "
                                  "(1-64 letters, digits, '.', '_' or '-')") from None
    with tempfile.TemporaryDirectory(prefix="convert-encoder-") as work:
        print(f"  rebuilding {source} in Keras from its safetensors")
        saved_model = prepare_encoder_directory(source, Path(work), name)
        run(saved_model, args.out_dir, source=source, **options)


def main(argv: list[str] | None = None, prog: str = "python -m convert") -> int:
    """`prog` is the command as typed: `python -m convert`, or `lambda-tflite convert` (convert/cli.py)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["publish"]:
        from convert.publish import main as publish  # noqa: PLC0415  (its own arguments, no TensorFlow)

        return publish(argv[1:], prog=f"{prog} publish")
    args = build_parser(prog).parse_args(argv)
    try:
        convert(args)
    except ConversionError as error:
        print(f"convert: error: {error.message} [{error.code}]", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("convert: interrupted; nothing was written", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
