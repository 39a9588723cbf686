"""Grading throughput: `nbgrader autograde` (unsandboxed and with the course config) vs `course grade`, one run.

    .venv/bin/python benchmarks/grade_throughput.py [--students 40] [--jobs N]

All three grade the same class (copies of the released demo assignment, each student one of the committed
well-behaved samples) on this machine, one after the other: stock `nbgrader autograde` with nbgrader's own
Execute (unsandboxed, the old way), stock `nbgrader autograde` with the course's nbgrader config (sandboxed and
re-checked, sequential), and `course grade --jobs N` (the same steps, N submissions' sandboxed work at once).
The script prints the wall times, the ratios, where `course grade`'s time went, and whether all three
gradebooks hold the same scores.
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


# Appended to a copy's nbgrader_config.py: nbgrader's own autograde steps (its Execute, no re-check).
UNSANDBOXED = ("from nbgrader.converters import Autograde\n"
               "c.Autograde.autograde_preprocessors = Autograde.class_traits()['autograde_preprocessors'].default()\n")


def prepare(course_root: Path, students: int, extra_config: str = "") -> None:
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
    with open(course_root / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write(extra_config)


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
        old_root, stock_root, course_root = Path(tmp) / "unsandboxed", Path(tmp) / "stock", Path(tmp) / "course"
        prepare(old_root, args.students, UNSANDBOXED)
        for root in (stock_root, course_root):
            prepare(root, args.students)
        old, _ = timed([sys.executable, "-m", "nbgrader", "autograde", "lesson05", "--force"], old_root)
        stock, _ = timed([sys.executable, "-m", "nbgrader", "autograde", "lesson05", "--force"], stock_root)
        ours, printed = timed([sys.executable, "-m", "course", "grade", "lesson05", "--autograder", str(course_root),
                               "--jobs", str(args.jobs)], ROOT)
        report = json.loads((course_root / "reports" / "lesson05-grade.json").read_text("utf-8"))
        same = scores(old_root) == scores(stock_root) == scores(course_root)
        flagged = sum(1 for s in report.values() if s["flagged"])
    n = args.students
    print(f"machine: {os.cpu_count()} cores; {n} submissions; course grade --jobs {args.jobs}")
    print(f"stock nbgrader autograde, nbgrader's Execute (unsandboxed): {old:6.1f} s  ({old / n:.2f} s/submission)")
    print(f"stock nbgrader autograde, course config (sandboxed):       {stock:6.1f} s  ({stock / n:.2f} s/submission)")
    print(f"course grade --jobs {args.jobs} (sandboxed, parallel, re-checked):  {ours:6.1f} s  ({ours / n:.2f} s/submission)")
    print(f"ratio unsandboxed stock / course grade: {old / ours:.2f}x; sandboxed stock / course grade: {stock / ours:.2f}x")
    print(f"same scores in all three gradebooks: {same}; flagged by course grade: {flagged}")
    print("where course grade's time went: " + next(ln for ln in printed.splitlines() if ln.startswith("graded ")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
