"""Build a demo SavedModel: `python -m saved_model build NAME [--out DIR]` (NAME: a module in recipes/)."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from pathlib import Path

from convert.errors import ConversionError
from saved_model import recipes

HERE = Path(__file__).resolve().parent


def recipe_names() -> list[str]:
    """The modules of recipes/ that build a model; the rest (common, photos, minilm...) are their helpers."""
    names = (m.name for m in pkgutil.iter_modules(recipes.__path__))
    return sorted(name for name in names
                  if hasattr(importlib.import_module(f"saved_model.recipes.{name}"), "build"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m saved_model", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="build one demo SavedModel with its sidecar and validation samples")
    build.add_argument("name", choices=recipe_names())
    build.add_argument("--out", type=Path, help="output directory (default: saved_model/NAME)")
    args = parser.parse_args(argv)

    recipe = importlib.import_module(f"saved_model.recipes.{args.name}")
    try:
        recipe.build(args.out or HERE / args.name)
    except ConversionError as error:  # an --out that holds something else: one line, never a traceback
        print(f"python -m saved_model: error: {error.message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
