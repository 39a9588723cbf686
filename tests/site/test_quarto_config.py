"""_quarto.yml describes the site `course build` makes, so plain `quarto render` gives the same structure (the
renders themselves are tests/workflows/test_quarto_render.py, with a real Quarto; this reads the configuration)."""

from __future__ import annotations

import yaml

from course.site.plan import make_plan


def test_quarto_renders_only_the_course_lessons_as_a_website_with_sidebar_page_navigation_search_and_toc(project_root):
    config = yaml.safe_load((project_root / "_quarto.yml").read_text("utf-8"))
    project = config["project"]
    # anchored at the root: without the "/" Quarto matches at any depth and renders the tests' fixture lessons;
    # the last pattern is the answer site's departures pages, which the pre-render step writes
    assert project["type"] == "website" and project["render"] == [
        "/index.qmd",
        "/lessons/lesson[0-9][0-9].qmd",
        "/lesson[0-9][0-9]-departures.qmd",
    ]
    assert project["pre-render"] == "scripts/quarto_hook.py pre-render"
    assert project["post-render"] == "scripts/quarto_hook.py post-render"
    website = config["website"]
    section = website["sidebar"]["contents"][1]
    assert section == {"section": "全部课程", "contents": "lessons/*"} and website["page-navigation"] is True
    assert website["search"]["location"] == "sidebar" and config["format"]["html"]["toc"] is True
    assert config["filters"] == ["course-variant"]
    assert (project_root / "_extensions" / "course-variant" / "_extension.yml").is_file()
    assert {p.parent for p in make_plan(project_root).lessons} == {project_root / "lessons"}  # what the glob renders


def test_quarto_pages_write_formulas_for_the_build_to_typeset_and_keep_no_freeze_cache(project_root):
    """Quarto writes formulas as MathJax's input, which the post-render step typesets (dropping the script tag Quarto
    writes, whatever its address), the same for every folder (no lessons/_metadata.yml says otherwise); freeze is
    off, so no _freeze/ holding the solution cells' source is ever written."""
    config = yaml.safe_load((project_root / "_quarto.yml").read_text("utf-8"))
    assert config["format"]["html"]["html-math-method"] == "mathjax"
    assert not (project_root / "lessons" / "_metadata.yml").exists()
    assert config["execute"]["freeze"] is False


def test_the_quarto_site_and_front_page_carry_the_course_title(project_root):
    """index.qmd and the website title repeat [tool.course] course_title (Quarto cannot read pyproject.toml)."""
    config = yaml.safe_load((project_root / "_quarto.yml").read_text("utf-8"))
    front = yaml.safe_load((project_root / "index.qmd").read_text("utf-8").split("---")[1])
    title = make_plan(project_root).config.course_title
    assert config["website"]["title"] == front["title"] == title and front["course-lesson-dir"] == "lessons"
