"""write_notebooks: a figure a cell draws needs its author's alt text, checked where both renderers get the outputs."""

from __future__ import annotations

import pytest

from course.errors import CourseError
from course.lesson.parse_qmd import parse_lesson
from course.site.write_notebooks import check_figure_alts

LESSON = """---
title: "第 9 课：画图"
lesson: 9
jupyter: python3
---

## 图

```{python}
#| label: plot
#| fig-cap: "图 9-1：一条线"
print("drawn")
```
"""
PNG = {
    "output_type": "display_data",
    "data": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure size 640x480>"},
    "metadata": {},
}


def _lesson(tmp_path, text: str):
    path = tmp_path / "lessons" / "lesson09.qmd"
    path.parent.mkdir(parents=True)
    path.write_text(text, "utf-8")
    return parse_lesson(path)


def test_a_cell_that_draws_a_figure_without_fig_alt_is_a_located_error(tmp_path):
    lesson = _lesson(tmp_path, LESSON)
    with pytest.raises(CourseError, match=r"lesson09\.qmd, line 9, cell plot: .*fig-alt"):
        check_figure_alts(lesson, {"plot": [PNG]})


def test_with_fig_alt_or_without_a_figure_the_cell_passes(tmp_path):
    lesson = _lesson(tmp_path, LESSON.replace("#| fig-cap", '#| fig-alt: "一条上升的线"\n#| fig-cap'))
    check_figure_alts(lesson, {"plot": [PNG]})
    check_figure_alts(
        _lesson(tmp_path / "b", LESSON), {"plot": [{"output_type": "stream", "name": "stdout", "text": "drawn\n"}]}
    )
