"""Where one `course grade` worker's CPU goes per student: its own (nbgrader's steps, the course's) vs its sandboxes.

    .venv/bin/python benchmarks/autograde_profile.py [--students 10] [--top 25]

Makes a class of copies of the committed well-behaved samples (as benchmarks/grade_throughput.py does), then
runs a worker's autograde (course.workflows.grade_worker.Worker) in this process for each student after a first
one that warms it up, under cProfile. Prints per student the wall time, the worker's own CPU and the CPU of the
processes it started (the grading sandbox and the re-check's sandbox), then the functions with the most
cumulative time. cProfile slows the worker's own Python code by about a third; the sandboxes are not profiled.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.grade_throughput import prepare  # noqa: E402 (the same class as the throughput benchmark)


def children_cpu() -> float:
    """CPU seconds of every finished child process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    """Profile a worker's autograde of a small class and print the summary."""
    from course.grading.gradebook import configured_gradebook, gradebook_engine
    from course.grading.gradebook_changes import assignment_rows, make_template, schema_version
    from course.workflows.grade_worker import Worker, WorkerSetup, course_config

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=10)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="autograde-profile-") as tmp:
        root = Path(tmp) / "course"
        prepare(root, args.students + 1)
        url = configured_gradebook(root, course_config(root, {})).url
        with gradebook_engine(url).connect() as conn:
            rows, version = assignment_rows(conn, "lesson05"), schema_version(conn)
        template = make_template(Path(tmp) / "template.db", rows, version)
        worker = Worker(WorkerSetup(str(root), "lesson05", (), url, str(template), tuple(rows["assignment"])))
        worker.grade("student-00")  # first use: imports and caches
        students = [f"student-{n:02d}" for n in range(1, args.students + 1)]
        kids, own, wall = children_cpu(), time.process_time(), time.perf_counter()
        profile = cProfile.Profile()
        profile.enable()
        for student in students:
            worker.grade(student)
        profile.disable()
        n = len(students)
        print(
            f"per student ({n} students, after one to warm up): wall {(time.perf_counter() - wall) / n:.3f} s, "
            f"the worker's own CPU {(time.process_time() - own) / n:.3f} s (profiled), its sandboxes' CPU "
            f"{(children_cpu() - kids) / n:.3f} s"
        )
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(args.top)
        print("\n".join(line for line in text.getvalue().splitlines() if line.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
