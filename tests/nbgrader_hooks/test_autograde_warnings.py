"""Stock nbgrader commands with the course's config warn only where something is wrong (issue 34, finding 7).

nbgrader's OverwriteCells warns "Attribute 'checksum' for cell … has changed!" when a student edited a read-only
cell; it said so for every untouched test cell too (the release lacks the hidden tests its checksum covers), four
times per student, burying the real case. generate_feedback warned that two of the course's steps do not know
display_data_priority.
"""

from __future__ import annotations

import shutil

import pytest

from tests.assignment.make_submissions import OUT
from tests.classes import course_with_class
from tests.conftest import ROOT

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]


@pytest.fixture(scope="module")
def stock_run(released, tmp_path_factory):
    """(course root, what stock `nbgrader autograde` printed) for an untouched submission and an edited test cell."""
    from course.workflows.grade import run_nbgrader

    project = tmp_path_factory.mktemp("warnings")
    root = course_with_class(released, project, {s: OUT / f"{s}.ipynb" for s in ("reference", "edited-test-cell")})
    for name in ("pyproject.toml", "package.json"):  # laid out like the repository: feedback inlines its MathJax
        shutil.copy(ROOT / name, project)
    (project / "node_modules").symlink_to(ROOT / "node_modules")
    proc = run_nbgrader(root, "autograde", "lesson05")
    return root, proc.stdout + proc.stderr


def test_untouched_submissions_draw_no_checksum_warning(stock_run):
    _, log = stock_run
    checksums = [line for line in log.splitlines() if "Attribute 'checksum'" in line]
    assert len(checksums) == 1 and "cell test-fp32-accum" in checksums[0]  # the edited one alone


def test_an_edited_locked_cell_still_warns_naming_the_student_and_the_cell(stock_run):
    _, log = stock_run
    warnings = [line for line in log.splitlines() if "WARNING" in line]
    assert len(warnings) == 2, warnings  # nbgrader's, naming the cell, and the course's, naming student and cell
    assert "Attribute 'checksum' for cell test-fp32-accum has changed!" in warnings[0]
    assert (
        "edited-test-cell: submitted/edited-test-cell/lesson05/lesson05.ipynb, cell test-fp32-accum: read-only "
        "cell was edited" in warnings[1]
    )


def test_generate_feedback_warns_about_nothing(stock_run):
    from course.workflows.grade import run_nbgrader

    root, _ = stock_run
    proc = run_nbgrader(root, "generate_feedback", "lesson05")
    log = proc.stdout + proc.stderr
    assert "display_data_priority" not in log and "WARNING" not in log and "ERROR" not in log, log
