"""Grading throughput: `nbgrader autograde` (unsandboxed and with the course config) vs `course grade`, one run.

    .venv/bin/python benchmarks/grade_throughput.py [--students 40] [--jobs N] [--rounds 3] [--sizes 160 640]

All of them grade the same class (copies of the released demo assignment, each student one of the committed
well-behaved samples) on this machine, one after the other: stock `nbgrader autograde` with nbgrader's own
Execute (unsandboxed, the old way), as shipped and then with the course's per-process savings
(course.nbgrader_hooks.speedups), stock `nbgrader autograde` with the course's nbgrader config (sandboxed and
re-checked, one student after another, with the savings), and `course grade --jobs N` (the same autograde, N
students at once on worker processes, the gradebook written by one short transaction each). The script prints per path
the wall time, the CPU seconds of the whole process tree (the sandboxes included) and its peak memory (largest process),
the ratios, `course grade` at --jobs 1 too, the CPU per submission, the sequential part (all the CPU of the one
grading process), whether all gradebooks hold the same scores, and the load average it ran under; --sizes
(default 160 640) grades larger classes with `course grade` (cost per submission, peak memory, sequential part).
The sandboxed paths (stock, `course grade` at --jobs 1 and --jobs N, and a class of one with stock and with
`course grade`, which splits each wall into a fixed part and a part per further submission) run in --rounds
interleaved rounds on fresh classes, and the script prints medians: this machine's speed drifts by 10-30 %
within minutes, which single runs one after the other turn into ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = [
    "reference",
    "forgot-extra",
    "zero2-shards-params",
    "swapped-comm-volumes",
    "comm-blanks-left",
    "floor-division",
    "release",
]


# Appended to a copy's nbgrader_config.py: nbgrader's own autograde steps (its Execute, no re-check), and
# nbgrader as shipped (without the course's per-process savings, course.nbgrader_hooks.speedups) unless SAVINGS.
UNSANDBOXED = (
    "from nbgrader.converters import Autograde\n"
    "c.Autograde.autograde_preprocessors = Autograde.class_traits()['autograde_preprocessors'].default()\n"
)
AS_SHIPPED = "c.AutogradeSavings.enabled = False\n"


def prepare(course_root: Path, students: int, extra_config: str = "") -> None:
    """A course root with the released assignment and STUDENTS submissions, no grades yet."""
    shutil.copytree(
        ROOT / "autograder",
        course_root,
        ignore=shutil.ignore_patterns(
            "submitted", "autograded", "feedback", "reports", ".course-grade", "gradebook.db"
        ),
    )
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_assignment", "lesson05", "--force"],
        cwd=course_root,
        check=True,
        capture_output=True,
        env=env,
    )
    for n in range(students):
        sample = SAMPLES[n % len(SAMPLES)]
        target = course_root / "submitted" / f"student-{n:02d}" / "lesson05"
        target.mkdir(parents=True)
        shutil.copyfile(ROOT / "tests" / "assignment" / "submissions" / f"{sample}.ipynb", target / "lesson05.ipynb")
    with open(course_root / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write(extra_config)


class Timed(NamedTuple):
    """One command's wall seconds, CPU seconds of its whole process tree, largest RSS in MiB, and its output."""

    wall: float
    cpu: float
    peak_mib: float
    stdout: str


def timed(argv: list[str], cwd: Path) -> Timed:
    """Run one command; measure it with wait4, which counts every descendant the command waited for."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, argv)
        out.seek(0)
        return Timed(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.read().decode())


def scores(course_root: Path) -> dict:
    """Every student's score per grade cell, as nbgrader stored it."""
    from course.grading.gradebook import configured_gradebook, gradebook

    with gradebook(configured_gradebook(course_root).url) as gb:
        return {
            (g.student.id, g.name): g.score
            for s in gb.assignment_submissions("lesson05")
            for nb in s.notebooks
            for g in nb.grades
        }


