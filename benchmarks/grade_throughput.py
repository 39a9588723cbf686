"""Grading throughput: stock sequential `nbgrader autograde` vs `course grade` (sandboxed, parallel), one run.

    .venv/bin/python benchmarks/grade_throughput.py [--students 40] [--jobs N]

Both grade the same class (copies of the released demo assignment, each student one of the committed
well-behaved samples) on this machine, one after the other; the script prints both wall times, the ratio, where
`course grade`'s time went, and whether both gradebooks hold the same scores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ["reference", "forgot-extra", "zero2-shards-params", "swapped-comm-volumes", "comm-blanks-left",
           "floor-division", "release"]


def prepare(course_root: Path, students: int) -> None:
    """A course root with the released assignment and STUDENTS submissions, no grades yet."""
    shutil.copytree(ROOT / "autograder", course_root, ignore=shutil.ignore_patterns(
        "submitted", "autograded", "feedback", "reports", ".course-grade", "gradebook.db"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", "lesson05", "--force"], cwd=course_root,
                   check=True, capture_output=True, env=env)
    for n in range(students):
        sample = SAMPLES[n % len(SAMPLES)]
        target = course_root / "submitted" / f"student-{n:02d}" / "lesson05"
        target.mkdir(parents=True)
        shutil.copyfile(ROOT / "tests" / "assignment" / "submissions" / f"{sample}.ipynb", target / "lesson05.ipynb")


def timed(argv: list[str], cwd: Path) -> tuple[float, str]:
    """Wall seconds of one command, and what it printed."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, check=True, capture_output=True, text=True, env=env)
    return time.perf_counter() - start, proc.stdout


def scores(course_root: Path) -> dict:
    """Every student's score per grade cell, as nbgrader stored it."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course_root / 'gradebook.db'}") as gb:
        return {(g.student.id, g.name): g.score for s in gb.assignment_submissions("lesson05") for nb in s.notebooks
                for g in nb.grades}


def main() -> int:
    """Run both graders on the same class and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="grade-bench-") as tmp:
        stock_root, course_root = Path(tmp) / "stock", Path(tmp) / "course"
        for root in (stock_root, course_root):
            prepare(root, args.students)
        stock, _ = timed([sys.executable, "-m", "nbgrader", "autograde", "lesson05", "--force"], stock_root)
        ours, printed = timed([sys.executable, "-m", "course", "grade", "lesson05", "--autograder", str(course_root),
                               "--jobs", str(args.jobs)], ROOT)
        report = json.loads((course_root / "reports" / "lesson05-grade.json").read_text("utf-8"))
        same = {k: v for k, v in scores(stock_root).items()} == {k: v for k, v in scores(course_root).items()}
        flagged = sum(1 for s in report.values() if s["flagged"])
    print(f"machine: {os.cpu_count()} cores; {args.students} submissions; course grade --jobs {args.jobs}")
    print(f"stock nbgrader autograde (sequential, unsandboxed): {stock:6.1f} s  ({stock / args.students:.2f} s/submission)")
    print(f"course grade (sandboxed, parallel, re-checked):    {ours:6.1f} s  ({ours / args.students:.2f} s/submission)")
    print(f"ratio stock / course grade: {stock / ours:.2f}x")
    print(f"same scores in both gradebooks: {same}; flagged by course grade: {flagged}")
    print("where course grade's time went: " + next(ln for ln in printed.splitlines() if ln.startswith("graded ")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
