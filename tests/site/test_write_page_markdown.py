"""write_page_markdown and make_notebook: cells become Quarto-shaped divs and notebook cells with their outputs."""

from __future__ import annotations

from pathlib import Path

from course.site.make_notebook import make_notebook
from course.site.select_variant import select_variant
from course.site.write_page_markdown import fence, write_page_markdown
from course.lesson.parse_qmd import parse_lesson

FIXTURE = Path(__file__).parent / "fixtures" / "asis-and-outputs.qmd"
OUTPUTS = {
    "sol-add": [{"output_type": "stream", "name": "stdout", "text": "5\n"}],
    "standard": [{"output_type": "stream", "name": "stdout", "text": "总分 **10** 分。\n"}],
}


def test_fence_outgrows_backticks_inside():
    assert fence("a ``` b", "{.text}").startswith("````{.text}\na ``` b\n````")


def test_cells_become_divs_with_role_and_outputs():
    md = write_page_markdown(select_variant(parse_lesson(FIXTURE), "answer"), OUTPUTS)
    assert '::: {#cell-sol-add .cell course_role="solution"}' in md
    assert "::: {.cell-output .cell-output-stdout}" in md and "\n5\n" in md
    assert "::: {#cell-ex-add .cell course_role=\"exercise\" .cell-not-run}" in md


def test_asis_output_joins_the_page_as_markdown():
    md = write_page_markdown(select_variant(parse_lesson(FIXTURE), "student"), OUTPUTS)
    assert "\n总分 **10** 分。\n" in md and "print(" not in md.split("## 标准")[1]


def test_notebook_has_code_cells_with_outputs_and_asis_as_markdown():
    nb = make_notebook(select_variant(parse_lesson(FIXTURE), "answer"), OUTPUTS)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.metadata["course"]["label"] for c in code] == ["ex-add", "sol-add"]
    assert code[1].outputs[0]["text"] == "5\n" and code[0].outputs == []
    assert any("总分 **10** 分。" in c.source for c in nb.cells if c.cell_type == "markdown")


def test_links_to_unpublished_lessons_become_text_in_notebooks():
    nb = make_notebook(select_variant(parse_lesson(FIXTURE), "student"), OUTPUTS)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "第 9 课" in text and "lesson09" not in text
