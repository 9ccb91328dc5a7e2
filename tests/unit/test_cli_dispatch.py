"""`lambda-tflite` (convert/cli.py): subcommands found by name and imported only when called, the version, and one
line for what this build does not have."""
from __future__ import annotations

import subprocess
import sys

import pytest

from convert import cli
from function import __version__


def test_version_is_the_one_in_function_init(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"lambda-tflite {__version__}\n"


def test_help_lists_every_subcommand(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("init", "convert", "report", "serve", "publish"):
        assert f"\n  {name} " in out


def test_no_arguments_is_a_usage_error(capsys):
    assert cli.main([]) == 2
    assert "usage: lambda-tflite" in capsys.readouterr().err


def test_a_subcommand_whose_module_this_build_lacks_says_so(capsys, monkeypatch):
    monkeypatch.setitem(cli.SUBCOMMANDS, "report", ("convert.no_such_module_here", "a page"))
    assert cli.main(["report", "models/x"]) == 2
    assert capsys.readouterr().err == "lambda-tflite: error: report is not available in this build\n"


def test_a_missing_convert_extra_names_the_install_line(capsys, monkeypatch, tmp_path):
    module = tmp_path / "needs_tensorflow_stand_in.py"
    module.write_text("def main(argv):\n    import tensorflow_not_installed_here\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(cli.SUBCOMMANDS, "convert", ("needs_tensorflow_stand_in", "converts"))
    monkeypatch.setattr(cli, "CONVERT_EXTRA", ("tensorflow_not_installed_here",))
    assert cli.main(["convert"]) == 2
    assert "pip install 'lambda-tflite-serving[convert]'" in capsys.readouterr().err


def test_subcommands_get_their_own_name_in_usage_lines(capsys):
    with pytest.raises(SystemExit):
        cli.main(["convert", "--help"])
    assert capsys.readouterr().out.startswith("usage: lambda-tflite convert ")


def test_help_and_version_import_no_model_library():
    probe = ("import sys; from convert.cli import main; main(['--help']); main(['--version']); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('numpy', 'tensorflow', 'keras', 'ai_edge_litert', 'PIL', 'tokenizers')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"
