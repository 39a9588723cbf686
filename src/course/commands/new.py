"""Scaffold a new lesson that builds, releases and grades out of the box: `course new lesson06 --title …`."""

from __future__ import annotations

import argparse
from pathlib import Path

from course.commands.where import ROOT_HELP, course_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course new`."""
    parser.add_argument("lesson", help="the new lesson's name, lessonNN (e.g. lesson06)")
    parser.add_argument("--title", required=True, help="the lesson's title, e.g. '第 6 课：张量并行'")
    parser.add_argument("--root", type=Path, default=None, help=ROOT_HELP)


def run(args: argparse.Namespace) -> int:
    """Write the files and say what to do next."""
    args.root = course_root(args.root, "new")
    from course.lesson.scaffold import scaffold_lesson

    for path in scaffold_lesson(args.root, args.lesson, args.title):
        print(f"  wrote {path}")
    print(
        f"course new: next `course build`, then `course demo {args.lesson}` grades the demo class; "
        f"edit {args.lesson}.qmd, its checks.yml, the solution and the rubric together"
    )
    return 0
