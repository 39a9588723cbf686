"""The pages' formulas typeset at build time (course.site.typeset_math, MathJax in node): each formula's span holds
MathJax's SVG and its MathML, read from the TeX as pandoc escaped it into the page; the glyphs lie once per page; the
MathJax script tag is dropped; a formula MathJax cannot read is an error naming the page, its lesson and the formula,
and then no page is written; a page whose formulas were typeset before is typeset from the build cache without node,
and a formula changed, or another typesetter, runs MathJax again. (The built pages in Chromium:
tests/site/test_browser.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import course.site.typeset_math
from course.errors import CourseError
from course.site.typeset_math import SCRIPT, STYLE_ID, typeset_pages
from course.tools.web_assets import math_typesetter

SITE_FILES = Path(__file__).resolve().parents[2] / "src" / "course" / "site"
PAGE = """<!DOCTYPE html>
<html><head><title>t</title>
  <script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml-full.js" type="text/javascript"></script>
</head>
<body class="x">
<p>显存 <span class="math inline">\\(a &lt; b \\text{ 显存}\\)</span> 与
<span class="math inline">\\(a &lt; b \\text{ 显存}\\)</span>：</p>
<span class="math display">\\[M_0 = \\underbrace{2\\Psi}_{\\text{参数}} + 16\\Psi\\]</span>
</body></html>
"""


def typeset(project_root: Path, pages: list[Path], sources: dict | None = None, site_files: Path = SITE_FILES):
    kept = {page: page.parent / "kept" / f"{page.stem}.json" for page in pages}
    return typeset_pages(
        pages, site_files=site_files, mathjax=math_typesetter(project_root), sources=sources or {}, kept=kept
    )


@pytest.fixture(autouse=True)
def outside_the_project(tmp_path, monkeypatch):
    """node runs in the test's folder: it reads the pages it is given and nothing of the project's lessons."""
    monkeypatch.chdir(tmp_path)


def test_each_formula_holds_mathjaxs_svg_and_mathml_and_the_page_loads_no_mathjax(project_root, tmp_path):
    page, plain = tmp_path / "lesson.html", tmp_path / "index.html"
    page.write_text(PAGE, "utf-8")
    plain.write_text("<html><head></head><body><p>没有公式</p></body></html>", "utf-8")
    assert typeset(project_root, [page, plain]) == [page]  # a page with nothing to typeset is left alone
    text = page.read_text("utf-8")
    assert "\\(" not in text and "\\[" not in text and "mathjax@3" not in text
    inline = re.findall(r'<span class="math inline"><mjx-container class="MathJax" jax="SVG"[^>]*>', text)
    display = re.findall(r'<span class="math display"><mjx-container class="MathJax" jax="SVG" display="true"', text)
    assert len(inline) == 2 and len(display) == 1
    assert text.count("<mo>&lt;</mo>") == 2 and "显存" in text  # the TeX unescaped, the CJK text kept (MathML)
    assert text.count('<annotation encoding="application/x-tex">a &lt; b \\text{ 显存}</annotation>') == 2
    assert "<munder>" in text  # \underbrace read by MathJax's full TeX input
    glyphs = set(re.findall(r'<path id="([^"]+)"', text))
    used = set(re.findall(r'xlink:href="#([^"]+)"', text))
    assert used and used <= glyphs and text.count('id="MJX-SVG-global-cache"') == 1
    assert re.search(r'<body class="x">\n<svg style="display: none" id="MJX-SVG-global-cache"', text)
    assert text.count(f'<style id="{STYLE_ID}">') == 1 and "mjx-container" in text.split("</head>")[0]
    assert plain.read_text("utf-8") == "<html><head></head><body><p>没有公式</p></body></html>"


def test_a_formula_mathjax_cannot_read_names_its_page_lesson_and_formula_and_no_page_is_written(project_root, tmp_path):
    good, bad = tmp_path / "a.html", tmp_path / "b.html"
    good.write_text(PAGE, "utf-8")
    bad.write_text(PAGE.replace("16\\Psi", "\\frac{16\\Psi"), "utf-8")
    lesson = tmp_path / "lesson07.qmd"
    with pytest.raises(CourseError) as raised:
        typeset(project_root, [good, bad], {bad: lesson})
    message = str(raised.value)
    assert "b.html" in message and "\\frac{16\\Psi" in message and lesson.name in message
    assert good.read_text("utf-8") == PAGE  # nothing half-written
    assert not (tmp_path / "kept").exists()  # nor kept


def test_formulas_typeset_before_come_from_the_build_cache_and_a_change_runs_mathjax_again(
    project_root, tmp_path, monkeypatch
):
    runs = []
    real = course.site.typeset_math.run_node
    monkeypatch.setattr(course.site.typeset_math, "run_node", lambda *a, **k: runs.append(a) or real(*a, **k))
    page = tmp_path / "lesson.html"
    page.write_text(PAGE, "utf-8")
    typeset(project_root, [page])
    first = page.read_text("utf-8")
    page.write_text(PAGE.replace("与", "和"), "utf-8")  # the text edited, the formulas the same
    typeset(project_root, [page])
    assert len(runs) == 1 and page.read_text("utf-8") == first.replace("与", "和")
    page.write_text(PAGE.replace("16\\Psi", "12\\Psi"), "utf-8")  # a formula edited
    typeset(project_root, [page])
    assert len(runs) == 2 and "<mn>12</mn>" in page.read_text("utf-8") and "<mn>16</mn>" not in page.read_text("utf-8")
    driver = tmp_path / "driver"  # another typesetter (its script changed): MathJax runs again
    driver.mkdir()
    (driver / SCRIPT).write_text((SITE_FILES / SCRIPT).read_text("utf-8") + "\n// changed\n", "utf-8")
    page.write_text(PAGE, "utf-8")
    typeset(project_root, [page], site_files=driver)
    assert len(runs) == 3 and page.read_text("utf-8") == first
