"""Grade an assignment: sandboxed, parallel, resumable nbgrader autograde, then an out-of-process re-check."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course grade`."""
    parser.add_argument("assignment", help="assignment id, e.g. lesson05 (grades autograder/submitted/*/lesson05)")
    parser.add_argument(
        "--autograder",
        type=Path,
        default=None,
        help="the nbgrader course root (default: the autograder/ of the course repository the current "
        "folder is in, as git finds its repository)",
    )
    parser.add_argument("--jobs", type=int, default=None, help="submissions graded at once (default: CPU cores)")
    # Each option overrides one GradingSandbox setting of the course's nbgrader_config.py for this run.
    parser.add_argument(
        "--memory",
        type=int,
        default=None,
        help="memory limit per submission in MiB (default: c.GradingSandbox.memory_bytes, 2048 MiB)",
    )
    parser.add_argument(
        "--cell-timeout",
        type=int,
        default=None,
        help="seconds one cell may run (default: c.GradingSandbox.cell_timeout_s, else c.Execute.timeout, 30)",
    )
    parser.add_argument(
        "--timeout",
        type=int,
        default=None,
        help="seconds one submission may run (default: c.GradingSandbox.submission_timeout_s, 120)",
    )
    parser.add_argument(
        "--call-timeout",
        type=float,
        default=None,
        help="seconds one call of a student's function may take in the re-check "
        "(default: c.GradingSandbox.recheck_call_timeout_s, 2)",
    )
    parser.add_argument(
        "--engine",
        choices=["auto", "shell", "kernel"],
        default=None,
        help="how cells run (default: c.GradingSandbox.engine, auto)",
    )
    parser.add_argument(
        "--force",
        nargs="*",
        metavar="STUDENT",
        default=None,
        help="grade again even what is already graded for the current version: everyone, or the "
        "students named (manual scores of unchanged answers are kept)",
    )
    parser.add_argument(
        "--unsafe",
        action="store_true",
        help="run students' code without the bubblewrap sandbox (only where none can be had, "
        "and only for code you trust); the same as c.GradingSandbox.unsafe = True",
    )


def run(args: argparse.Namespace) -> int:
    """Grade, then print the per-student summary; Ctrl-C at any moment says how far it got (exit 130)."""
    from course.errors import Interrupted

    try:
        return grade(args)
    except Interrupted:
        raise
    except KeyboardInterrupt:  # before the batch started (imports, checks): nobody graded, nothing to resume
        raise Interrupted(
            f"interrupted before anyone was graded; `course grade {args.assignment}` starts it again"
        ) from None


def grade(args: argparse.Namespace) -> int:
    """Find the course, grade, print the summary."""
    from course.commands.where import course_root
    from course.config import load_config
    from course.workflows.grade import GradeOptions, grade_assignment, summary

    if args.autograder is None:
        root = course_root(None, "grade")
        args.autograder = root / load_config(root).autograder_dir
    else:
        print(f"course grade: the nbgrader course root {args.autograder.resolve()}", flush=True)

    given = {
        "memory_bytes": args.memory and args.memory * 2**20,
        "cell_timeout_s": args.cell_timeout,
        "submission_timeout_s": args.timeout,
        "recheck_call_timeout_s": args.call_timeout,
        "engine": args.engine,
        "unsafe": args.unsafe or None,
    }
    settings = {name: value for name, value in given.items() if value is not None}
    options = GradeOptions(
        jobs=args.jobs, settings=settings, force_all=args.force == [], force_students=tuple(args.force or ())
    )
    result = grade_assignment(args.autograder, args.assignment, options)
    print(summary(result))
    return 0
