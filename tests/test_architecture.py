"""The package's dependencies point one way: packages sit in layers (LAYERS) and import only their own layer and
those below, with no import cycles, and the library never imports the command line; modules stay small (at most
MAX_LINES lines); and the engine knows no lesson: src/ names none, and a lesson's own code (its drawing modules)
stays with it.

Imports are read from the sources (module level and inside functions alike: a lazy import is still a dependency),
so a cycle fails here before it fails at import time in some rarely used order.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from course.lesson.discover import FIGURES

SRC = Path(__file__).resolve().parents[1] / "src"
LESSONS = SRC.parent / "lessons"
CLI = ("course.cli", "course.commands", "course.__main__")
LESSON_NAME = re.compile(r"lesson_?\d+|第\s*\d+\s*课", re.IGNORECASE)
EXAMPLE = ("e.g.", "如")  # "e.g. lesson05" in a help text illustrates an argument; it is not knowledge of a lesson
MAX_LINES = 600
# The packages in layers, from the bottom up; imports point down: commands -> workflows -> integrations -> standard
# data -> lesson model, with the basics (foundation) under all of them.
LAYERS = (
    ("foundation", ("course", "course.errors", "course.fileio", "course.config", "course.messages")),
    ("lesson model", ("course.lesson",)),
    # Below the standard data, not among the integrations: grading re-checks answer code in the sandbox
    # (course.grading.recheck -> course.sandbox.answer), and the sandbox runs bubblewrap (course.tools.bubblewrap).
    ("sandbox and tools", ("course.tools", "course.sandbox")),
    # One layer, as grading's report reads the hints (course.grading.report -> course.hints.find); no cycle (tested).
    ("standard data", ("course.grading", "course.hints", "course.figures")),
    (
        "integrations",
        ("course.assignment", "course.nbgrader_hooks", "course.hub", "course.site", "course.similarity", "course.lab"),
    ),
    ("workflows", ("course.workflows",)),
    ("command line", CLI),
)


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


def upward_imports(graph: dict[str, set[str]], layers) -> list[str]:
    """'module -> imported (layer -> higher layer)' for each import of a package in a layer above the importer's
    (a package in no layer is test_every_package_sits_in_exactly_one_layer's to report)."""
    rank = {package: (i, name) for i, (name, packages) in enumerate(layers) for package in packages}
    placed = [(m, d) for m, deps in graph.items() for d in deps if package_of(m) in rank and package_of(d) in rank]
    return sorted(
        f"{m} -> {d} ({rank[package_of(m)][1]} -> {rank[package_of(d)][1]})"
        for m, d in placed
        if rank[package_of(d)][0] > rank[package_of(m)][0]
    )


def long_modules(root: Path, limit: int) -> dict[str, int]:
    """Modules under ROOT longer than LIMIT lines, with their line counts."""
    counts = {str(p.relative_to(root)): len(p.read_text("utf-8").splitlines()) for p in sorted(root.rglob("*.py"))}
    return {path: n for path, n in counts.items() if n > limit}


def test_every_package_sits_in_exactly_one_layer():
    """A new package is placed in LAYERS on purpose, never left out of the layering."""
    placed = [package for _, packages in LAYERS for package in packages]
    assert len(placed) == len(set(placed))
    assert {package_of(m) for m in import_graph()} == set(placed)


def test_no_import_points_up_a_layer():
    """Each module imports only packages of its own layer or of the layers below it."""
    assert upward_imports(import_graph(), LAYERS) == []


def test_upward_import_finder_finds_a_planted_one():
    """The checker itself: lesson model importing grading is reported; grading importing the lesson model is not."""
    layers = (("low", ("course.lesson",)), ("high", ("course.grading",)))
    graph = {"course.lesson.model": {"course.grading.rubric"}, "course.grading.rubric": {"course.lesson.validate"}}
    assert upward_imports(graph, layers) == ["course.lesson.model -> course.grading.rubric (low -> high)"]


def test_no_module_is_over_the_line_limit():
    """A module over MAX_LINES lines holds more than one job: split it into modules named for what they do."""
    assert long_modules(SRC, MAX_LINES) == {}


def test_line_limit_finder_names_a_long_module(tmp_path):
    """The checker itself: a module one line over the limit is named with its count; one at the limit is not."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * 601, "utf-8")
    (tmp_path / "pkg" / "fits.py").write_text("x = 1\n" * 600, "utf-8")
    assert long_modules(tmp_path, 600) == {"pkg/long.py": 601}


def test_no_package_imports_in_a_cycle():
    """Packages form layers: commands -> workflows -> integrations -> standard data -> lesson model."""
    graph: dict[str, set[str]] = {}
    for module, deps in import_graph().items():
        graph.setdefault(package_of(module), set()).update(
            package_of(d) for d in deps if package_of(d) != package_of(module)
        )
    assert cycles(graph) == []


def test_library_never_imports_the_command_line():
    """Only the CLI edge may import course.cli / course.commands."""
    offenders = [
        f"{m} -> {d}" for m, deps in import_graph().items() if not m.startswith(CLI) for d in deps if d.startswith(CLI)
    ]
    assert offenders == []


def test_cycle_finder_finds_a_planted_cycle():
    """The checker itself: a three-module loop is reported, a chain is not."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}}) == []


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants of a module and its classes and functions: prose, not code."""
    owners = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, owners)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _code_words(source: str) -> list[str]:
    """Every name and string the code uses, in source order (docstrings and comments left out)."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            words = [node.value]
        elif isinstance(node, ast.Name):
            words = [node.id]
        elif isinstance(node, ast.Attribute):
            words = [node.attr]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            words = [node.name]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            words = [getattr(node, "module", None) or "", *(alias.name for alias in node.names)]
        else:
            continue
        found += [(node.lineno, node.col_offset, word) for word in words if word]
    return [word for *_, word in sorted(found)]


def lesson_names_in(source: str) -> list[str]:
    """Lessons the code names (lesson05, lesson_5, 第 5 课), except as an example after 'e.g.' or '如'."""
    return [
        m[0]
        for word in _code_words(source)
        for m in LESSON_NAME.finditer(word)
        if not any(mark in word[: m.start()] for mark in EXAMPLE)
    ]


def lesson_modules() -> set[str]:
    """The lessons' own Python modules (drawing code beside figures.py), by module name.

    A module `course new` writes into every new lesson (its template lives in src/) is the engine's, not a lesson's.
    """
    import tempfile

    from course.lesson.scaffold import scaffold_lesson

    with tempfile.TemporaryDirectory() as scratch:
        written = [Path(p) for p in scaffold_lesson(Path(scratch), "lesson99", "t")]
    scaffolded = {p.stem for p in written if p.parent.name == "lesson99" and p.suffix == ".py"}
    return {p.stem for p in LESSONS.glob("*/*.py") if p.name != FIGURES} - scaffolded


def test_src_code_names_no_lesson():
    """Adding a lesson never needs src/: no module, name or string of the engine refers to a particular lesson."""
    offenders = {
        str(p.relative_to(SRC)): names
        for p in sorted(SRC.rglob("*.py"))
        if (names := lesson_names_in(p.read_text("utf-8")))
    }
    assert offenders == {}


def test_src_names_no_lessons_own_module():
    """A lesson's drawing code lives beside the lesson; the engine neither holds nor mentions a module of that name."""
    modules = lesson_modules()
    assert {"zero_memory", "zero3_comm_flow"} <= modules  # lesson 5's drawing code, moved out of src/
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(modules))) + r")\b")
    offenders = sorted(
        f"{p.relative_to(SRC)}: {m[0]}"
        for p in (SRC / "course").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
        for m in pattern.finditer(p.read_text("utf-8", errors="replace"))
    )
    assert offenders == []
    assert [str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if p.stem in modules] == []


def test_lesson_name_finder_sees_code_and_ignores_prose_and_examples():
    """The checker itself: a lesson in an import, a name or a path is found; docstrings, comments, examples are not."""
    planted = '''"""Module docstring about lesson05."""
# a comment about lesson 5
import solutions.lesson05
def for_lesson5():
    """Draws 第 5 课."""
    return "solutions/lesson05.py"
HELP = "the lesson, e.g. lesson05"
TITLE = "第 6 课：张量并行"
'''
    assert lesson_names_in(planted) == ["lesson05", "lesson5", "lesson05", "第 6 课"]