def course_grade(course_root: Path, jobs: int) -> Timed:
    """`course grade` on COURSE_ROOT with JOBS workers."""
    return timed(
        [sys.executable, "-m", "course", "grade", "lesson05", "--autograder", str(course_root), "--jobs", str(jobs)],
        ROOT,
    )


def breakdown(printed: str) -> dict[str, float]:
    """The numbers of course grade's closing "time spent" line: autograde on the workers, gradebook writes, and the
    grading process's own CPU (everything it does is sequential)."""
    import re

    line = next(ln for ln in printed.splitlines() if "time spent:" in ln)
    numbers = dict(re.findall(r"(autograde|gradebook writes|the sequential part\)) ([0-9.]+) s", line))
    return {k: float(v) for k, v in numbers.items()}


def row(name: str, t: Timed, n: int) -> str:
    """One path's line: wall, CPU and peak memory, per submission."""
    return (
        f"{name:<58} {t.wall:7.1f} s wall ({t.wall / n:.2f} s/sub)  CPU {t.cpu:7.1f} s ({t.cpu / n:.2f} s/sub)"
        f"  peak {t.peak_mib:5.0f} MiB"
    )


class Round(NamedTuple):
    """One round of the sandboxed paths, run back to back: stock, course grade at --jobs 1 and --jobs N, and the
    class of one with stock and with course grade."""

    stock: Timed
    jobs1: Timed
    ours: Timed
    stock_one: Timed
    ours_one: Timed


def one_round(tmp: Path, n: int, jobs: int, number: int) -> tuple[Round, dict[str, Path]]:
    """Fresh classes for this round, graded by each sandboxed path one after the other."""
    roots = {name: tmp / f"round{number}-{name}" for name in ("stock", "jobs1", "course", "stock_one", "ours_one")}
    for name, root in roots.items():
        prepare(root, 1 if name.endswith("_one") else n)
    autograde = [sys.executable, "-m", "nbgrader", "autograde", "lesson05", "--force"]
    return Round(
        timed(autograde, roots["stock"]),
        course_grade(roots["jobs1"], 1),
        course_grade(roots["course"], jobs),
        timed(autograde, roots["stock_one"]),
        course_grade(roots["ours_one"], jobs),
    ), roots


