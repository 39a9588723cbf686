"""Read one lesson's submissions, its release and its boilerplate through nbgrader's configured paths.

Everything the similarity engine needs is read here once: per student the answer cell's blank fills, the code
they wrote beyond the release's skeleton and their written answers; the release's and solution's fills; the
text a student may legitimately copy (the lesson page, the questions, the rubric, the released notebook); and,
when a gradebook exists, which code items each student failed (their failing-check pattern).
"""

from __future__ import annotations

import difflib
import glob
import re
from dataclasses import dataclass, field
from pathlib import Path

from course.assignment.answer_cell import BLANK
from course.errors import CourseError, Location
from course.grading.cells import grade_id


@dataclass(frozen=True)
class Work:
    """What one student handed in, split into the parts the detectors compare."""

    student: str
    fills: tuple[str, ...] | None  # the answer cell's blanks in order; None when the skeleton was edited
    own_code: str  # code beyond the release: added lines of the answer cell and added code cells
    answers: dict[str, str]  # question id → written answer
    failing: tuple[str, ...] | None = None  # code items scored below full marks in the gradebook; None: unknown


@dataclass(frozen=True)
class ClassWork:
    """One lesson's class: the works and what every student was given."""

    assignment: str
    works: tuple[Work, ...]
    reference_fills: tuple[str, ...] | None  # the solution's fills, from nbgrader's source notebook
    boilerplate_text: str  # lesson page, questions, rubric, released notebook: text anyone may quote
    boilerplate_code: str  # the released and the solution's answer cells
    question_ids: tuple[str, ...] = field(default=())
    answer_cell: str = ""  # grade id of the cell with the blanks (the lesson's graded exercise)


def blank_fills(skeleton: str, source: str) -> tuple[str, ...] | None:
    """The text the student put in each blank of SKELETON, or None when the rest of the skeleton was changed."""
    parts = skeleton.split(BLANK)
    if len(parts) < 2:
        return ()
    pattern = "(.*?)".join(re.escape(p) for p in parts)
    match = re.search(pattern, source, re.DOTALL)
    return tuple(g.strip() for g in match.groups()) if match else None


def added_lines(skeleton: str, source: str) -> str:
    """The lines of SOURCE that are not in SKELETON (what the student wrote around and instead of it)."""
    old, new = skeleton.splitlines(), source.splitlines()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    return "\n".join(
        line for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("insert", "replace") for line in new[j1:j2]
    )


def _source(cell) -> str:
    """A cell's source as one string."""
    return cell.source if isinstance(cell.source, str) else "".join(cell.source)


def work_of(student: str, nb, answer_cell: str, release_cells: dict[str, str], question_ids, failing=None) -> Work:
    """Split one submitted notebook into blank fills, own code and written answers."""
    by_id = {grade_id(c): _source(c) for c in nb.cells if grade_id(c)}
    skeleton = release_cells.get(answer_cell, "")
    source = by_id.get(answer_cell, "")
    released_code = set(release_cells.values())
    extra = [
        _source(c) for c in nb.cells if c.cell_type == "code" and not grade_id(c) and _source(c) not in released_code
    ]
    fills = blank_fills(skeleton, source)
    own = "\n".join([added_lines(skeleton, unfilled(skeleton, source, fills)), *extra]).strip()
    answers = {q: by_id.get(f"answer-{q}", "").strip() for q in question_ids}
    return Work(student, fills, own, answers, failing)


def unfilled(skeleton: str, source: str, fills: tuple[str, ...] | None) -> str:
    """SOURCE with its blanks emptied again, so the fills (compared blank by blank) do not count as own code."""
    if not fills:
        return source
    parts = skeleton.split(BLANK)
    pattern = "(.*?)".join(re.escape(p) for p in parts)
    return re.sub(pattern, lambda m: skeleton, source, count=1, flags=re.DOTALL)


def read_notebook(path: Path):
    """A notebook, or a CourseError naming the file when it is not one."""
    import nbformat

    try:
        return nbformat.read(path, as_version=4)
    except Exception as exc:
        raise CourseError(f"cannot read this notebook: {exc}", Location(str(path))) from None


