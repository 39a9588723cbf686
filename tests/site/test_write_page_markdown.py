"""write_page_markdown and make_notebook: cells become Quarto-shaped divs and notebook cells with their outputs."""

from __future__ import annotations

from pathlib import Path

from course.lesson.parse_qmd import parse_lesson
from course.site.make_notebook import make_notebook
from course.site.select_variant import select_variant
from course.site.write_page_markdown import fence, write_page_markdown

FIXTURE = Path(__file__).parent / "fixtures" / "asis-and-outputs.qmd"
OUTPUTS = {
    "solution-add": [{"output_type": "stream", "name": "stdout", "text": "5\n"}],
    "standard": [{"output_type": "stream", "name": "stdout", "text": "总分 **10** 分。\n"}],
}


def test_fence_outgrows_backticks_inside():
    assert fence("a ``` b", "{.text}").startswith("````{.text}\na ``` b\n````")


def test_cells_become_divs_with_role_and_outputs():
    md = write_page_markdown(select_variant(parse_lesson(FIXTURE), "answer"), OUTPUTS)
    assert '::: {#cell-solution-add .cell course_role="solution"}' in md
    assert "::: {.cell-output .cell-output-stdout}" in md and "\n5\n" in md
    assert '::: {#cell-ex-add .cell course_role="exercise" .cell-not-run}' in md


def test_asis_output_joins_the_page_as_markdown():
    md = write_page_markdown(select_variant(parse_lesson(FIXTURE), "student"), OUTPUTS)
    assert "\n总分 **10** 分。\n" in md and "print(" not in md.split("## 标准")[1]


def test_notebook_has_code_cells_with_outputs_and_asis_as_markdown():
    nb = make_notebook(select_variant(parse_lesson(FIXTURE), "answer"), OUTPUTS)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.metadata["course"]["label"] for c in code] == ["solution-add"]
    assert code[0].outputs[0]["text"] == "5\n"
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "总分 **10** 分。" in markdown
    assert "```python\ndef add(a, b):\n    return ______\n```" in markdown  # solved exercise: read, not run


def test_student_notebook_keeps_the_exercise_as_code():
    nb = make_notebook(select_variant(parse_lesson(FIXTURE), "student"), OUTPUTS)
    assert [c.metadata["course"]["label"] for c in nb.cells if c.cell_type == "code"] == ["ex-add"]


def test_frozen_hidden_cells_show_outputs_captions_and_alt_text(tmp_path):
    lesson = tmp_path / "lesson01.qmd"
    lesson.write_text(
        '---\ntitle: "图"\nlesson: 1\n---\n\n```{python}\n#| label: fig\n#| echo: false\n'
        '#| fig-cap: "图 1-1：说明"\n#| fig-alt: "柱状图 <说明>"\nfrom helpers import draw\ndraw()\n```\n',
        "utf-8",
    )
    png = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure size 640x480 with 1 Axes>"},
    }
    nb = make_notebook(select_variant(parse_lesson(lesson), "student"), {"fig": [png]}, freeze_hidden_code=True)
    assert [c.cell_type for c in nb.cells] == ["markdown"]
    assert 'alt="柱状图 &lt;说明&gt;"' in nb.cells[0].source and nb.cells[0].source.endswith("*图 1-1：说明*")
    assert "helpers" not in nb.cells[0].source


def test_links_to_unpublished_lessons_become_text_in_notebooks():
    nb = make_notebook(select_variant(parse_lesson(FIXTURE), "student"), OUTPUTS)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "第 9 课" in text and "lesson09" not in text


def test_the_site_lesson_notebook_says_run_all_stops_at_the_blanks_and_why():
    view = select_variant(parse_lesson(FIXTURE), "student")
    cells = make_notebook(view, OUTPUTS, note_blanks=True).cells
    [at] = [i for i, c in enumerate(cells) if c.cell_type == "code" and c.metadata["course"]["label"] == "ex-add"]
    note = cells[at + 1].source
    assert cells[at + 1].cell_type == "markdown" and "NameError" in note and "Restart Kernel and Run All Cells" in note
    assert "NameError" not in "\n".join(c.source for c in make_notebook(view, OUTPUTS).cells)  # nbgrader's source