def median_of(rounds: list[Round], path: str) -> Timed:
    """PATH's run with the median wall over the rounds."""
    return sorted((getattr(r, path) for r in rounds), key=lambda t: t.wall)[len(rounds) // 2]


def fixed_and_per_submission(rounds: list[Round], n: int, jobs: int) -> str:
    """Each wall as a fixed part plus a part per further submission (from the class of one and the class of N),
    and the lead `course grade` could have with those fixed parts if its workers used the JOBS cores fully."""

    def split(whole: str, one: str) -> tuple[float, float]:
        per = statistics.median((getattr(r, whole).wall - getattr(r, one).wall) / (n - 1) for r in rounds)
        return statistics.median(getattr(r, one).wall for r in rounds) - per, per

    (fixed_stock, per_stock), (fixed_ours, per_ours) = split("stock", "stock_one"), split("ours", "ours_one")
    best = (fixed_stock + n * per_stock) / (fixed_ours + n * per_stock / jobs)
    return (
        f"fixed part (start-up and the like, from a class of one) / per further submission, wall, medians: "
        f"sandboxed stock {fixed_stock:.1f} s / {per_stock:.3f} s, course grade --jobs {jobs} {fixed_ours:.1f} s / "
        f"{per_ours:.3f} s; with these fixed parts and the stock run's cost per submission split over {jobs} "
        f"cores, course grade could lead the sandboxed stock run by about {best:.2f}x at {n} submissions"
    )


def main() -> int:
    """Run every grader on the same class and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of the sandboxed paths, interleaved (medians are printed)"
    )
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="*",
        default=[160, 640],
        help="also grade classes of these sizes with course grade (cost per submission, memory)",
    )
    args = parser.parse_args()
    n = args.students
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="grade-bench-") as tmp:
        roots = {name: Path(tmp) / name for name in ("unsandboxed", "saving")}
        prepare(roots["unsandboxed"], n, UNSANDBOXED + AS_SHIPPED)
        prepare(roots["saving"], n, UNSANDBOXED)
        old = timed([sys.executable, "-m", "nbgrader", "autograde", "lesson05", "--force"], roots["unsandboxed"])
        saving = timed([sys.executable, "-m", "nbgrader", "autograde", "lesson05", "--force"], roots["saving"])
        rounds = []
        for number in range(args.rounds):
            done, round_roots = one_round(Path(tmp), n, args.jobs, number)
            rounds.append(done)
            roots.update({f"{name}-{number}": round_roots[name] for name in ("stock", "jobs1", "course")})
        report = json.loads((roots["course-0"] / "reports" / "lesson05-grade.json").read_text("utf-8"))
        same = len({json.dumps(sorted(scores(r).items())) for r in roots.values()}) == 1
        flagged = sum(1 for s in report.values() if s["flagged"])
        sizes = []
        for size in args.sizes:
            root = Path(tmp) / f"size-{size}"
            prepare(root, size)
            sizes.append((size, course_grade(root, args.jobs)))
            shutil.rmtree(root)
    load_after = os.getloadavg()
    stock, one, ours = (median_of(rounds, path) for path in ("stock", "jobs1", "ours"))
    split = breakdown(ours.stdout)
    sequential = split["the sequential part)"]
    print(
        f"machine: {os.cpu_count()} cores; {n} submissions; {args.rounds} rounds of the sandboxed paths (medians; "
        f"walls of each round in brackets); load average (1/5/15 min) before "
        f"{'/'.join(f'{x:.1f}' for x in load_before)}, after {'/'.join(f'{x:.1f}' for x in load_after)}"
    )
    print(row("stock nbgrader autograde, nbgrader's Execute, as shipped", old, n))
    print(row("  the same with the course's per-process savings", saving, n))
    for name, path, t in (
        ("stock nbgrader autograde, course config (sandboxed)", "stock", stock),
        ("course grade --jobs 1", "jobs1", one),
        (f"course grade --jobs {args.jobs} (sandboxed, parallel, re-checked)", "ours", ours),
    ):
        print(row(name, t, n) + f"  [{' '.join(f'{getattr(r, path).wall:.1f}' for r in rounds)}]")
    ratios = [r.stock.wall / r.ours.wall for r in rounds]
    print(
        f"ratio unsandboxed stock / course grade: {old.wall / ours.wall:.2f}x (with the savings: "
        f"{saving.wall / ours.wall:.2f}x); sandboxed stock / course grade: {statistics.median(ratios):.2f}x "
        f"(each round: {' '.join(f'{x:.2f}x' for x in ratios)}); course grade --jobs 1 / --jobs {args.jobs}: "
        f"{statistics.median(r.jobs1.wall / r.ours.wall for r in rounds):.2f}x"
    )
    print(
        f"CPU per submission, course grade --jobs {args.jobs}: {ours.cpu / n:.2f} s (every process, sandboxes "
        f"included; --jobs 1: {one.cpu / n:.2f} s; sandboxed stock: {stock.cpu / n:.2f} s)"
    )
    print(
        f"sequential part of course grade (all the grading process's own CPU: start-up, preflight, gradebook "
        f"transactions, state files): {sequential:.1f} s ({sequential / n:.3f} s/submission, "
        f"{sequential / ours.wall:.0%} of its wall); autograde on the workers {split['autograde']:.1f} s, "
        f"gradebook transactions {split['gradebook writes']:.2f} s"
    )
    print(fixed_and_per_submission(rounds, n, args.jobs))
    print(f"same scores in all {len(roots)} gradebooks: {same}; flagged by course grade: {flagged}")
    for size, t in [(n, ours), *sizes]:
        print(
            f"course grade --jobs {args.jobs}, {size:4d} submissions: {t.wall / size:.3f} s/sub wall, "
            f"{t.cpu / size:.3f} s/sub CPU, peak {t.peak_mib:.0f} MiB, sequential "
            f"{breakdown(t.stdout)['the sequential part)'] / size:.3f} s/sub"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
