"""Check a lesson notebook before submitting it: which visible checks pass (hidden checks run at grading)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course check`."""
    parser.add_argument("notebook", type=Path, help="your notebook, e.g. lesson05.ipynb")
    parser.add_argument("--autograder", type=Path, default=None,
                        help="the course's nbgrader folder, where the rubrics are (default: the autograder/ of the "
                             "course repository found from here or above, else of the one the course is installed from)")
    parser.add_argument("--unsafe", action="store_true",
                        help="run your code without the bubblewrap sandbox (only where none can be had)")


def run(args: argparse.Namespace) -> int:
    """Print one line per graded item; exit 1 when a visible check fails."""
    from course.workflows.check_notebook import check_notebook

    results = check_notebook(args.notebook, course_root=args.autograder, unsafe=args.unsafe)
    for title, verdict in results:
        print(f"  {'✓' if verdict.passed else '✗'} {title}: {verdict.reason}")
        for found in verdict.diagnoses:
            print(f"      诊断：{found.name}——{found.explanation}")
    passed = sum(v.passed for _, v in results)
    print(f"course check: {passed}/{len(results)} items pass their visible checks; "
          "grading also runs hidden checks with other inputs")
    return 0 if passed == len(results) else 1
