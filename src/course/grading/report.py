"""`course report`: from graders' marks in nbgrader's gradebook, the rubric and the veto records to a
final, explained grade per student (autograder/reports/lessonNN.csv and .html).

Each step its own module: the gradebook read and checked against the rubric (report_read), each student decided
by the result rules (report_decide), the evidence beside each decision (report_evidence: veto hints from the
answers' sentences and from the mistakes the re-check diagnosed, what grading found wrong with a file), the CSV and
HTML written (report_render). Scores are nbgrader's own (Grade.score, SubmittedAssignment.score), never recomputed;
a late submission loses what the late policy takes off the lesson's whole total (course.grading.late_total), which
the report writes back to the gradebook with the declared due date, so a changed due date, extension or policy
counts without regrading. Hints are never decisions; a grader confirms one with
`course report lesson05 --veto STUDENT ITEM VETO --note …`.
"""

from __future__ import annotations

from pathlib import Path

from course.config import load_config
from course.fileio import write_atomic
from course.grading.deadlines import DueDate, apply_due_date
from course.grading.gradebook import GradebookAt
from course.grading.late_total import record_penalties
from course.grading.report_decide import decide_lesson
from course.grading.report_evidence import (
    grader_hints,
    read_code_errors,
    read_code_hints,
    read_grade_report,
    read_grading_problems,
)
from course.grading.report_model import Hints, ReportResult, SimilarityInReport, StudentReport, course_paths
from course.grading.report_read import check_graded, read_gradebook
from course.grading.report_render import render_csv, render_html
from course.grading.rubric import load_rubric
from course.grading.vetoes import VetoRecord, add_veto
from course.hints.vocabulary import lesson_vocabulary


def make_report(
    course_root: Path,
    assignment: str,
    *,
    out_dir: Path | None = None,
    similarity: SimilarityInReport | None = None,
    autograder: Path | None = None,
    item_analysis: str = "",
) -> ReportResult:
    """Read rubric, gradebook and vetoes, decide each student, write CSV and HTML (ITEM_ANALYSIS: the class's
    item analysis section the HTML ends with, course.grading.item_render.lesson_section).

    Every check runs before either file is written, and each file is replaced atomically, so bad input
    leaves earlier reports untouched.
    """
    paths = course_paths(course_root, assignment, out_dir, autograder=autograder)
    due = declared_due_date(paths.gradebook, assignment)
    rubric, students = decide_lesson(paths)
    vocabulary = lesson_vocabulary(Path(course_root) / load_config(Path(course_root)).lessons_dir, rubric.lesson)
    outcomes = read_grade_report(paths.grade_report, rubric)
    hints = Hints(
        text={s.submission.student: grader_hints(s.submission, vocabulary) for s in students},
        code=read_code_hints(outcomes, rubric),
    )
    problems = read_grading_problems(outcomes, rubric)
    csv_text = render_csv(rubric, students, hints, problems, similarity)
    html_text = render_html(rubric, students, hints, problems, read_code_errors(outcomes), similarity, item_analysis)
    changes = record_lateness(paths.gradebook.url, assignment, due, students)
    csv_path = write_atomic(paths.out_dir / f"{assignment}.csv", csv_text)
    html_path = write_atomic(paths.out_dir / f"{assignment}.html", html_text)
    return ReportResult(csv_path, html_path, students, changes)


def record_lateness(
    db_url: str, assignment: str, due: DueDate | None, students: tuple[StudentReport, ...]
) -> tuple[str, ...]:
    """Write the lesson's late penalties back to the gradebook; what the report changed there (its due date too)."""
    penalties = record_penalties(db_url, assignment, {s.submission.student: s.submission.late for s in students})
    return (*([due.describe()] if due and due.before != due.due else []), *(c.describe(assignment) for c in penalties))


def declared_due_date(db: GradebookAt, lesson: str) -> DueDate | None:
    """Write the lesson's declared due date to its gradebook, so lateness counts from a date changed since grading
    (the gradebook checked first, never created)."""
    check_graded(db, lesson)
    return apply_due_date(db.course_root, db.url, lesson)


def record_veto(
    course_root: Path,
    assignment: str,
    *,
    student: str,
    question: str,
    veto: str,
    note: str,
    autograder: Path | None = None,
) -> VetoRecord:
    """Append one grader's veto record after checking it against the rubric and the gradebook."""
    paths = course_paths(course_root, assignment, autograder=autograder)
    rubric = load_rubric(paths.rubric)
    students = {s.student for s in read_gradebook(paths.gradebook, rubric, paths.autograded)}
    return add_veto(paths.vetoes, rubric, students, VetoRecord(student, question, veto, note))
