"""ClearSolutionsWithStubs: one stub per region, verbatim; stock nbgrader behaviour for other cells."""

from __future__ import annotations

import nbformat
import pytest

from course.nbgrader_hooks.stubs import ClearSolutionsWithStubs

SOURCE = (
    "a = 1\n    ### BEGIN SOLUTION\n    b = 2\n    ### END SOLUTION\nc = 3\n### BEGIN SOLUTION\nd = 4\n### END SOLUTION"
)


def cleared(source: str, stubs=None) -> nbformat.NotebookNode:
    """Run the preprocessor on one solution cell."""
    meta = {"nbgrader": {"solution": True, "grade": False, "grade_id": "ex", "locked": False}}
    if stubs is not None:
        meta["course"] = {"stubs": stubs}
    cell = nbformat.v4.new_code_cell(source, metadata=meta)
    ClearSolutionsWithStubs().preprocess_cell(cell, {"language": "python"}, 0)
    return cell


def test_each_region_gets_its_own_stub_and_the_stub_list_leaves_the_release():
    cell = cleared(SOURCE, ["    b = ______  # 填空", "d = ______"])
    assert cell.source == "a = 1\n    b = ______  # 填空\nc = 3\nd = ______"
    assert "course" not in cell.metadata


def test_without_stubs_it_is_stock_clear_solutions():
    assert "raise NotImplementedError()" in cleared(SOURCE).source


@pytest.mark.parametrize("stubs", [["only one"], ["one", "two", "three"]])
def test_a_stub_count_that_does_not_match_the_regions_fails(stubs):
    with pytest.raises(RuntimeError, match="stubs"):
        cleared(SOURCE, stubs)
