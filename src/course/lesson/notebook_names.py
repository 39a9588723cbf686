"""The file names of a lesson's two notebooks on the sites, decided here once for the engine, pages and checks.

The student hands in the assignment (nbgrader's release) under the very name nbgrader grades, lessonNN.ipynb, so
the file downloaded is the file handed in, unrenamed. The lesson rendered as a notebook, to read and experiment in,
is lessonNN-notes.ipynb: a name no one takes for the assignment.
"""

from __future__ import annotations

NOTES_SUFFIX = "-notes"


def assignment_notebook(stem: str) -> str:
    """The assignment students download, fill and hand in: the name nbgrader's release and autograde use."""
    return f"{stem}.ipynb"


def notes_notebook(stem: str) -> str:
    """The whole lesson as a reading notebook (never graded)."""
    return f"{stem}{NOTES_SUFFIX}.ipynb"


def notes_lesson(filename: str) -> str | None:
    """The lesson whose reading notebook FILENAME names (lesson05-notes.ipynb → lesson05), else None."""
    stem = filename.removesuffix(".ipynb")
    return stem.removesuffix(NOTES_SUFFIX) if stem.endswith(NOTES_SUFFIX) and filename.endswith(".ipynb") else None
