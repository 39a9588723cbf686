"""Each submission of a lesson read from nbgrader's gradebook (through course.grading.gradebook, its one door), checked
against the rubric: the grade cells and their points, scores within range, graders' comments, the answers' texts."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from course.errors import CourseError
from course.grading.gradebook import GradebookAt, check_gradebook, gradebook, nbgrader_config
from course.grading.late_policy import policy_in_words
from course.grading.late_total import late_plugin, lesson_late
from course.grading.report_model import ItemScore, Submission
from course.grading.rubric import Rubric, code_grade_id, format_points, question_grade_id


def read_gradebook(db: GradebookAt, rubric: Rubric, autograded: Path) -> tuple[Submission, ...]:
    """Every submission of the rubric's assignment with its rubric items, sorted by student id."""
    check_graded(db, rubric.lesson)
    with gradebook(db.url) as gb:
        try:
            assignment = gb.find_assignment(rubric.lesson)
        except MissingEntry:
            held = ", ".join(a.name for a in gb.assignments) or "no assignments"
            raise CourseError(
                f"expected the gradebook of {rubric.lesson}, but it holds {held}", db.location()
            ) from None
        cells = _check_cells(db, rubric, assignment)
        config = nbgrader_config(db.course_root)
        plugin, policy = late_plugin(config), policy_in_words(config)
        grades, comments = _class_rows(gb, rubric.lesson)
        submissions = []
        for s in sorted(assignment.submissions, key=lambda s: s.student_id):
            student = s.student_id
            if _handed_in(grades.get(student, {}).values()):
                late = lesson_late(s, plugin)
                read = _submission(
                    gb,
                    db,
                    rubric,
                    cells,
                    (grades[student], comments.get(student, {})),
                    autograded,
                    student,
                    s.score - (late.taken if late else 0),
                )
                submissions.append(replace(read, late=late, late_policy=policy))
        return tuple(submissions)


def _class_rows(gb: Gradebook, lesson: str) -> tuple[dict[str, dict], dict[str, dict]]:
    """Every grade of LESSON's submissions (student → (notebook, grade id) → Grade) and every grader's comment
    (student → (notebook, grade id) → text), each in one query rather than one per item and student."""
    from nbgrader.api import Comment, Grade

    return _by_student(gb, lesson, Grade, Grade), _by_student(gb, lesson, Comment, Comment.manual_comment)


def _by_student(gb: Gradebook, lesson: str, model, selected) -> dict[str, dict]:
    """Student → (notebook, cell name) → SELECTED of each row of MODEL (Grade or Comment) in LESSON's submissions."""
    from nbgrader.api import Assignment, BaseCell, Notebook, SubmittedAssignment, SubmittedNotebook

    query = (
        gb.db.query(selected, SubmittedAssignment.student_id, Notebook.name, BaseCell.name)
        .select_from(model)
        .join(SubmittedNotebook, model.notebook_id == SubmittedNotebook.id)
        .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
        .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
        .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
        .join(BaseCell, model.cell_id == BaseCell.id)
        .filter(Assignment.name == lesson)
    )
    found: dict[str, dict] = {}
    for value, student, notebook, cell in query:
        found.setdefault(student, {})[(notebook, cell)] = value
    return found


def check_graded(db: GradebookAt, lesson: str) -> None:
    """Stop unless DB is a readable gradebook, naming how a lesson gets graded."""
    check_gradebook(
        db,
        f"nothing is graded there yet: release and grade {lesson} first "
        f"(`nbgrader generate_assignment {lesson}`, then `course grade {lesson}`), "
        "or set db_url to the gradebook that holds the grades",
    )


def _handed_in(grades) -> bool:
    """Whether nbgrader graded anything of a submission (its GRADES): a student given an extension before handing in
    has a submission row (where nbgrader keeps the extension) with no score yet."""
    return any(g.auto_score is not None or g.manual_score is not None or g.needs_manual_grade for g in grades)


