"""render_page: pandoc with the course's reader, filter and template."""

from __future__ import annotations

import re

from course.site.plan import make_plan
from course.site.render_page import render_page


def test_an_image_alone_in_its_paragraph_is_a_figure_with_its_alt_text_as_caption(project_root):
    """`![图 6-1：…](…)`, as `course new` writes figures, shows its caption (as Quarto does); inline images do not."""
    page = render_page(
        '![图 6-1：张量并行的列切分](x.png){width="80%"}\n\n行内的 ![图标](y.png) 不是图。\n\n![](z.png)\n',
        plan=make_plan(project_root),
        variant="student",
        title="t",
        lesson_dir=project_root / "lessons",
    )
    assert re.search(
        r'<figure>\s*<img src="x.png"[^>]*alt="图 6-1：张量并行的列切分"[^>]*>\s*'
        r"<figcaption[^>]*>图 6-1：张量并行的列切分</figcaption>\s*</figure>",
        page,
    )
    assert page.count("<figcaption") == 1


def test_only_a_page_with_a_diagram_loads_mermaid(project_root, tmp_path):
    """mermaid's 2.7 MB (and its options) are loaded where a diagram is drawn, and nowhere else."""
    pages = [
        render_page(text, plan=make_plan(project_root), variant="student", title="t", lesson_dir=tmp_path)
        for text in ("```mermaid\nflowchart LR\n  A --> B\n```\n", "```python\nprint(1)\n```\n")
    ]
    scripts = [re.findall(r'<script defer src="site_libs/(mermaid[^"]*)"', page) for page in pages]
    assert '<pre class="mermaid"' in pages[0] and scripts[0] == ["mermaid/mermaid.min.js", "mermaid-options.js"]
    assert scripts[1] == [] and "course.js" in pages[1]


def lesson_refs(page: str) -> dict[str, str]:
    """Each 第 N 课 link of PAGE: its text → its target."""
    return dict((text, href) for href, text in re.findall(r'<a href="([^"]+)" class="lesson-ref">([^<]+)</a>', page))


def test_a_mention_of_another_lesson_links_to_it_only_when_it_exists_and_never_to_itself(project_root, tmp_path):
    for stem in ("lesson04", "lesson05", "lesson06"):
        (tmp_path / f"{stem}.qmd").write_text("", "utf-8")
    text = (
        "前置：第 4 课（DP），并与第 6 课的张量并行、第8课与第6课对照；本课即第 5 课，第 9 课尚未发布。\n\n"
        "[已有链接的第 4 课](lesson04.qmd) 与 `第 4 课` 不变。\n"
    )
    page = render_page(text, plan=make_plan(project_root), variant="student", title="t", lesson_dir=tmp_path, number=5)
    assert lesson_refs(page) == {"第 4 课": "lesson04.html", "第 6 课": "lesson06.html", "第6课": "lesson06.html"}
    assert page.count('class="lesson-ref"') == 3  # 第 4 课 inside the author's link and in code are left alone
    assert "第8课与" in page and "第 5 课" in page and "第 9 课尚未发布" in page  # no page, or this page: plain text
    assert '<a href="lesson04.html">已有链接的第 4 课</a>' in page and "<code>第 4 课</code>" in page
    nowhere = render_page(
        text, plan=make_plan(project_root), variant="student", title="t", lesson_dir=tmp_path / "empty", number=5
    )
    assert lesson_refs(nowhere) == {}
