"""The package's dependencies point one way: no import cycles, and the library never imports the command line.

Imports are read from the sources (module level and inside functions alike: a lazy import is still a dependency),
so a cycle fails here before it fails at import time in some rarely used order.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
CLI = ("course.cli", "course.commands", "course.__main__")


def module_name(path: Path) -> str:
    """course/grading/report.py -> course.grading.report; a package's __init__ is the package."""
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """The course modules PATH imports anywhere in its body (relative imports resolved)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names)
    return {m for m in found if m in known and m != name}


def import_graph() -> dict[str, set[str]]:
    """Module -> the course modules it imports."""
    paths = {module_name(p): p for p in SRC.rglob("*.py")}
    return {name: imported_modules(path, set(paths)) for name, path in paths.items()}


def package_of(module: str) -> str:
    """course.grading.report -> course.grading; top-level modules (course.config) are their own package."""
    return ".".join(module.split(".")[:2])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one node (Tarjan), each a cycle of imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while (w := stack.pop()) != v:
                group.append(w)
            if group:
                found.append(sorted([v, *group]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_in_a_cycle():
    """Two modules that import each other (directly or round a loop) are one design split in two."""
    assert cycles(import_graph()) == []


def test_no_package_imports_in_a_cycle():
    """Packages form layers: commands -> workflows -> integrations -> standard data -> lesson model."""
    graph: dict[str, set[str]] = {}
    for module, deps in import_graph().items():
        graph.setdefault(package_of(module), set()).update(package_of(d) for d in deps if package_of(d) != package_of(module))
    assert cycles(graph) == []


def test_library_never_imports_the_command_line():
    """Only the CLI edge may import course.cli / course.commands."""
    offenders = [f"{m} -> {d}" for m, deps in import_graph().items() if not m.startswith(CLI)
                 for d in deps if d.startswith(CLI)]
    assert offenders == []


def test_cycle_finder_finds_a_planted_cycle():
    """The checker itself: a three-module loop is reported, a chain is not."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}}) == []
