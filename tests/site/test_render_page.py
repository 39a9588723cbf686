"""render_page: pandoc with the course's reader, filter and template."""

from __future__ import annotations

import re

from course.site.plan import make_plan
from course.site.render_page import render_page


def test_an_image_alone_in_its_paragraph_is_a_figure_with_its_alt_text_as_caption(project_root):
    """`![图 6-1：…](…)`, as `course new` writes figures, shows its caption (as Quarto does); inline images do not."""
    page = render_page("![图 6-1：张量并行的列切分](x.png){width=\"80%\"}\n\n行内的 ![图标](y.png) 不是图。\n\n![](z.png)\n",
                       plan=make_plan(project_root), variant="student", title="t", lesson_dir=project_root / "lessons")
    assert re.search(r'<figure>\s*<img src="x.png"[^>]*alt="图 6-1：张量并行的列切分"[^>]*>\s*'
                     r'<figcaption[^>]*>图 6-1：张量并行的列切分</figcaption>\s*</figure>', page)
    assert page.count("<figcaption") == 1
