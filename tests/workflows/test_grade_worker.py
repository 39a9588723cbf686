"""A `course grade` worker: nbgrader's whole autograde of one student, reading the gradebook and never writing it."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course.grading.gradebook import configured_gradebook, gradebook, gradebook_engine
from course.grading.gradebook_changes import apply_changes, assignment_rows, make_template, schema_version
from course.nbgrader_hooks.outcome import grade_report_path, record_path
from course.workflows.grade_worker import Worker, WorkerSetup, course_config
from tests.classes import course_with_class

SAMPLES = Path(__file__).parents[1] / "assignment" / "submissions"
CODE = ["test-formulas", "test-fp32-accum", "test-comm-volume", "test-dp1-cross-check"]


def worker_for(root: Path, tmp_path: Path) -> tuple[Worker, str]:
    """A worker for lesson05 in ROOT, as `course grade` sets one up, and the gradebook's URL."""
    url = configured_gradebook(root, course_config(root, {})).url
    with gradebook_engine(url).connect() as conn:
        rows, version = assignment_rows(conn, "lesson05"), schema_version(conn)
    template = make_template(tmp_path / "template.db", rows, version)
    return Worker(WorkerSetup(str(root), "lesson05", (), url, str(template), tuple(rows["assignment"]))), url


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_worker_reads_the_gradebook_and_hands_back_what_autograde_wrote(released, tmp_path):
    root = course_with_class(released, tmp_path, {"reference": SAMPLES / "reference.ipynb"})
    worker, url = worker_for(root, tmp_path)
    database = root / "gradebook.db"
    before = hashlib.sha256(database.read_bytes()).hexdigest()

    graded = worker.grade("reference")

    assert graded.success, graded.reason
    assert hashlib.sha256(database.read_bytes()).hexdigest() == before  # only the private copy was written
    assert (root / "autograded" / "reference" / "lesson05" / "lesson05.ipynb").is_file()
    assert record_path(root, "lesson05", "reference").is_file()  # the outcome the grading process reads back
    assert not grade_report_path(root, "lesson05").exists()  # merged by the grading process, not here
    assert {"student", "submitted_assignment", "grade", "comment"} <= set(graded.changes.upserts)
    with gradebook_engine(url).begin() as conn:
        apply_changes(conn, graded.changes)
    with gradebook(url) as gb:
        assert [gb.find_grade(item, "lesson05", "lesson05", "reference").auto_score for item in CODE] == [1, 1, 1, 1]


def test_a_worker_dies_with_the_grading_process(tmp_path):
    ready = tmp_path / "ready"
    child = (
        "from course.workflows.grade_worker import die_with_parent\n"
        f"die_with_parent(); open({str(ready)!r}, 'w').close()\nimport time; time.sleep(120)\n"
    )
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            f"p = subprocess.Popen([sys.executable, '-c', {child!r}]); print(p.pid, flush=True)\n"
            "time.sleep(120)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    pid = int(parent.stdout.readline())
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    parent.kill()
    parent.wait()
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def alive(pid: int) -> bool:
    """Whether PID is a live process (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X") and os.path.exists(f"/proc/{pid}")
