"""The Quarto renderer's own inputs: Quarto's project files are inputs of the Quarto renderer only, so an edit to
_quarto.yml rebuilds no pandoc page and does not wake `course preview`, while the filter both renderers read
rebuilds either. (Its renders: tests/workflows/test_quarto_render.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

from course.site.fingerprint import lesson_fingerprints
from course.site.plan import make_plan
from course.tools.quarto import Quarto
from course.workflows.preview_site import watched_paths
from course.workflows.render_pandoc import PandocRenderer
from course.workflows.render_quarto import QuartoRenderer


def small_project(root: Path, project_root: Path) -> Path:
    """A project of one lesson with the course's Quarto project files and filter."""
    (root / "lessons").mkdir(parents=True)
    lesson = '---\ntitle: "第 1 课"\nlesson: 1\n---\n\n## 本课目标\n'
    (root / "lessons" / "lesson01.qmd").write_text(lesson, "utf-8")
    for name in ("_quarto.yml", "_quarto-student.yml", "_quarto-answer.yml", "index.qmd"):
        shutil.copy(project_root / name, root / name)
    shutil.copytree(project_root / "_extensions", root / "_extensions")
    return root


def test_quarto_project_files_are_inputs_of_the_quarto_renderer_only(project_root, tmp_path):
    root = small_project(tmp_path, project_root)
    plan = make_plan(root)
    renderers = (PandocRenderer("3.6"), QuartoRenderer(Quarto(Path("quarto"), "1.7.34")))

    def prints():
        return [lesson_fingerprints(plan, renderer.inputs(plan)) for renderer in renderers]

    before = prints()
    for name in ("_quarto.yml", "_quarto-student.yml", "index.qmd"):
        with (root / name).open("a", encoding="utf-8") as f:
            f.write("\n# edited\n")
        pandoc, quarto = prints()
        assert pandoc == before[0] and quarto != before[1], name
        before = [pandoc, quarto]
    watched = watched_paths(plan)
    assert root / "_quarto.yml" not in watched and root / "index.qmd" not in watched
    assert plan.lua_filter in watched
    with plan.lua_filter.open("a", encoding="utf-8") as f:
        f.write("\n-- edited\n")
    pandoc, quarto = prints()
    assert pandoc != before[0] and quarto != before[1]


def test_a_lesson_page_lies_where_each_renderer_writes_it(project_root):
    plan = make_plan(project_root)
    assert PandocRenderer("3.6").page_path(plan, "lesson05") == "lesson05.html"
    assert QuartoRenderer(Quarto(Path("quarto"), "1.7.34")).page_path(plan, "lesson05") == "lessons/lesson05.html"
