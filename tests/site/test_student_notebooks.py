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

from course.lesson.notebook_names import assignment_notebook, notes_notebook
from course.site.select_variant import select_variant
from tests.lesson_cases import ROOT, each_graded_lesson, each_lesson, has_assignment, lesson, solutions

pytestmark = pytest.mark.slow

KERNEL = "python3-without-course"


@pytest.fixture(scope="module")
def plain_kernel(tmp_path_factory):
    """A kernelspec, found through JUPYTER_PATH, for a kernel that cannot import `course`."""
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    paths = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-S", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (no course package)",
                "language": "python",
                "env": {"PYTHONPATH": ":".join(paths), "MPLBACKEND": "agg"},
            }
        ),
        "utf-8",
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("JUPYTER_PATH", str(root))
        yield KERNEL


def run_plain(nb, workdir: Path) -> nbformat.NotebookNode:
    """Execute NB in the plain kernel, after a first cell proving that `course` cannot be imported there."""
    probe = nbformat.v4.new_code_cell("import importlib.util\nassert importlib.util.find_spec('course') is None")
    nb = nbformat.from_dict({**nb, "cells": [probe, *nb.cells]})
    NotebookClient(nb, kernel_name=KERNEL, timeout=120, resources={"metadata": {"path": str(workdir)}}).execute()
    return nb


def solved(nb, stem: str, *, label_of) -> nbformat.NotebookNode:
    """NB with each exercise cell (LABEL_OF(cell) its ex- label) replaced by its reference solution, as handed in."""
    answers = solutions(stem)
    cells = [
        nbformat.from_dict({**c, "source": answers[label_of(c)]}) if label_of(c) in answers else c for c in nb.cells
    ]
    assert sorted(label_of(c) for c in nb.cells if label_of(c) in answers) == sorted(answers)
    return nbformat.from_dict({**nb, "cells": cells})


def lesson_label(cell) -> str | None:
    """A lesson notebook's cell label (its `#| label:` option)."""
    return cell.metadata.get("course", {}).get("label")


def grade_id(cell) -> str | None:
    """A released notebook's solution cell id, which is its exercise's label."""
    nbgrader = cell.metadata.get("nbgrader", {})
    return nbgrader.get("grade_id") if nbgrader.get("solution") and cell.cell_type == "code" else None


def test_the_probe_fails_where_course_is_installed(built_site, tmp_path):
    """The probe cell really detects `course`: in this project's own kernel it raises."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import importlib.util\nassert importlib.util.find_spec('course') is None")]
    )
    with pytest.raises(Exception, match="AssertionError"):
        NotebookClient(nb, kernel_name="python3", timeout=60, resources={"metadata": {"path": str(tmp_path)}}).execute()


@each_lesson
def test_no_offered_notebook_imports_course(built_site, stem):
    notebooks = sorted(built_site.glob(f"*/{stem}*.ipynb"))
    assert {p.name for p in notebooks} >= {notes_notebook(stem)} | (
        {assignment_notebook(stem)} if has_assignment(stem) else set()
    )
    for path in notebooks:
        code = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
        assert not [s for s in code if "from course" in s or "import course" in s], path


@each_lesson
def test_answer_notebook_runs_without_course(built_site, plain_kernel, tmp_path, stem):
    nb = run_plain(nbformat.read(built_site / "answer" / notes_notebook(stem), as_version=4), tmp_path)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


def test_lesson5_answer_notebook_prints_its_tables_without_course(built_site, plain_kernel, tmp_path):
    nb = run_plain(nbformat.read(built_site / "answer" / "lesson05-notes.ipynb", as_version=4), tmp_path)
    out = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "38.5     26.2     14.0" in out and "dp=1 时三档相等 ✓" in out


@each_lesson
def test_student_lesson_notebook_runs_without_course_once_solved(built_site, plain_kernel, tmp_path, stem):
    nb = nbformat.read(built_site / "student" / notes_notebook(stem), as_version=4)
    run_plain(solved(nb, stem, label_of=lesson_label), tmp_path)  # an error in any cell raises here


@each_graded_lesson
def test_assignment_runs_without_course_and_its_checks_pass_once_solved(built_site, plain_kernel, tmp_path, stem):
    nb = nbformat.read(built_site / "student" / assignment_notebook(stem), as_version=4)
    from course.grading.rubric import load_rubric

    rubric = load_rubric(ROOT / "autograder" / "rubrics" / f"{stem}.yml")
    graded = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == "code"]
    assert len(graded) == len(rubric.code_items)  # one locked test cell per rubric code item
    run_plain(solved(nb, stem, label_of=grade_id), tmp_path)  # a failing check raises here


@each_graded_lesson
def test_assignment_checks_fail_in_the_plain_kernel_while_blanks_are_empty(built_site, plain_kernel, tmp_path, stem):
    nb = nbformat.read(built_site / "student" / assignment_notebook(stem), as_version=4)
    with pytest.raises(Exception, match="NameError|AssertionError|TypeError"):
        run_plain(nb, tmp_path)


@each_lesson
def test_notebooks_carry_every_image_of_their_lesson(built_site, stem):
    from course.site.resolve_resources import resolve_resources

    for variant in ("student", "answer"):
        _, images = resolve_resources(select_variant(lesson(stem), variant), ROOT)
        expected = {Path(i.project_path).stem for i in images}
        for path in sorted((built_site / variant).glob(f"{stem}*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
            attached = {
                name: mime for c in nb.cells for name, data in c.get("attachments", {}).items() for mime in data
            }
            assert "](assets/" not in markdown and "](../assets/" not in markdown and '{width="' not in markdown, path
            # JupyterLab and Notebook 7 show an attachment only as one of these (an SVG one is a broken image)
            assert set(attached.values()) <= {"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"}, path
            if path.name == notes_notebook(stem):
                assert expected <= {Path(name).stem for name in attached}, path


def test_lesson5_notebooks_carry_its_figures_and_the_measured_figures_caption(built_site):
    for path in sorted(built_site.glob("*/lesson05*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        attached = {name for c in nb.cells for name in c.get("attachments", {})}
        assert "train_zero_memory.png" in attached and any(n.startswith("zero3_comm_flow") for n in attached), path
        if path.name == "lesson05-notes.ipynb":
            assert (
                "图 5-5：每个 rank 的状态内存（实测）与每步每个 rank 的通信（按记录的集合通信计算）" in markdown
                and 'alt="<' not in markdown
            ), path


def test_lesson5s_published_assignment_is_graded_like_the_release(built_site, released, tmp_path):
    """What a student downloads from the site, lesson05.ipynb, solved and handed in unrenamed, gets full code marks."""
    from course.workflows.grade import grade_assignment
    from tests.classes import course_with_class

    nb = nbformat.read(built_site / "student" / "lesson05.ipynb", as_version=4)
    handed_in = tmp_path / "lesson05.ipynb"
    nbformat.write(solved(nb, "lesson05", label_of=grade_id), handed_in)
    root = course_with_class(released, tmp_path, {"student-from-site": handed_in})
    run = grade_assignment(root, "lesson05")
    outcome = run.students[0]
    assert outcome.student == "student-from-site" and not outcome.flagged
    assert outcome.verdicts and all(v.passed for v in outcome.verdicts.values())
