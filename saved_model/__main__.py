"""Build a demo SavedModel: `python -m saved_model build NAME [--out DIR]` (NAME: a module in recipes/).
`python -m saved_model check NAME [--dir DIR]` re-runs a recipe's fidelity check on a built SavedModel."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

from convert.errors import ConversionError
from saved_model import recipes

HERE = Path(__file__).resolve().parent


def recipe_names(function: str = "build") -> list[str]:
    """The modules of recipes/ that define `function` (build: those that make a model; the rest, such as common,
    photos, minilm_encoder..., are their helpers)."""
    names = (m.name for m in pkgutil.iter_modules(recipes.__path__))
    return sorted(name for name in names
                  if hasattr(importlib.import_module(f"saved_model.recipes.{name}"), function))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m saved_model", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="build one demo SavedModel with its sidecar and validation samples")
    build.add_argument("name", choices=recipe_names())
    build.add_argument("--out", type=Path, help="output directory (default: saved_model/NAME)")
    check = sub.add_parser("check", help="compare a built demo SavedModel with its recipe's reference")
    check.add_argument("name", choices=recipe_names("check"))
    check.add_argument("--dir", type=Path, help="the built SavedModel (default: saved_model/NAME)")
    args = parser.parse_args(argv)

    recipe = importlib.import_module(f"saved_model.recipes.{args.name}")
    if args.command == "check":
        directory = args.dir or HERE / args.name
        if not (directory / "saved_model.pb").is_file():
            print(f"python -m saved_model: error: no SavedModel in {directory}: build it first", file=sys.stderr)
            return 2
        return 0 if recipe.check(directory).faithful else 1
    try:
        recipe.build(args.out or HERE / args.name)
    except ConversionError as error:  # an --out that holds something else: one line, never a traceback
        print(f"python -m saved_model: error: {error.message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
