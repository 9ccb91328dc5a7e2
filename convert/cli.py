"""`lambda-tflite`: the installed command, one subcommand per step from a Keras model to a served one.

Each subcommand is a `main(argv) -> int` in its own module, imported only when it is called: `--help` and `--version`
import nothing of TensorFlow, LiteRT or numpy, and `serve` and `publish` run without the `convert` extra installed.
"""
from __future__ import annotations

import importlib
import inspect
import sys

# name -> (module with main(argv), what it does): the order of the help text.
SUBCOMMANDS = {
    "init": ("convert.init_sidecar", "write the sidecar inferred from a SavedModel or .keras file, for review"),
    "convert": ("convert.__main__", "convert a SavedModel or .keras file to a served TFLite model folder, gated"),
    "report": ("convert.report_page", "write a converted model's report as one HTML page"),
    "serve": ("function.devserver.command", "serve converted models over HTTP, with a page to try them"),
    "publish": ("convert.publish", "put a converted model in S3 for the function to serve"),
}
EXIT_USAGE = 2
# What the `convert` extra of pyproject.toml installs (top-level import names).
CONVERT_EXTRA = ("tensorflow", "keras")


def usage() -> str:
    width = max(map(len, SUBCOMMANDS))
    lines = [f"  {name:<{width}}  {summary}" for name, (_, summary) in SUBCOMMANDS.items()]
    return ("usage: lambda-tflite [--version] COMMAND [ARGS...]\n\nFrom a Keras model to a served one "
            "(lambda-tflite COMMAND --help for each):\n\n" + "\n".join(lines) + "\n")


def version() -> str:
    from function import __version__  # noqa: PLC0415  (function/__init__.py holds only the version)

    return f"lambda-tflite {__version__}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), end="", file=sys.stdout if argv else sys.stderr)
        return 0 if argv else EXIT_USAGE
    if argv[0] == "--version":
        print(version())
        return 0
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        print(f"lambda-tflite: error: no command {name!r}; one of {', '.join(SUBCOMMANDS)} (lambda-tflite --help)",
              file=sys.stderr)
        return EXIT_USAGE
    module_name = SUBCOMMANDS[name][0]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:
            raise  # a missing dependency inside the subcommand: its own message is the useful one
        print(f"lambda-tflite: error: {name} is not available in this build", file=sys.stderr)
        return EXIT_USAGE
    # Usage lines and errors name the command as typed, where the subcommand's main lets them.
    named = {"prog": f"lambda-tflite {name}"} if "prog" in inspect.signature(module.main).parameters else {}
    try:
        return module.main(rest, **named)
    except ModuleNotFoundError as error:
        if error.name not in CONVERT_EXTRA:
            raise
        print(f"lambda-tflite: error: {name} needs TensorFlow and Keras, which this install lacks: pip install "
              f"'lambda-tflite-serving[convert]' (or '.[convert]' in a clone of the project)", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
