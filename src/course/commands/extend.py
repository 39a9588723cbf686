"""Give one student more time on one lesson: nbgrader's extension, which moves only their due date."""

from __future__ import annotations

import argparse
from pathlib import Path

from course.commands.where import ROOT_HELP, course_root
from course.errors import CourseError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course extend`."""
    parser.add_argument("assignment", help="the lesson, e.g. lesson05")
    parser.add_argument("student", help="the student's id")
    parser.add_argument("--hours", type=float, default=0, help="hours added to the lesson's due date")
    parser.add_argument("--days", type=float, default=0, help="days added to the lesson's due date")
    parser.add_argument("--clear", action="store_true", help="remove the student's extension")
    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)


def run(args: argparse.Namespace) -> int:
    """Write the extension to the gradebook and say the student's due date now."""
    from course.config import load_config
    from course.grading.assignments import require_assignment
    from course.grading.deadlines import apply_due_date, grant_extension
    from course.grading.gradebook import check_gradebook, configured_gradebook

    if args.clear == bool(args.hours or args.days):
        raise CourseError("expected --hours and/or --days (more time), or --clear (none)")
    root = course_root(args.root, "extend")
    autograder = root / load_config(root).autograder_dir
    require_assignment(autograder, args.assignment)
    where = configured_gradebook(autograder)
    check_gradebook(
        where,
        f"release {args.assignment} first (`nbgrader generate_assignment {args.assignment}`) "
        "and import the class (`course roster import FILE.csv`)",
    )
    apply_due_date(autograder, where.url, args.assignment)  # the date the extension moves
    done = grant_extension(where.url, args.assignment, args.student, hours=args.hours, days=args.days)
    due = (
        f"due {done.due:%Y-%m-%d %H:%M} UTC" if done.due else "the lesson has no due date yet ([tool.course] due_dates)"
    )
    print(
        f"course extend: {done.student} on {done.assignment}: extension {done.extension or 'none'}; {due}; "
        f"`course report {done.assignment}` takes it into the late penalty"
    )
    return 0
