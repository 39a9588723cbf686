"""Write a student's notebook from the released one: blanks filled, code added, written answers typed in.

The test fixtures (tests/assignment/make_submissions.py) and the demo class (demo/classes/) are made with
this, so each sample is the release plus a small, named edit.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

from course.assignment.answer_cell import BLANK
from course.grading.cells import grade_id
from course.grading.rubric import question_grade_id


def cell_by_grade_id(nb, name: str):
    """The notebook cell with this nbgrader grade id (KeyError when absent)."""
    for cell in nb.cells:
        if grade_id(cell) == name:
            return cell
    raise KeyError(name)


def fill_blanks(source: str, fills: Sequence[str]) -> str:
    """Replace the blanks, in order, with FILLS (one per blank)."""
    parts = source.split(BLANK)
    if len(parts) - 1 != len(fills):
        raise ValueError(f"the answer cell has {len(parts) - 1} blanks, got {len(fills)} fills")
    return "".join(p + f for p, f in zip(parts, [*fills, ""]))


def submission(
    release,
    answer_cell: str,
    fills: Sequence[str] | None,
    *,
    prepend: str = "",
    answers: Mapping[str, str] | None = None,
):
    """A copy of RELEASE with the blanks of ANSWER_CELL filled, PREPEND put in front of it, written answers typed in."""
    nb = copy.deepcopy(release)
    cell = cell_by_grade_id(nb, answer_cell)
    if fills is not None:
        cell.source = fill_blanks(cell.source, fills)
    if prepend:
        cell.source = f"{prepend.strip()}\n\n{cell.source}"
    for qid, text in (answers or {}).items():
        cell_by_grade_id(nb, question_grade_id(qid)).source = text.strip()
    return nb
