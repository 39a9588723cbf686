"""A solution cell's share of a solutions module: the top-level definitions it names in `#| course_defs`.

Quarto's `{{< include >}}` is whole-file, so several exercises can take their solutions from one module only
if each solution cell keeps just its own part. The cell still includes the whole module (the source stays a
valid Quarto document); the build keeps the statements that bind the named functions, classes, constants or
imports, each with the decorators and comment lines directly above it, spaced as in the module.
"""

from __future__ import annotations

import ast

from course.errors import CourseError, Location


def bound_names(node: ast.stmt) -> list[str]:
    """Names a top-level statement binds: def/class names, assignment targets, imported names."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    targets = (
        node.targets
        if isinstance(node, ast.Assign)
        else [node.target]
        if isinstance(node, (ast.AnnAssign, ast.AugAssign))
        else []
    )
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def top_level_names(source: str) -> list[str]:
    """Every name the source binds at top level, in order (blanks ______ are plain names; unparsable → none)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return list(dict.fromkeys(name for node in tree.body for name in bound_names(node)))


def take_definitions(source: str, names: list[str], where: Location) -> str:
    """The statements of SOURCE that bind NAMES, in module order; every name must be bound by the module."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise CourseError(
            f"course_defs: the included solutions module is not valid Python (line {exc.lineno}: {exc.msg})", where
        ) from None
    lines = source.splitlines()
    kept = [node for node in tree.body if set(bound_names(node)) & set(names)]
    found = {name for node in kept for name in bound_names(node)}
    missing = [name for name in names if name not in found]
    if missing:
        available = top_level_names(source)
        raise CourseError(
            f"course_defs names {', '.join(missing)}, which the included module does not define at "
            f"top level; expected some of: {', '.join(available) or '(nothing)'}",
            where,
        )
    parts: list[str] = []
    for node in kept:
        first = _first_line(node, lines)
        gap = _blank_lines_above(lines, first)
        if parts:
            parts.append("\n" * (gap + 1))
        parts.append("\n".join(lines[first : node.end_lineno]))
    return "".join(parts)


def _first_line(node: ast.stmt, lines: list[str]) -> int:
    """0-based first line of a statement with its decorators and the comment lines directly above it."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))]) - 1
    while first > 0 and lines[first - 1].startswith("#"):
        first -= 1
    return first


def _blank_lines_above(lines: list[str], index: int) -> int:
    """How many blank lines separate line INDEX from the code above it."""
    count = 0
    while index - count - 1 >= 0 and not lines[index - count - 1].strip():
        count += 1
    return count
