"""Check a lesson notebook before submitting it: which visible checks pass (hidden checks run at grading)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `course check`."""
    parser.add_argument("notebook", type=Path, help="your notebook, e.g. lesson05.ipynb")
    parser.add_argument(
        "--autograder",
        type=Path,
        default=None,
        help="the course's nbgrader folder, where the rubrics are (default: the autograder/ of the "
        "course repository found from here or above, else of the one the course is installed from)",
    )
    parser.add_argument(
        "--unsafe",
        action="store_true",
        help="run your code without the bubblewrap sandbox (only where none can be had)",
    )


def run(args: argparse.Namespace) -> int:
    """Print what grading would take otherwise than expected (with the fix), then one line per graded item, in the
    course's language (`[tool.course] language`); exit 1 when anything would score lower than the notebook shows."""
    from course.messages import translator
    from course.workflows.check_notebook import check_notebook

    result = check_notebook(args.notebook, course_root=args.autograder, unsafe=args.unsafe)
    _ = translator(result.project)
    print(_("course check: the course's nbgrader folder {folder}").format(folder=result.course_root))
    for problem in result.problems:
        print(f"  ✗ {problem}")
        if problem.fix:
            print("      " + _("Fix: {fix}").format(fix=problem.fix))
    for title, verdict in result.items:
        reason = _("every visible check passes") if verdict.passed else verdict.reason
        print(f"  {'✓' if verdict.passed else '✗'} {title}: {reason}")
        for found in verdict.diagnoses:
            print(
                "      " + _("Diagnosis: {name}: {explanation}").format(name=found.name, explanation=found.explanation)
            )
    if not result.gradable:
        print(_("course check: grading could not grade this file (scored 0): fix the above first"))
        return 1
    passed = sum(v.passed for _item, v in result.items)
    print(
        _(
            "course check: {passed}/{total} items pass their visible checks; grading also runs hidden checks with "
            "other inputs"
        ).format(passed=passed, total=len(result.items))
    )
    if result.problems:
        print(
            _(
                "course check: {count} problem(s) above would cost points at grading; fix them before you hand it in"
            ).format(count=len(result.problems))
        )
    return 0 if result.ok else 1
