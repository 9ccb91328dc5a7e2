"""`init MODEL [--out sidecar.json]`: write the sidecar convert would infer for MODEL (a `.keras` file or a
`model.export()` directory) for review, and say what each field was inferred from (convert/sidecar_inference.py).

A `.keras` file is read with Keras (its layers say the task, the output and whether it rescales itself); a SavedModel
directory by its serving signature, the output's activation then read from `expected` in the validation.npz beside
it (rows of probabilities summing to 1: softmax; one unit in [0, 1]: sigmoid). Default output: sidecar.json beside
the model (inside a SavedModel directory, where convert reads it); an existing file is not overwritten.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from convert.errors import ConversionError  # noqa: E402
from convert.sidecar import SIDECAR_FILE  # noqa: E402
from convert.sidecar_inference import Inference, ModelFacts, infer, signature_facts  # noqa: E402

EXIT_USER_ERROR = 2


def saved_model_facts(directory: Path) -> ModelFacts:
    from convert.saved_model_inspect import check_saved_model_dir, load_saved_model  # noqa: PLC0415

    check_saved_model_dir(directory)
    return signature_facts(load_saved_model(directory), directory)


def inferred(model: Path, custom_objects: Path | None = None) -> tuple[Inference, Path]:
    """The inference for MODEL, and the folder its files are read from. `custom_objects`: the user's module of
    custom layers and functions, imported before a .keras file is loaded, as convert's --custom-objects."""
    if model.suffix == ".keras":
        from convert.keras_file import _import_keras, _load, check_keras_path  # noqa: PLC0415
        from convert.keras_loading import LoadOptions  # noqa: PLC0415
        from convert.sidecar_inference import keras_facts  # noqa: PLC0415

        check_keras_path(model)
        facts = keras_facts(_load(model, _import_keras(), LoadOptions(custom_objects)))
        return infer(facts, model.parent, model.stem), model.parent
    if custom_objects is not None:
        raise ConversionError("bad_custom_objects", "--custom-objects is for .keras files: a SavedModel holds its "
                              "graph and needs no Python code to load")
    return infer(saved_model_facts(model), model, model.resolve().name), model


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lambda-tflite init", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", metavar="MODEL", type=Path, help="a .keras file or a model.export() directory")
    parser.add_argument("--out", metavar="SIDECAR.json", type=Path,
                        help="where to write it (default: sidecar.json beside the .keras file, or inside the "
                             "SavedModel directory)")
    parser.add_argument("--custom-objects", metavar="MODULE.py", type=Path,
                        help="for a .keras file: the Python module defining its custom layers and functions "
                             "(e.g. a TextVectorization standardize), imported before the file is loaded; give "
                             "convert the same module")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        inference, folder = inferred(args.model, args.custom_objects)
        out = args.out or folder / SIDECAR_FILE
        if out.exists():
            raise ConversionError("sidecar_exists", f"{out} exists: review it, or pass --out OTHER.json")
    except ConversionError as error:
        print(f"init: error: {error.message} [{error.code}]", file=sys.stderr)
        return EXIT_USER_ERROR
    out.write_text(json.dumps(inference.data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}, inferred from {args.model}:")
    for line in inference.describe():
        print(f"  {line}")
    if inference.settle_preprocessing:
        print("  (convert replaces the preprocessing guess with the one the raw samples show; review it then)")
    for problem in inference.problems:
        print(f"  to fix: {problem}")
    if args.model.suffix == ".keras":
        custom = f" --custom-objects {args.custom_objects}" if args.custom_objects is not None else ""
        print(f"then: convert {args.model} OUT_DIR --sidecar {out}{custom}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
