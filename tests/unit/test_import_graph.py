"""No import circle in function/ or convert/ (tests/support/import_graph.py reads the imports with ast)."""
from __future__ import annotations

from tests.support.import_graph import cycles, describe, import_graph, imported_by, one_path_around


def test_the_walk_reads_every_kind_of_import(tmp_path):
    source = tmp_path / "pkg"
    (source / "sub").mkdir(parents=True)
    (source / "__init__.py").write_text("")
    (source / "sub" / "__init__.py").write_text("from . import leaf\n")
    for name in ("top", "lazy", "typed", "leaf", "named", "unused"):
        (source / "sub" / f"{name}.py").write_text("")
    module = source / "sub" / "user.py"
    module.write_text("from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
                      "import pkg.sub.top\nfrom pkg.sub import named, NOT_A_MODULE\nfrom .leaf import x\n"
                      "if TYPE_CHECKING:\n    from pkg.sub.typed import T\n"
                      "def later():\n    from pkg.sub import lazy\n")
    known = {f"pkg.sub.{name}": source / "sub" / f"{name}.py" for name in
             ("top", "lazy", "typed", "leaf", "named", "unused", "user")}
    known |= {"pkg": source / "__init__.py", "pkg.sub": source / "sub" / "__init__.py"}
    assert imported_by("pkg.sub.user", module, known) == {
        "pkg.sub.top", "pkg.sub.named", "pkg.sub", "pkg.sub.leaf", "pkg.sub.typed", "pkg.sub.lazy"}
    assert imported_by("pkg.sub", source / "sub" / "__init__.py", known) == {"pkg.sub.leaf"}


def test_the_walk_covers_both_trees():
    graph = import_graph()
    assert {"function.app", "function.tasks.tensor", "convert.pipeline", "convert.tasks"} <= set(graph)
    assert "convert.tasks.base" in graph["convert.tasks.classification"]


def test_the_cycle_finder_finds_a_circle_and_says_where_it_goes():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert one_path_around(["a", "b", "c"], graph) == ["a", "b", "c", "a"]
    assert "3 modules import each other: a, b, c" in describe(cycles(graph), graph)
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_convert_has_no_import_circle():
    graph = import_graph()
    found = [component for component in cycles(graph) if component[0].startswith("convert")]
    assert not found, describe(found, graph)


def test_function_has_no_import_circle():
    graph = import_graph()
    found = [component for component in cycles(graph) if component[0].startswith("function")]
    assert not found, describe(found, graph)
