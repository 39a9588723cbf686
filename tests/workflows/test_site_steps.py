"""The site steps both renderers run: declared once and called from one place (no step written twice), and the
page checks (the CDN polyfill removed, anything else from another host refused, a solution line or a departures
page refused where the variant hides them, each error naming the page). The steps at work: the builds of
tests/workflows/test_build_site.py (pandoc) and tests/workflows/test_quarto_render.py (Quarto)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from course.errors import CourseError
from course.lesson.parse_qmd import parse_lesson
from course.lesson.variants import get_variant
from course.site.check_leaks import solution_lines
from course.site.plan import make_plan
from course.workflows import site_steps
from course.workflows.quarto_hooks import site_run
from course.workflows.site_steps import STEPS, check_pages

WORKFLOWS = Path(site_steps.__file__).parent
# What the steps do, by the library functions they call: the notebooks, the in-browser blocks and the index's list,
# the page assets, the web assets, lite/, the leak and markup checks, the departures found, the released assignments.
STEP_CALLS = {
    "write_notebooks",
    "browser_runs",
    "page_markdown",
    "index_markdown",
    "copy_assets",
    "locate_web_assets",
    "lite_notebooks",
    "build_lite",
    "typeset_pages",
    "solution_leaks",
    "leftover_in_html",
    "departures_by_lesson",
    "released_assignments",
}
POLYFILL = '  <script src="https://cdnjs.cloudflare.com/polyfill/v3/polyfill.min.js?features=es6"></script>\n'


def calls(path: Path) -> dict[str, int]:
    """The functions a module calls (by name), with the line of the first call."""
    found = {}
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            found.setdefault(name, node.lineno)
    return found


def test_the_steps_are_declared_once_and_called_from_one_place():
    """Every step's work is called in site_steps alone, and both renderers' runs go through its one list: the
    pandoc renderer and Quarto's project scripts call run_steps before and after the pages, and nothing else does."""
    names = [step.name for step in STEPS]
    assert len(set(names)) == len(names) and {step.phase for step in STEPS} == {site_steps.BEFORE, site_steps.AFTER}
    for module in sorted(WORKFLOWS.glob("*.py")):
        if module.name == "site_steps.py":
            continue
        twice = STEP_CALLS & set(calls(module))
        assert not twice, f"{module.name} does a site step's work itself ({', '.join(sorted(twice))}): add it to STEPS"
    runners = {m.name for m in WORKFLOWS.glob("*.py") if "run_steps" in calls(m) and m.name != "site_steps.py"}
    assert runners == {"render_pandoc.py", "quarto_hooks.py"}
    for runner in runners:
        source = (WORKFLOWS / runner).read_text("utf-8")
        assert "run_steps(site, BEFORE)" in source and "run_steps(site, AFTER)" in source, runner


def test_each_step_with_inputs_of_its_own_has_a_fingerprint_that_follows_them(project_root):
    plan = make_plan(project_root)
    prints = site_steps.steps_fingerprint(plan)
    assert set(prints) == {"site files", "lite"} and all(len(v) == 64 for v in prints.values())


@pytest.fixture(scope="module")
def course(project_root):
    plan = make_plan(project_root)
    return plan, [parse_lesson(p) for p in plan.lessons]


def site(tmp_path, lesson_page: str):
    """A Quarto-shaped site: index.html and lessons/lesson05.html holding LESSON_PAGE."""
    (tmp_path / "lessons").mkdir()
    (tmp_path / "index.html").write_text("<html><head>" + POLYFILL + "</head><main>课程列表</main></html>", "utf-8")
    (tmp_path / "lessons" / "lesson05.html").write_text(lesson_page, "utf-8")
    return tmp_path


def check(course, variant: str, out: Path) -> None:
    """The page checks of Quarto's site in OUT."""
    plan, lessons = course
    check_pages(site_run(plan, lessons, get_variant(variant), frozenset(), out))


def test_the_cdn_polyfill_is_removed_and_nothing_else_may_come_from_another_host(course, tmp_path):
    out = site(tmp_path, "<html><head>" + POLYFILL + "</head><main><p>正文</p></main></html>")
    check(course, "student", out)
    assert "polyfill" not in (out / "index.html").read_text("utf-8")
    assert "polyfill" not in (out / "lessons" / "lesson05.html").read_text("utf-8")
    (out / "lessons" / "lesson05.html").write_text('<script src="https://cdn.example.org/x.js"></script>', "utf-8")
    with pytest.raises(CourseError, match=r"student/lessons/lesson05.html loads from another host .*cdn\.example\.org"):
        check(course, "student", out)


def test_a_solution_line_on_a_student_page_stops_the_render_and_not_on_the_answer_page(course, tmp_path):
    line = solution_lines(course[1][0])[0]
    highlighted = "<span class='kw'>" + line.replace(" ", "</span> <span>", 1) + "</span>"
    out = site(tmp_path, f"<html><main><pre><code>{highlighted}</code></pre></main></html>")
    check(course, "answer", out)
    with pytest.raises(
        CourseError,
        match=r"lesson05.qmd: student/lessons/lesson05.html shows solution code of "
        r"lesson05",
    ):
        check(course, "student", out)


def test_a_departures_page_in_the_student_site_stops_the_render_and_not_in_the_answer_site(course, tmp_path):
    out = site(tmp_path, "<html><main><p>正文</p></main></html>")
    (out / "lesson05-departures.html").write_text("<html><main><p>原稿</p></main></html>", "utf-8")
    check(course, "answer", out)
    with pytest.raises(
        CourseError,
        match=r"student/lesson05-departures.html: a page of departures from the original "
        r"is for the answer site only",
    ):
        check(course, "student", out)
