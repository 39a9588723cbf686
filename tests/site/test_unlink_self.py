"""unlink_self: a notebook's link to its own file name, dead once the file is opened elsewhere, becomes words."""

from __future__ import annotations

import nbformat

from course.site.unlink_self import unlink_self


def test_a_link_to_the_notebook_itself_becomes_text_and_other_links_stay():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell(
                "- **作业 notebook**：[lesson05.ipynb](lesson05.ipynb)（nbgrader 作业）\n"
                "- 全课：[lesson05-notes.ipynb](lesson05-notes.ipynb)"
            ),
            nbformat.v4.new_code_cell("x = '[a](lesson05.ipynb)'"),
        ]
    )
    unlink_self(nb, "lesson05.ipynb")
    assert nb.cells[0].source == (
        "- **作业 notebook**：lesson05.ipynb（即本 notebook）（nbgrader 作业）\n"
        "- 全课：[lesson05-notes.ipynb](lesson05-notes.ipynb)"
    )
    assert nb.cells[1].source == "x = '[a](lesson05.ipynb)'"  # code is the student's, never rewritten
