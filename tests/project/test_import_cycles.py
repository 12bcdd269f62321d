"""No import cycle between first-party modules.

The graph is read from the source with ``ast``, not by importing: every ``import``/``from … import``
statement counts wherever it stands — at the top, inside a function, under ``if TYPE_CHECKING`` — and so
does ``importlib.import_module("…")`` with a literal name. A cycle that only a function-level import keeps
from failing at import time is still two modules that each need the other, so it is reported too.

An edge goes to the most specific first-party module an import names: ``from leir import ast`` is an edge
to ``leir.ast``, ``from leir.ast import Var`` one to ``leir.ast``, ``import leir.ast`` one to ``leir.ast``.
The package ``__init__`` an import passes through on the way is not an edge (every module of a package
would otherwise sit in a cycle with an ``__init__`` that re-exports it).
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from tests.conftest import REPO_ROOT

PACKAGES = ("leir", "frontend", "strategies", "dataset", "verifier", "tuner", "curation", "steptp_web",
            "steptp_cli", "workloads")

#: module -> {module it imports: ["path:line", ...]}
Graph = dict[str, dict[str, list[str]]]


def _module_files(root: Path, packages: Iterable[str]) -> dict[str, tuple[Path, bool]]:
    """``{dotted name: (file, is a package __init__)}`` for every ``.py`` file under the packages."""
    out: dict[str, tuple[Path, bool]] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            out[".".join(parts)] = (path, is_package)
    return out


def _imported_names(tree: ast.Module, package: str) -> Iterable[tuple[str, int]]:
    """Every dotted name an import in ``tree`` names, with its line (relative imports resolved).

    ``from pkg.mod import thing`` names ``pkg.mod.thing``: a submodule if there is one, else a name
    defined in ``pkg.mod`` (``_owner`` tells which).
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                yield f"{module}.{alias.name}", node.lineno
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in {"import_module", "__import__"} and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            yield node.args[0].value, node.lineno


def _owner(name: str, modules: Iterable[str]) -> str | None:
    """The most specific first-party module a dotted name lies in (``None``: not first-party)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(root: Path, packages: Iterable[str]) -> Graph:
    """Which first-party module imports which, read statically from the source under ``root``."""
    files = _module_files(root, packages)
    graph: Graph = {}
    for module, (path, is_package) in files.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        package = module if is_package else module.rpartition(".")[0]
        edges: dict[str, set[str]] = {}
        for name, line in _imported_names(tree, package):
            target = _owner(name, files)
            if target is not None and target != module:
                edges.setdefault(target, set()).add(f"{path.relative_to(root)}:{line}")
        graph[module] = {target: sorted(where) for target, where in edges.items()}
    return graph


def strongly_connected(graph: Graph) -> list[list[str]]:
    """The groups of two or more modules that reach each other (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in graph:
                    continue
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return sorted(groups)


def shortest_cycle(graph: Graph, group: list[str]) -> list[str]:
    """One shortest cycle through the first module of ``group`` that stays inside the group."""
    start, members = group[0], set(group)
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in sorted(graph[node]):
            if target not in members:
                continue
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if target not in previous:
                previous[target] = node
                queue.append(target)
    raise AssertionError(f"{group} is not a cycle")


def describe_cycles(graph: Graph) -> list[str]:
    """One paragraph per cycle: its modules and, for one loop through them, where each import stands."""
    out = []
    for group in strongly_connected(graph):
        cycle = shortest_cycle(graph, group)
        steps = [f"  {a} -> {b} ({', '.join(graph[a][b])})" for a, b in zip(cycle, cycle[1:], strict=False)]
        out.append(f"cycle among {', '.join(group)}:\n" + "\n".join(steps))
    return out


def test_no_import_cycle_between_first_party_modules():
    cycles = describe_cycles(import_graph(REPO_ROOT, PACKAGES))
    assert not cycles, "import cycles (move what both sides need into a module below them):\n" + "\n".join(cycles)


def test_the_graph_sees_the_imports_that_matter():
    graph = import_graph(REPO_ROOT, PACKAGES)
    assert "leir.ast" in graph["leir.parser"]  # a top-level ``from leir.ast import (...)``
    assert "leir.ast" in graph["leir.promotion"]
    assert "leir" not in graph["leir.parser"]  # the package passed through is not an edge


def test_the_detector_finds_a_cycle_closed_inside_a_function(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("def later():\n    from .. import c\n    return c\n")
    (package / "c.py").write_text("import importlib\nX = 1\n\ndef f():\n    return importlib.import_module('pkg.a')\n")
    (package / "d.py").write_text("from pkg.a import *\nfrom pkg import c\n")  # imports into the cycle only
    graph = import_graph(tmp_path, ["pkg"])
    assert graph["pkg.a"] == {"pkg.sub.b": ["pkg/a.py:1"]}
    assert graph["pkg.sub.b"] == {"pkg.c": ["pkg/sub/b.py:2"]}
    assert strongly_connected(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    (report,) = describe_cycles(graph)
    assert "pkg.a -> pkg.sub.b (pkg/a.py:1)" in report
    assert "pkg.c -> pkg.a (pkg/c.py:5)" in report


def test_the_detector_passes_a_package_without_cycles(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from pkg.a import A\n")
    (package / "a.py").write_text("A = 1\n")
    (package / "b.py").write_text("from pkg.a import A\n\ndef f():\n    from pkg import a\n    return a\n")
    graph = import_graph(tmp_path, ["pkg"])
    assert graph["pkg.b"] == {"pkg.a": ["pkg/b.py:1", "pkg/b.py:4"]}
    assert describe_cycles(graph) == []
