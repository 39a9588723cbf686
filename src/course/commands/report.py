"""Write a lesson's grade report (CSV + HTML) from the gradebook, the rubric and graders' veto records; without a
lesson, the semester's: every student × every lesson, totals under the course policy, Canvas and Moodle imports."""

from __future__ import annotations

import argparse
from pathlib import Path

from course.commands.where import AUTOGRADER_HELP, ROOT_HELP, course_root, nbgrader_course
from course.errors import CourseError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course report`."""
    parser.add_argument(
        "assignment",
        nargs="?",
        help="lesson / nbgrader assignment, e.g. lesson05; without one, "
        "the semester report (reports/semester.csv, semester.html, canvas.csv, moodle.csv)",
    )
    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)
    parser.add_argument("--autograder", type=Path, default=None, help=AUTOGRADER_HELP)
    parser.add_argument(
        "--veto",
        nargs=3,
        metavar=("STUDENT", "ITEM", "VETO_ID"),
        help="first record a veto (一票否决) for STUDENT's answer to a question (ITEM: a question "
        "id of the lesson's rubric, e.g. Q1) or their code (ITEM: a code item id), then write "
        "the report",
    )
    parser.add_argument("--note", help="with --veto: what the student wrote that triggers it (required)")


def run(args: argparse.Namespace) -> int:
    """Record the veto if one is given, then write the report and print the class summary."""
    args.root = course_root(args.root, "report")
    autograder = nbgrader_course(args.autograder, "report")
    from course.grading.report import make_report, record_veto

    if args.assignment is None:
        return semester(args)
    from course.config import load_config
    from course.grading.assignments import require_assignment

    require_assignment(autograder or args.root / load_config(args.root).autograder_dir, args.assignment)
    if args.veto:
        if not args.note:
            raise CourseError('--veto needs --note "…" saying what the student wrote that triggers it')
        student, question, veto = args.veto
        record = record_veto(
            args.root,
            args.assignment,
            student=student,
            question=question,
            veto=veto,
            note=args.note,
            autograder=autograder,
        )
        print(f"  recorded veto {record.veto} on {record.question} of {record.student} (line {record.line})")
    from course.grading.item_render import lesson_section
    from course.workflows.similarity_report import similarity_for_report

    result = make_report(
        args.root,
        args.assignment,
        similarity=similarity_for_report(args.root, args.assignment, autograder=autograder),
        item_analysis=lesson_section(args.root, args.assignment, autograder=autograder),
        autograder=autograder,
    )
    for change in result.changes:
        print(f"  changed {change}")
    for path in (result.csv, result.html):
        print(f"  wrote {path}")
    counts = {r: sum(s.result == r for s in result.students) for r in ("PASS", "FAIL", "INCOMPLETE")}
    print("course report: " + ", ".join(f"{n} {r}" for r, n in counts.items()))
    return 0


def semester(args: argparse.Namespace) -> int:
    """Write the semester report and print each lesson's state and the semester's counts."""
    from course.grading.semester import make_semester_report

    if args.veto:
        raise CourseError("--veto needs the lesson it is about: course report lessonNN --veto …")
    if args.autograder:
        raise CourseError("--autograder is for one lesson's report: the semester report reads the course's own")
    result = make_semester_report(args.root)
    for change in result.changes:
        print(f"  changed {change}")
    for path in (result.csv, result.html, result.canvas, result.moodle):
        print(f"  wrote {path}")
    for lesson in result.lessons:
        print(
            f"  {lesson.name}: {len(lesson.students)} submissions in the gradebook"
            if lesson.counted
            else f"  {lesson.name}: not graded yet"
        )
    counts = {r: sum(s.result == r for _, _, s in result.rows) for r in ("PASS", "FAIL", "INCOMPLETE")}
    print("course report (semester): " + ", ".join(f"{n} {r}" for r, n in counts.items()))
    return 0