def _check_cells(db: GradebookAt, rubric: Rubric, assignment) -> dict[str, tuple[str, float]]:
    """The gradebook's grade cells must be exactly the rubric's, with the same points; grade id → (notebook, the
    cell's points)."""
    found = {c.name: (nb.name, c.max_score) for nb in assignment.notebooks for c in nb.grade_cells}
    rubric_file = rubric.path.name
    for grade_id, points in rubric.grade_ids().items():
        if grade_id not in found:
            raise CourseError(
                f"expected grade cell {grade_id!r} of rubrics/{rubric_file} in {rubric.lesson}; "
                f"the gradebook has {', '.join(sorted(found)) or 'none'}",
                db.location(),
            )
        if not math.isclose(found[grade_id][1], points):
            raise CourseError(
                f"grade cell is worth {format_points(found[grade_id][1])} points in the gradebook, "
                f"but {format_points(points)} in rubrics/{rubric_file}",
                db.location(cell=grade_id),
            )
    extra = sorted(set(found) - set(rubric.grade_ids()))
    if extra:
        raise CourseError(
            f"grade cell(s) {', '.join(extra)} are not in rubrics/{rubric_file}; expected only "
            f"{', '.join(rubric.grade_ids())}",
            db.location(),
        )
    return found


def _submission(
    gb: Gradebook,
    db: GradebookAt,
    rubric: Rubric,
    cells: dict[str, tuple[str, float]],
    rows: tuple[dict, dict],
    autograded: Path,
    student: str,
    total: float,
) -> Submission:
    """One student's rubric items from their gradebook ROWS (_class_rows: grades, comments), plus answer texts for
    graders' hints."""
    grades, comments = rows

    def item(grade_id: str, item_id: str, title: str, with_comment: bool) -> ItemScore:
        notebook, max_score = cells[grade_id]
        grade = grades.get((notebook, grade_id)) or gb.find_grade(grade_id, notebook, rubric.lesson, student)
        _check_range(db, student, grade_id, grade, max_score)
        return ItemScore(
            grade_id,
            item_id,
            title,
            max_score,
            None if grade.needs_manual_grade else grade.score,
            grade.extra_credit,
            (comments.get((notebook, grade_id)) or None) if with_comment else None,
        )

    code = tuple(item(code_grade_id(c.id), c.id, c.title, False) for c in rubric.code_items)
    questions = tuple(item(question_grade_id(q.id), q.id, q.title, True) for q in rubric.questions)
    notebooks = {cells[question_grade_id(q.id)][0] for q in rubric.questions}
    capped = min(total, rubric.total)  # extra credit counts up to full marks (docs/graders.md)
    return Submission(student, code, questions, capped, _answers(autograded, rubric, student, notebooks))


def _check_range(db: GradebookAt, student: str, grade_id: str, grade, max_score: float) -> None:
    """A score outside 0..MAX_SCORE (the cell's) means the gradebook and the rubric disagree; stop before deciding
    anything."""
    for kind, value in (("manual", grade.manual_score), ("auto", grade.auto_score)):
        if value is not None and not 0 <= value <= max_score:
            raise CourseError(
                f"student {student}: {kind} score {format_points(value)} is outside 0 to "
                f"{format_points(max_score)}, the cell's maximum",
                db.location(cell=grade_id),
            )


def _answers(autograded: Path, rubric: Rubric, student: str, notebooks: set[str]) -> dict[str, str] | None:
    """Question id → the student's answer text from the autograded notebook(s), None if not on disk."""
    wanted = {question_grade_id(q.id): q.id for q in rubric.questions}
    answers: dict[str, str] = {}
    for name in sorted(notebooks):
        path = autograded / student / rubric.lesson / f"{name}.ipynb"
        if not path.is_file():
            return None
        for cell in nbformat.read(path, as_version=4).cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in wanted:
                answers[wanted[grade_id]] = cell.source
    return answers
