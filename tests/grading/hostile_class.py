"""One class of every hostile, cheating and damaged lesson05 submission graded by `course grade` with small limits,
made once per test run (tests/once_per_run.py) for the tests that read it: the one-path comparison with stock
autograde (tests/grading/test_one_path.py) and the batch's containment (tests/workflows/test_grade_batch.py)."""

from __future__ import annotations

import pickle
import time
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType

from course.assignment.preflight import MAX_NOTEBOOK_BYTES
from course.sandbox.limits import Limits
from course.workflows.grade import GradeRun
from tests.classes import course_with_class
from tests.once_per_run import once_per_run

SAMPLES = Path(__file__).parents[1] / "assignment" / "submissions"
BATCH = Path(__file__).parent / "fixtures" / "batch"
SMALL = Limits(cell_timeout_s=4, submission_timeout_s=30, memory_bytes=768 * 2**20)
# student → notebook: the correct and the untouched release, a replaced checker, every file of the batch fixtures
NOTEBOOKS = {
    "reference": SAMPLES / "reference.ipynb",
    "release": SAMPLES / "release.ipynb",
    "cheat-replaced-checker": SAMPLES / "cheat-replaced-checker.ipynb",
    **{p.stem: p for p in sorted(BATCH.glob("*.ipynb"))},
}
HUGE = "huge-output"  # and one notebook past the size limit, written here
STUDENTS = [*NOTEBOOKS, HUGE]


@dataclass(frozen=True)
class HostileClass:
    """The graded course root (never change it: copy it), the GradeRun and the batch's seconds."""

    root: Path
    run: GradeRun
    seconds: float


def hostile_class(released: Path, tmp_path_factory) -> HostileClass:
    """The class graded once per run: every student of STUDENTS, `course grade --jobs 2` with SMALL limits."""
    folder = once_per_run(tmp_path_factory, "hostile-class", lambda folder: grade_hostile(released, folder))
    with open(folder / "run.pickle", "rb") as f:
        run, seconds = pickle.load(f)
    run = replace(run, stats=replace(run.stats, reasons=MappingProxyType(run.stats.reasons)))
    return HostileClass(folder / "autograder", run, seconds)


def grade_hostile(released: Path, folder: Path) -> None:
    """FOLDER/autograder: RELEASED with the class handed in and graded; FOLDER/run.pickle: (GradeRun, seconds)."""
    from course.workflows.grade import GradeOptions, grade_assignment

    root = course_with_class(released, folder, NOTEBOOKS)
    huge = root / "submitted" / HUGE / "lesson05"
    huge.mkdir(parents=True)
    text = NOTEBOOKS["reference"].read_text("utf-8")
    text_over = "x" * (MAX_NOTEBOOK_BYTES + 2**20)  # past the limit by a megabyte: refused before it is read
    padding = '"outputs": [{"output_type": "stream", "name": "stdout", "text": "' + text_over + '"}],'
    (huge / "lesson05.ipynb").write_text(text.replace('"outputs": [],', padding, 1), "utf-8")
    start = time.monotonic()
    run = grade_assignment(root, "lesson05", GradeOptions(jobs=2, limits=SMALL))
    seconds = time.monotonic() - start
    with open(folder / "run.pickle", "wb") as f:
        pickle.dump((replace(run, stats=replace(run.stats, reasons=dict(run.stats.reasons))), seconds), f)
