"""preflight: each broken submission gets a message naming the file, the place and what happens to its score."""

from __future__ import annotations

import nbformat
import pytest

from course.assignment.preflight import preflight
from tests.nbgrader_hooks.small_notebook import released, source_notebook

SOURCE = source_notebook().cells


def write(folder, nb=None, name="lesson05.ipynb", text=None):
    """Save a submission into FOLDER."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text if text is not None else nbformat.writes(nb), "utf-8")
    return folder


def check(folder):
    """preflight with the message prefix `course grade` uses."""
    return preflight(folder, "lesson05.ipynb", SOURCE, shown_as="submitted/s/lesson05")


def test_a_clean_submission_has_no_problems(tmp_path):
    result = check(write(tmp_path, released(source_notebook())))
    assert result.notebook == tmp_path / "lesson05.ipynb" and result.problems == ()


@pytest.mark.parametrize(
    "setup,message",
    [
        (
            lambda f: write(f, released(source_notebook()), name="Lesson05-final.ipynb"),
            "submitted/s/lesson05/lesson05.ipynb: expected lesson05.ipynb, found Lesson05-final.ipynb; rename it",
        ),
        (lambda f: f.mkdir(), "submitted/s/lesson05/lesson05.ipynb: no lesson05.ipynb submitted; scored 0"),
        (
            lambda f: write(f, text='{\n "cells": [\n  {"cell_type": "code",\n'),
            "submitted/s/lesson05/lesson05.ipynb, line 4: not valid JSON",
        ),
        (lambda f: write(f, text='{"cells": 3}'), "not a valid Jupyter notebook"),
    ],
)
def test_unreadable_submissions_are_not_graded_and_say_why(tmp_path, setup, message):
    setup(tmp_path / "s")
    result = check(tmp_path / "s")
    assert result.notebook is None and message in str(result.problems[0])


def test_edited_deleted_and_stripped_cells_are_named(tmp_path):
    nb = released(source_notebook())
    nb.cells[3].source = "pass"
    del nb.cells[4]
    nb.cells[1].metadata = nbformat.NotebookNode()
    messages = [str(p) for p in check(write(tmp_path, nb)).problems]
    assert messages == [
        "submitted/s/lesson05/lesson05.ipynb, cell course-checks: nbgrader metadata was missing; recognised the cell "
        "and restored it, graded normally",
        "submitted/s/lesson05/lesson05.ipynb, cell test-a: read-only cell was edited; graded with the original",
        "submitted/s/lesson05/lesson05.ipynb, cell test-b: cell was deleted; re-inserted from the source and graded",
    ]


def texts(nb) -> dict[str, str]:
    """A release's read-only cells as course.assignment.versions.released_texts gives them."""
    return {
        c.metadata["nbgrader"]["grade_id"]: c.source.strip()
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("locked")
    }


def test_a_student_is_compared_with_the_release_they_received(tmp_path):
    old = released(source_notebook())
    old.cells[4].source = "check(f(2))\ncheck(f(3))"  # the visible check the re-release moved to hidden
    received = [texts(old)]
    assert check(write(tmp_path / "a", old)).problems != ()  # against the current release alone: "edited"
    result = preflight(write(tmp_path / "b", old), "lesson05.ipynb", SOURCE, shown_as="s", released=received)
    assert result.problems == ()
    edited = released(old)
    edited.cells[4].source = "pass"
    messages = [
        str(p)
        for p in preflight(
            write(tmp_path / "c", edited), "lesson05.ipynb", SOURCE, shown_as="s", released=received
        ).problems
    ]
    assert messages == ["s/lesson05.ipynb, cell test-b: read-only cell was edited; graded with the original"]


def test_a_notebook_with_none_of_the_graded_cells_is_not_the_assignment(tmp_path):
    """The lesson's reading notebook of before its name changed, handed in as lesson05.ipynb (issue 34, finding 3)."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("# 第 5 课"), nbformat.v4.new_code_cell("x = 1")]
    )
    result = check(write(tmp_path, nb))
    assert result.notebook is None and "not the assignment notebook" in str(result.problems[0])
    assert "download the assignment lesson05.ipynb" in result.problems[0].fix


def test_stripped_metadata_and_cell_ids_still_make_the_assignment(tmp_path):
    nb = released(source_notebook())
    for c in nb.cells:
        c.metadata, c.id = nbformat.NotebookNode(), f"x{id(c)}"[:20]
    assert check(write(tmp_path, nb)).notebook is not None  # its read-only cells are found by their text


def test_the_reading_notebook_and_another_lessons_are_named_as_such(tmp_path):
    notes = released(source_notebook())
    notes.metadata["course"] = {"lesson": "lesson05", "variant": "student", "notebook": "notes"}
    assert "the lesson's reading notebook (lesson05-notes.ipynb)" in str(
        check(write(tmp_path / "a", notes)).problems[0]
    )
    other = released(source_notebook())
    other.metadata["course"] = {"lesson": "lesson06"}
    assert "this is lesson06's notebook, not lesson05's" in str(check(write(tmp_path / "b", other)).problems[0])
