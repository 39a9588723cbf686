"""Every notebook the sites offer runs in a plain Python 3 kernel whose environment lacks the `course` package.

A student opens the downloaded notebook in their own Jupyter or Colab, where this repository is not installed.
The kernel here is this project's Python started with -S (no site-packages .pth files, so the editable install of
`course` is invisible) and only site-packages on its path: it has Jupyter and the common packages, not `course`.
"""

from __future__ import annotations

import json
import sys
import sysconfig
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow

KERNEL = "python3-without-course"


@pytest.fixture(scope="module")
def plain_kernel(tmp_path_factory):
    """A kernelspec, found through JUPYTER_PATH, for a kernel that cannot import `course`."""
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    paths = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-S", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (no course package)", "language": "python",
        "env": {"PYTHONPATH": ":".join(paths), "MPLBACKEND": "agg"},
    }), "utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(root))
        yield KERNEL


def run_plain(nb, workdir: Path) -> nbformat.NotebookNode:
    """Execute NB in the plain kernel, after a first cell proving that `course` cannot be imported there."""
    probe = nbformat.v4.new_code_cell("import importlib.util\nassert importlib.util.find_spec('course') is None")
    nb = nbformat.from_dict({**nb, "cells": [probe, *nb.cells]})
    NotebookClient(nb, kernel_name=KERNEL, timeout=120, resources={"metadata": {"path": str(workdir)}}).execute()
    return nb


def solved(nb, project_root: Path, *, answer_cell) -> nbformat.NotebookNode:
    """NB with the exercise cell replaced by the reference solution, as a student who solved it hands it in."""
    solution = (project_root / "solutions" / "lesson05.py").read_text("utf-8")
    cells = [nbformat.from_dict({**c, "source": solution}) if answer_cell(c) else c for c in nb.cells]
    assert sum(1 for c in nb.cells if answer_cell(c)) == 1
    return nbformat.from_dict({**nb, "cells": cells})


def test_the_probe_fails_where_course_is_installed(built_site, tmp_path):
    """The probe cell really detects `course`: in this project's own kernel it raises."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import importlib.util\nassert importlib.util.find_spec('course') is None")])
    with pytest.raises(Exception, match="AssertionError"):
        NotebookClient(nb, kernel_name="python3", timeout=60, resources={"metadata": {"path": str(tmp_path)}}).execute()


def test_no_offered_notebook_imports_course(built_site):
    notebooks = sorted(built_site.glob("*/*.ipynb"))
    assert {p.name for p in notebooks} >= {"lesson05.ipynb", "lesson05-assignment.ipynb"}
    for path in notebooks:
        code = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
        assert not [s for s in code if "from course" in s or "import course" in s], path


def test_answer_notebook_runs_without_course(built_site, plain_kernel, tmp_path):
    nb = run_plain(nbformat.read(built_site / "answer" / "lesson05.ipynb", as_version=4), tmp_path)
    out = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "38.5     26.2     14.0" in out and "dp=1 时三档相等 ✓" in out


def test_student_lesson_notebook_runs_without_course_once_solved(built_site, plain_kernel, project_root, tmp_path):
    nb = nbformat.read(built_site / "student" / "lesson05.ipynb", as_version=4)
    nb = run_plain(solved(nb, project_root, answer_cell=lambda c: c.cell_type == "code" and "______" in c.source), tmp_path)
    assert "dp=1 时三档相等 ✓" in "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def test_assignment_runs_without_course_and_its_checks_pass_once_solved(built_site, plain_kernel, project_root, tmp_path):
    nb = nbformat.read(built_site / "student" / "lesson05-assignment.ipynb", as_version=4)
    graded = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"]
    assert len(graded) == 4  # one locked test cell per rubric code item
    answer = lambda c: c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"  # noqa: E731
    run_plain(solved(nb, project_root, answer_cell=answer), tmp_path)  # a failing check raises here


def test_assignment_checks_fail_in_the_plain_kernel_while_blanks_are_empty(built_site, plain_kernel, tmp_path):
    nb = nbformat.read(built_site / "student" / "lesson05-assignment.ipynb", as_version=4)
    with pytest.raises(Exception, match="NameError|AssertionError"):
        run_plain(nb, tmp_path)


def test_notebooks_carry_their_images_and_the_figure_caption(built_site):
    for path in sorted(built_site.glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        attached = {name for c in nb.cells for name in c.get("attachments", {})}
        assert "](assets/" not in markdown and '{width="' not in markdown, path
        assert {"train_zero_memory.png", "zero3_comm_flow.svg"} <= attached, path
        if path.name == "lesson05.ipynb":
            assert "图 5-5：实测与教材公式" in markdown and 'alt="<' not in markdown, path


def test_the_published_assignment_is_graded_like_the_release(built_site, released, project_root, tmp_path):
    """What a student downloads from the site, solved and handed in as lesson05.ipynb, gets full code marks."""
    import shutil

    from course.workflows.grade import grade_assignment
    from tests.conftest import submit

    root = tmp_path / "autograder"
    shutil.copytree(released, root)
    nb = nbformat.read(built_site / "student" / "lesson05-assignment.ipynb", as_version=4)
    answer = lambda c: c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"  # noqa: E731
    handed_in = tmp_path / "lesson05.ipynb"
    nbformat.write(solved(nb, project_root, answer_cell=answer), handed_in)
    submit(root, "student-from-site", handed_in)
    run = grade_assignment(root, "lesson05")
    outcome = run.students[0]
    assert outcome.student == "student-from-site" and not outcome.flagged
    assert outcome.verdicts and all(v.passed for v in outcome.verdicts.values())
