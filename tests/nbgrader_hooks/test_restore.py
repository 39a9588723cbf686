"""RestoreGradedCells: a submission gets back stripped metadata and deleted graded cells before nbgrader grades it."""

from __future__ import annotations

import nbformat
import pytest
from traitlets.config import Config

from course.nbgrader_hooks.restore import RestoreGradedCells
from tests.nbgrader_hooks.small_notebook import released, source_notebook


@pytest.fixture
def restore(tmp_path):
    """Run the preprocessor on a submission against a source notebook in a scratch course root."""
    folder = tmp_path / "source" / "a"
    folder.mkdir(parents=True)
    nbformat.write(source_notebook(), folder / "nb.ipynb")
    config = Config()
    config.CourseDirectory.root = str(tmp_path)

    def run(nb):
        out, _ = RestoreGradedCells(config=config).preprocess(
            nb, {"nbgrader": {"assignment": "a", "notebook": "nb", "student": "s"}}
        )
        return out

    return run


def names(nb) -> list:
    """The grade id of each cell (None for plain cells)."""
    return [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]


def test_stripped_metadata_is_restored_by_cell_id(restore):
    nb = released(source_notebook())
    for c in nb.cells:
        c.metadata = nbformat.NotebookNode()
    out = restore(nb)
    assert names(out) == names(source_notebook())
    # the untouched read-only cell gets its hidden tests back, so nbgrader's OverwriteCells finds nothing changed
    assert out.cells[3].metadata.nbgrader["points"] == 1 and out.cells[3].source == source_notebook().cells[3].source


def test_without_cell_ids_read_only_cells_are_found_by_their_text(restore):
    nb = released(source_notebook())
    for c in nb.cells:
        c.metadata, c.id = nbformat.NotebookNode(), f"x{id(c)}"[:20]
    out = restore(nb)
    assert names(out)[1] == "course-checks" and names(out)[3:6] == ["test-a", "test-b", "question-Q1"]


def test_deleted_cells_come_back_after_their_predecessor_even_when_it_is_gone_too(restore):
    nb = released(source_notebook())
    del nb.cells[2:5]  # the answer and both tests
    out = restore(nb)
    assert names(out) == [None, "course-checks", "test-a", "test-b", "question-Q1", "answer-Q1"]
    assert (
        "BEGIN HIDDEN TESTS" in out.cells[2].source
    )  # from the source; OverwriteCells checks it against the gradebook


def test_a_test_cell_turned_into_an_ungraded_cell_is_graded_again(restore):
    nb = released(source_notebook())
    nb.cells[4].metadata.nbgrader.update(grade=False, points=0)
    out = restore(nb)
    assert out.cells[4].metadata.nbgrader["grade"] is True and out.cells[4].metadata.nbgrader["points"] == 1
