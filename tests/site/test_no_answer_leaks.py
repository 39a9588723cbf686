"""No answer reaches the student variant: each lesson's student files are scanned for that lesson's answer text.

Each page and notebook is compared with its own lesson's answers (a sentence of one lesson may rightly say what is
an answer in another); the index, which belongs to no lesson, with every lesson's.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from course.lesson.notebook_names import notes_notebook
from tests.lesson_cases import LESSONS, each_lesson
from tests.site.answer_leaks import answer_only_snippets, lite_shipped, normalise

pytestmark = pytest.mark.slow

PAGE_FILES = (".html", ".ipynb", ".js", ".css")


def visible_text(path: Path) -> str:
    """What a reader of the file sees: HTML without tags, notebook cells joined, other files as text."""
    raw = path.read_bytes().decode("utf-8", "replace")
    if path.suffix == ".html":
        raw = html.unescape(re.sub(r"<[^>]+>", "", raw))
    elif path.suffix == ".ipynb":
        cells = json.loads(raw)["cells"]
        raw = "\n".join("".join(c["source"]) + json.dumps(c.get("outputs", []), ensure_ascii=False) for c in cells)
    return normalise(raw)


def lesson_files(site: Path, stem: str) -> list[Path]:
    """The files of one lesson in a variant's site: its pages, its notebooks and its page scripts and styles."""
    return sorted(p for p in [*site.glob(f"{stem}[.-]*"), *site.glob(f"{stem}/*")] if p.suffix in PAGE_FILES)


def test_lesson5_has_answer_only_material_to_look_for_and_its_answer_page_shows_the_key_points(built_site):
    """The scan has something to find: lesson 5's answer variant adds code, sentences and 要点 (printed on its page)."""
    snippets = answer_only_snippets("lesson05")
    assert len(snippets) > 30 and len(snippets) - len(answer_only_snippets("lesson05", key_points=False)) >= 10
    page = visible_text(built_site / "answer" / "lesson05.html")
    assert not [
        s for s in snippets if s not in page and s not in visible_text(built_site / "answer" / "lesson05-notes.ipynb")
    ]


@each_lesson
def test_snippets_are_found_in_the_lessons_answer_files(built_site, stem):
    """The scan itself works: every snippet of the lesson is present in its own answer page or notebook."""
    texts = [visible_text(p) for p in lesson_files(built_site / "answer", stem)]
    assert texts
    missing = [s for s in answer_only_snippets(stem, key_points=False) if not any(s in t for t in texts)]
    assert not missing


@each_lesson
def test_the_lessons_student_files_hold_none_of_its_answers(built_site, stem):
    snippets = answer_only_snippets(stem)
    files = lesson_files(built_site / "student", stem)
    assert {p.name for p in files} >= {f"{stem}.html", notes_notebook(stem)}
    hits = [f"{p.name}: {s}" for p in files for s in snippets if s in visible_text(p)]
    assert not hits


def test_the_student_index_holds_no_lessons_answers(built_site):
    index = visible_text(built_site / "student" / "index.html")
    assert not [f"{stem}: {s}" for stem in LESSONS for s in answer_only_snippets(stem) if s in index]


def test_the_student_sites_other_files_belong_to_a_lesson_or_the_site(built_site):
    """Every student page, notebook or lesson script is scanned above or below (lite/): none lies outside a lesson's
    files, the index and the in-browser notebooks' site."""
    site = built_site / "student"
    scanned = (
        {p for stem in LESSONS for p in lesson_files(site, stem)} | {site / "index.html"} | set(lite_shipped(site))
    )
    shared = ("site_libs", "lite")  # the site's own scripts and the in-browser notebooks' app, not a lesson's
    unscanned = [
        p.name
        for p in site.rglob("*")
        if p not in scanned
        and (p.suffix in (".html", ".ipynb") or (p.suffix in PAGE_FILES and p.relative_to(site).parts[0] not in shared))
    ]
    assert not unscanned


@each_lesson
def test_the_in_browser_notebook_holds_none_of_its_lessons_answers_and_the_answer_sites_has_them(built_site, stem):
    """lite/files/<stem>.ipynb, what a student opens in the browser, is scanned like the lesson's own files."""
    student = built_site / "student" / "lite" / "files" / f"{stem}.ipynb"
    if not student.is_file():
        pytest.skip("the lesson's notebook is not offered in the browser (its page says why)")
    snippets = answer_only_snippets(stem)
    assert not [s for s in snippets if s in visible_text(student)]
    answer = visible_text(built_site / "answer" / "lite" / "files" / f"{stem}.ipynb")
    assert [s for s in answer_only_snippets(stem, key_points=False) if s in answer]  # the scan finds answers there


def test_the_in_browser_site_ships_no_lessons_answers_in_any_notebook_json_or_page(built_site):
    """Its contents index (api/contents/all.json), every notebook, JSON and page under lite/: no lesson's answers;
    and everything else it ships is the same app in both variants, so only those files can differ."""
    student, answer = built_site / "student" / "lite", built_site / "answer" / "lite"
    shipped = lite_shipped(built_site / "student")
    assert student / "api" / "contents" / "all.json" in shipped and len(shipped) > 10
    snippets = [s for stem in LESSONS for s in answer_only_snippets(stem)]
    leaks = [f"{p.relative_to(student)}: {s}" for p in shipped for s in snippets if s in visible_text(p)]
    assert not leaks
    others = [p.relative_to(student) for p in student.rglob("*") if p.is_file() and p not in shipped]
    assert others and not [p for p in others if (student / p).read_bytes() != (answer / p).read_bytes()]


def indexed_text(site: Path) -> dict[str, str]:
    """What the site's search index can show, per lesson: the stored heading and text of each section."""
    script = (site / "site_libs" / "search-index.js").read_text("utf-8")
    index = json.loads(json.loads(script.split("=", 1)[1].strip().rstrip(";")))
    found: dict[str, str] = {}
    for fields in index["storedFields"].values():
        stem = fields["url"].split(".html")[0]
        found[stem] = found.get(stem, "") + "\n" + normalise(fields["heading"] + "\n" + fields["text"])
    return found


def test_the_search_index_holds_the_answer_sites_answers_and_none_in_the_student_site(built_site):
    """The student site's search shows what its pages show: no lesson's answers, which the answer site's index has."""
    student, answer = indexed_text(built_site / "student"), indexed_text(built_site / "answer")
    assert set(student) == set(answer) == set(LESSONS)
    leaks = [
        f"{stem}: {s}" for stem in LESSONS for s in answer_only_snippets(stem, key_points=False) if s in student[stem]
    ]
    assert not leaks
    found = [s for s in answer_only_snippets("lesson05", key_points=False) if s in answer["lesson05"]]
    assert len(found) >= 15  # the scan reads the index: the answer site's holds lesson 5's answers
