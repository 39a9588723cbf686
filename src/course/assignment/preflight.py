"""Look at one student's submission folder before grading and say, per student, what is wrong and where.

Unreadable submissions (no notebook, a renamed notebook, over the size limit, not UTF-8, invalid JSON, not a
notebook, not the assignment notebook: the lesson's reading notebook or another lesson's) are not graded: they
score 0 with a message saying how to fix them, and the report calls them INCOMPLETE. Readable ones are graded;
stripped metadata, edited read-only cells and deleted cells are reported with the repair nbgrader's sanitize step
makes (course.nbgrader_hooks.restore). Each problem carries the fix a student can make before handing in, which
`course check` shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from course.errors import Location
from course.grading.cells import CellMatch, match_cells, nbgrader_meta

MAX_NOTEBOOK_BYTES = 20 * 2**20  # a lesson notebook is well under 1 MB; bigger ones carry huge outputs


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a submission: where it is, what happens because of it and what the student can do."""

    where: Location
    message: str
    fix: str = ""  # what the student does about it (said by `course check` before they hand it in)
    harmless: bool = False  # graded exactly as the student expects all the same (e.g. metadata restored)

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass(frozen=True)
class Preflight:
    """A submission's notebook (None when it cannot be graded) and its problems."""

    notebook: Path | None
    problems: tuple[Problem, ...]


def preflight(
    folder: Path, notebook_name: str, source_cells: list, *, shown_as: str, released: list[dict[str, str]] = ()
) -> Preflight:
    """Check FOLDER/NOTEBOOK_NAME against the source notebook's cells; SHOWN_AS prefixes paths in messages.

    RELEASED: the read-only cells of every earlier release (course.assignment.versions.released_texts), so a
    student is compared with the release they received."""
    path = Path(folder) / notebook_name
    where = Location(f"{shown_as}/{notebook_name}")
    if not path.is_file():
        others = sorted(p.name for p in Path(folder).glob("*.ipynb"))
        if others:
            return _unreadable(
                where,
                f"expected {notebook_name}, found {', '.join(others)}; rename it to "
                f"{notebook_name} and grade again (scored 0 until then)",
                f"hand it in named {notebook_name}",
            )
        return _unreadable(where, f"no {notebook_name} submitted; scored 0", f"hand in {notebook_name}")
    return preflight_file(path, notebook_name.removesuffix(".ipynb"), source_cells, where=where, released=released)


def preflight_file(
    path: Path, assignment: str, source_cells: list, *, where: Location, released: list[dict[str, str]] = ()
) -> Preflight:
    """Check the notebook at PATH, whatever its name, as ASSIGNMENT's submission (WHERE: how messages name it)."""
    size = path.stat().st_size
    if size > MAX_NOTEBOOK_BYTES:
        return _unreadable(
            where,
            f"the notebook is {size / 2**20:.0f} MB, over the {MAX_NOTEBOOK_BYTES // 2**20} MB "
            "limit (usually a huge output: clear the outputs and submit again); scored 0",
            "Edit → Clear Outputs of All Cells, save, and hand it in again",
        )
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _unreadable(
            where,
            f"not UTF-8 text (byte {exc.start}); save the notebook from Jupyter and submit again; scored 0",
            "save the notebook from Jupyter",
        )
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return _unreadable(
            Location(where.path, exc.lineno),
            f"not valid JSON ({exc.msg}, column {exc.colno}); the file is damaged: scored 0",
            "save the notebook from Jupyter again (File → Save) and check the copy you hand in",
        )
    try:
        import nbformat

        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # nbformat raises several kinds; all mean "not a notebook we can grade"
        first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
        return _unreadable(
            where,
            f"not a valid Jupyter notebook ({first}); scored 0",
            "save the notebook from Jupyter again (File → Save)",
        )
    match = match_cells(nb.cells, source_cells, released)
    wrong = not_the_assignment(nb, assignment, source_cells, match)
    if wrong:
        return _unreadable(where, *wrong)
    return Preflight(path, tuple(cell_problems(match, source_cells, where)))


def not_the_assignment(nb, assignment: str, source_cells: list, match: CellMatch) -> tuple[str, str] | None:
    """(what is wrong, the fix) when NB is not ASSIGNMENT's assignment notebook at all: the lesson's reading
    notebook, another lesson's assignment, or a notebook holding none of the assignment's graded cells (found by
    metadata, cell id or read-only text, so an editor that strips metadata does not make it one)."""
    from course.lesson.notebook_names import assignment_notebook, notes_notebook

    name = assignment_notebook(assignment)
    course = nb.metadata.get("course", {})
    course = course if isinstance(course, dict) else {}
    lesson = course.get("lesson")
    if lesson and lesson != assignment:
        return (
            f"this is {lesson}'s notebook, not {assignment}'s; scored 0 until {assignment}'s assignment is handed in",
            f"hand in your {name} of {assignment} (its assignment notebook)",
        )
    graded = [grade_id for c in source_cells if (grade_id := nbgrader_meta(c).get("grade_id"))]
    if course.get("notebook") == "notes" or (graded and not match.index):  # stripped metadata still matches by text
        what = (
            f"the lesson's reading notebook ({notes_notebook(assignment)})"
            if course.get("notebook") == "notes"
            else "a notebook with none of the assignment's graded cells (its answer, test and question cells)"
        )
        return (
            f"not the assignment notebook: this is {what}; scored 0 until the assignment is handed in",
            f"download the assignment {name} (the 作业 notebook on the course site, or fetch {assignment} on the "
            "hub), copy your answers into its answer cells and hand that in",
        )
    return None


def _unreadable(where: Location, message: str, fix: str = "") -> Preflight:
    """A submission that cannot be graded."""
    return Preflight(None, (Problem(where, message, fix),))


def cell_problems(match: CellMatch, source_cells: list, where: Location) -> list[Problem]:
    """What happened to the graded cells (as MATCH found them) and what grading does about it."""
    meta = {nbgrader_meta(c).get("grade_id"): nbgrader_meta(c) for c in source_cells}
    problems = []
    for name in match.by_cell_id + match.by_text:
        problems.append(
            Problem(
                Location(where.path, cell=name),
                "nbgrader metadata was missing; recognised the cell and restored it, graded normally",
                harmless=True,
            )
        )
    for name in match.edited:
        problems.append(
            Problem(
                Location(where.path, cell=name),
                "read-only cell was edited; graded with the original",
                "undo your change to this read-only cell (copy it from a fresh download of the "
                "assignment): grading runs the original, not your edit",
            )
        )
    for name in match.missing:
        m = meta[name]
        if m.get("grade") and m.get("solution"):
            what = "answer cell was deleted; re-inserted empty (0 points)"
        elif m.get("locked") or m.get("grade"):
            what = "cell was deleted; re-inserted from the source and graded"
        else:
            what = "answer cell was deleted; graded the notebook's other code cells"
        problems.append(
            Problem(
                Location(where.path, cell=name),
                what,
                "put the cell back (copy it, with its place, from a fresh download of the assignment)",
            )
        )
    return problems
