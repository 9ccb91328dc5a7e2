"""What tests/ and bench/ share lives in kit/, and the three trees import one way only: kit/ from neither (and
without pytest: its fixtures stay in tests/support/), bench/ never from tests/, tests/ from bench/ only in the tests
of the bench itself. Read from the sources with ast, so a lazy import inside a function counts too."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Tests whose subject is the bench: they import what they test. Every other test reaches shared code through kit/.
TESTS_OF_THE_BENCH_GLOB = "test_bench_*.py"
TESTS_OF_THE_BENCH = {"tests/functional/test_minilm_onnx_baseline.py"}  # bench/minilm_onnx.py, the ONNX baseline
# tree: the top-level packages its modules may not import.
FORBIDDEN = {"kit": {"tests", "bench", "pytest"}, "bench": {"tests"}, "tests": {"bench"}}


def imported_packages(source: str, filename: str = "<source>") -> set[str]:
    """The top-level packages a module imports, wherever the import sits; relative imports stay in their tree."""
    found = set()
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def is_test_of_the_bench(path: Path) -> bool:
    return path.match(TESTS_OF_THE_BENCH_GLOB) or path.relative_to(REPO).as_posix() in TESTS_OF_THE_BENCH


def cross_imports(tree: str) -> list[str]:
    """`path: package` for every import a module of `tree` may not make."""
    found = []
    for path in sorted((REPO / tree).rglob("*.py")):
        if tree == "tests" and is_test_of_the_bench(path):
            continue
        for package in sorted(imported_packages(path.read_text(encoding="utf-8"), str(path)) & FORBIDDEN[tree]):
            found.append(f"{path.relative_to(REPO)}: {package}")
    return found


@pytest.mark.parametrize("tree", sorted(FORBIDDEN))
def test_no_module_imports_across_the_boundary(tree):
    assert cross_imports(tree) == []


def test_the_walk_sees_every_kind_of_import():
    source = """
import tests.support.emf
from bench.inputs import classify_body
from . import sibling
def lazy():
    from pytest import fixture
"""
    assert imported_packages(source) == {"tests", "bench", "pytest"}


def test_the_trees_are_there_and_the_tests_of_the_bench_exist():
    """A renamed tree or test would make the walk above pass on nothing."""
    for tree in FORBIDDEN:
        assert len(list((REPO / tree).rglob("*.py"))) > 5, tree
    for test in TESTS_OF_THE_BENCH:
        assert (REPO / test).is_file(), test
    assert list((REPO / "tests").rglob(TESTS_OF_THE_BENCH_GLOB))
