"""_quarto.yml describes the site `course build` makes, so rendering with Quarto gives the same structure (the Quarto
binary cannot be installed here: this checks the configuration, not a Quarto render)."""

from __future__ import annotations

import yaml

from course.site.plan import make_plan


def test_quarto_renders_every_lesson_as_a_website_with_sidebar_page_navigation_search_and_toc(project_root):
    config = yaml.safe_load((project_root / "_quarto.yml").read_text("utf-8"))
    assert config["project"]["type"] == "website" and config["project"]["render"] == ["lessons/*.qmd"]
    website = config["website"]
    assert website["sidebar"]["contents"] == "auto" and website["page-navigation"] is True
    assert website["search"]["location"] == "sidebar" and config["format"]["html"]["toc"] is True
    assert config["filters"] == ["course-variant"]
    assert (project_root / "_extensions" / "course-variant" / "_extension.yml").is_file()
    assert {p.parent for p in make_plan(project_root).lessons} == {project_root / "lessons"}  # what the glob renders
