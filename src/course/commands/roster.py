"""Import the class list (ids, names, emails, LMS ids) into nbgrader's gradebook: `course roster import FILE.csv`."""

from __future__ import annotations

import argparse
from pathlib import Path

from course.commands.where import ROOT_HELP, course_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course roster`."""
    parser.add_argument("action", choices=["import"], help="import: add or update the students of a CSV")
    parser.add_argument(
        "csv",
        type=Path,
        help="the roster CSV, UTF-8, with a header row: id and any of "
        "first_name, last_name, email, lms_user_id, or name (e.g. 张三)",
    )
    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)


def run(args: argparse.Namespace) -> int:
    """Check every row, then write the students to the gradebook nbgrader's config names."""
    from course.config import load_config
    from course.grading.gradebook import configured_gradebook
    from course.grading.roster_csv import import_roster, read_roster_csv
    from course.nbgrader_hooks.speedups import ask_alembic_once

    root = course_root(args.root, "roster")
    people = read_roster_csv(args.csv)
    ask_alembic_once()  # a new gradebook is stamped in process, as the course's nbgrader commands do
    where = configured_gradebook(root / load_config(root).autograder_dir)
    done = import_roster(where.url, people)
    print(
        f"course roster: {len(done.added)} student(s) added, {len(done.updated)} updated in gradebook "
        f"{where.shown} (grades untouched, nobody removed)"
    )
    return 0
