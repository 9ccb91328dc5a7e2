"""The import graph of function/ and convert/, read from the sources with ast (nothing is imported).

Every import counts, wherever it sits: at the top, inside a function (a lazy import still ties the two modules
together) or under `if TYPE_CHECKING:` (a type-only import is still a design dependency). `from pkg import name`
is an edge to pkg/name.py when that module exists, else to pkg itself. Importing pkg.mod is not counted as an
edge to pkg/__init__.py: a package that imports its own submodules is not a circle.
"""
from __future__ import annotations

import ast
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("function", "convert")


def module_name(path: Path, root: Path = REPO_ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = REPO_ROOT) -> dict[str, Path]:
    return {module_name(path, root): path for package in PACKAGES for path in sorted((root / package).rglob("*.py"))}


def imported_by(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of `known` that the module `name` (at `path`) imports, anywhere in its source."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x, from ..y import z
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in known:
                    found.add(f"{base}.{alias.name}")
                elif base in known:
                    found.add(base)
    found.discard(name)
    return found


def import_graph(root: Path = REPO_ROOT) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imported_by(name, path, known) for name, path in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def one_path_around(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """A readable circle through the component's first module: a -> b -> ... -> a (breadth first, so shortest)."""
    start, members = component[0], set(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & members):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start] if node != start else [start, start]
                if target not in previous:
                    previous[target] = node
                    following.append(target)
        frontier = following
    return component


def describe(found: list[list[str]], graph: dict[str, set[str]]) -> str:
    return "\n".join(f"{len(component)} modules import each other: {', '.join(component)}\n    for example "
                     f"{' -> '.join(one_path_around(component, graph))}" for component in found)


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module `start` imports, directly or through others (itself included)."""
    seen, frontier = {start}, [start]
    while frontier:
        for target in graph[frontier.pop()] - seen:
            seen.add(target)
            frontier.append(target)
    return seen
