"""A small nbgrader source notebook (helpers, an exercise, a test with hidden tests, a written answer) and the copy a
student gets, for the hooks that restore and check submissions."""

from __future__ import annotations

import copy

import nbformat


def cell(kind: str, source: str, name: str | None, **flags) -> nbformat.NotebookNode:
    """A cell whose id is its grade id, as in generated source notebooks."""
    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    c = make(source)
    if name:
        c.id = name
        c.metadata["nbgrader"] = {
            "grade_id": name,
            "grade": False,
            "solution": False,
            "locked": False,
            "schema_version": 3,
            "task": False,
            **flags,
        }
    return c


def source_notebook() -> nbformat.NotebookNode:
    """Helpers, answer, two tests (one with hidden tests), a question with its written answer."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        cell("markdown", "intro", None),
        cell("code", "helpers()", "course-checks", locked=True),
        cell("code", "def f(): return ______", "ex-f", solution=True),
        cell(
            "code",
            "check(f())\n### BEGIN HIDDEN TESTS\ncheck(f(7))\n### END HIDDEN TESTS",
            "test-a",
            grade=True,
            locked=True,
            points=1,
        ),
        cell("code", "check(f(2))", "test-b", grade=True, locked=True, points=1),
        cell("markdown", "### Q1", "question-Q1", locked=True),
        cell("markdown", "", "answer-Q1", grade=True, solution=True, points=2),
    ]
    return nb


def released(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student's copy: hidden tests removed, cell ids kept."""
    out = copy.deepcopy(nb)
    out.cells[3].source = "check(f())"
    return out