def collect(
    project_root: Path, assignment: str, *, with_gradebook: bool = True, autograder: Path | None = None
) -> ClassWork:
    """The class's works and boilerplate, from nbgrader's submitted/release/source folders and the gradebook
    (of AUTOGRADER, another course root than the project's, when given)."""
    from nbgrader.coursedir import CourseDirectory

    from course.config import load_config
    from course.grading.gradebook import nbgrader_config
    from course.grading.load_checks import checks_for_course
    from course.grading.rubric import load_rubric, rubric_path

    config = load_config(Path(project_root))
    course_root = Path(autograder) if autograder else Path(project_root) / config.autograder_dir
    nb_config = nbgrader_config(course_root)
    coursedir = CourseDirectory(config=nb_config)
    rubric_file = rubric_path(course_root, assignment)
    rubric = load_rubric(rubric_file)
    spec = checks_for_course(course_root, assignment)
    question_ids = tuple(q.id for q in rubric.questions)
    release_nb = _one_notebook(Path(coursedir.format_path(coursedir.release_directory, ".", assignment)))
    release_cells = {grade_id(c): _source(c) for c in release_nb.cells if grade_id(c)}
    answer_cell = spec.exercises[0]
    solution = _solution_cell(Path(coursedir.format_path(coursedir.source_directory, ".", assignment)), answer_cell)
    reference = blank_fills(release_cells.get(answer_cell, ""), solution) if solution else None
    failing = read_failing(course_root, nb_config, assignment, rubric) if with_gradebook else {}
    works = []
    for folder in sorted(glob.glob(coursedir.format_path(coursedir.submitted_directory, "*", assignment))):
        student = Path(folder).relative_to(course_root).parts[1]
        notebook = _one_notebook(Path(folder), quiet=True)
        if notebook is not None:
            works.append(work_of(student, notebook, answer_cell, release_cells, question_ids, failing.get(student)))
    lesson_page = Path(project_root) / config.lessons_dir / f"{assignment}.qmd"
    boilerplate = [p.read_text("utf-8") for p in (lesson_page, rubric_file) if p.is_file()]
    boilerplate += [_source(c) for c in release_nb.cells]
    return ClassWork(
        assignment,
        tuple(works),
        reference,
        "\n".join(boilerplate),
        "\n".join([release_cells.get(answer_cell, ""), solution or ""]),
        question_ids,
        answer_cell,
    )


def _one_notebook(folder: Path, quiet: bool = False):
    """The notebook in an nbgrader assignment folder (the first by name); None (QUIET) or an error when none."""
    found = sorted(folder.glob("*.ipynb"))
    if not found:
        if quiet:
            return None
        raise CourseError(
            "expected the released notebook here; run `course grade` or `nbgrader generate_assignment` first",
            Location(str(folder)),
        )
    if quiet:
        try:
            return read_notebook(found[0])
        except CourseError:
            return None  # a damaged submission has nothing to compare; `course grade` reports it
    return read_notebook(found[0])


def _solution_cell(source_folder: Path, answer_cell: str) -> str | None:
    """The answer cell of nbgrader's source notebook (the solution), None when the source is not there."""
    found = sorted(source_folder.glob("*.ipynb"))
    if not found:
        return None
    for cell in read_notebook(found[0]).cells:
        if grade_id(cell) == answer_cell:
            return "\n".join(
                line
                for line in _source(cell).splitlines()
                if "### BEGIN SOLUTION" not in line and "### END SOLUTION" not in line
            )
    return None


def read_failing(course_root: Path, nb_config, assignment: str, rubric) -> dict[str, tuple[str, ...]]:
    """Per student the code items scored below full marks, from nbgrader's configured gradebook (none: {})."""
    from course.grading.gradebook import check_gradebook, configured_gradebook, gradebook
    from course.grading.rubric import code_grade_id

    where = configured_gradebook(course_root, nb_config)
    try:
        check_gradebook(where, "")
    except CourseError:
        return {}  # not graded yet: the failing-check patterns are left out
    out: dict[str, tuple[str, ...]] = {}
    with gradebook(where.url) as gb:
        for sub in gb.assignment_submissions(assignment):
            failed = []
            for item in rubric.code_items:
                grade = next((g for nb in sub.notebooks for g in nb.grades if g.name == code_grade_id(item.id)), None)
                if grade is not None and (grade.score or 0) < (grade.max_score or 0):
                    failed.append(item.id)
            out[sub.student.id] = tuple(failed)
    return out
