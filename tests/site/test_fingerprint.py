"""What changed -> which lessons to rebuild: a file belongs to its lesson by the layout, an asset to the lessons
naming it, anything else (and every lesson's front matter) to all; a stamp says what a site was built from."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.site.fingerprint import (
    STAMP,
    front_matter,
    lesson_fingerprints,
    lessons_reading,
    read_stamp,
    stale_lessons,
    stamp_text,
)
from course.site.plan import make_plan

LESSONS = ("lesson01", "lesson02")


@pytest.fixture
def two_lessons(tmp_path: Path) -> Path:
    """A project of two lessons: lesson02 shows an image from assets/, each has a data folder and a solution."""
    for n, stem in enumerate(LESSONS, start=1):
        shows = "![图](../assets/pic.png)\n" if stem == "lesson02" else ""
        (tmp_path / "lessons" / stem).mkdir(parents=True)
        (tmp_path / "lessons" / f"{stem}.qmd").write_text(
            f'---\ntitle: "第 {n} 课"\nlesson: {n}\n---\n\n## 本课目标\n\n正文。\n{shows}', "utf-8"
        )
        (tmp_path / "lessons" / stem / "checks.yml").write_text("checks: []\n", "utf-8")
        (tmp_path / "solutions").mkdir(exist_ok=True)
        (tmp_path / "solutions" / f"{stem}.py").write_text("x = 1\n", "utf-8")
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "pic.png").write_bytes(b"png")
    return tmp_path


@pytest.mark.parametrize(
    "changed, lessons",
    [
        ("lessons/lesson01.qmd", ["lesson01"]),
        ("lessons/lesson02/checks.yml", ["lesson02"]),
        ("lessons/lesson02/figures/draw.py", ["lesson02"]),
        ("solutions/lesson01.py", ["lesson01"]),
        ("solutions/lesson02/helpers.py", ["lesson02"]),
        ("autograder/rubrics/lesson02.yml", ["lesson02"]),
        ("assets/pic.png", ["lesson02"]),  # named by lesson02's text only
        ("assets/unused.png", list(LESSONS)),  # named by none: who reads it cannot be told
        ("solutions/__init__.py", list(LESSONS)),
        ("_extensions/course-variant/course-variant.lua", list(LESSONS)),
        ("pyproject.toml", list(LESSONS)),
        ("lessons/lesson01.qmd.orig", list(LESSONS)),  # not the lesson's own file, though it starts like it
    ],
)
def test_a_changed_file_maps_to_the_lessons_whose_pages_it_can_change(two_lessons, changed, lessons):
    plan = make_plan(two_lessons)
    texts = {p.stem: p.read_text("utf-8") for p in plan.lessons}
    assert lessons_reading(plan, changed, texts) == lessons


def changed_by(root: Path, change) -> list[str]:
    """The lessons whose fingerprint CHANGE (a function of the project root) changes."""
    before = lesson_fingerprints(make_plan(root))
    change(root)
    after = lesson_fingerprints(make_plan(root))
    assert sorted(after) == sorted(before) or change.__name__ == "add_lesson"
    return stale_lessons(before, after)


def edit_body(root):
    qmd = root / "lessons" / "lesson01.qmd"
    qmd.write_text(qmd.read_text("utf-8").replace("正文。", "改过的正文。"), "utf-8")


def edit_title(root):
    qmd = root / "lessons" / "lesson01.qmd"
    qmd.write_text(qmd.read_text("utf-8").replace("第 1 课", "第 1 课：新标题"), "utf-8")


def edit_data(root):
    (root / "lessons" / "lesson02" / "checks.yml").write_text("checks: [1]\n", "utf-8")


def edit_image(root):
    (root / "assets" / "pic.png").write_bytes(b"another png")


def edit_settings(root):
    (root / "pyproject.toml").write_text("[tool.course]\ncell_timeout = 30\n", "utf-8")


def quarto_rendering(root):
    """What a `quarto render` of lesson01 in this checkout leaves beside it until it is done."""
    lessons = root / "lessons"
    (lessons / "lesson01.quarto_ipynb").write_text("{}", "utf-8")
    (lessons / "lesson01.html").write_text("<html></html>", "utf-8")
    (lessons / "lesson01_files" / "figure-html").mkdir(parents=True)
    (lessons / "lesson01_files" / "figure-html" / "cell-1-output-1.png").write_bytes(b"png")


def add_lesson(root):
    (root / "lessons" / "lesson03.qmd").write_text('---\ntitle: "第 3 课"\nlesson: 3\n---\n\n正文。\n', "utf-8")


@pytest.mark.parametrize(
    "change, rebuilt",
    [
        (edit_body, ["lesson01"]),
        (edit_data, ["lesson02"]),
        (edit_image, ["lesson02"]),
        (edit_title, list(LESSONS)),  # every page shows every lesson's title (index, navigation)
        (edit_settings, list(LESSONS)),
        (add_lesson, [*LESSONS, "lesson03"]),  # a new lesson changes what every page links to
        (quarto_rendering, []),  # Quarto's files beside the lesson it renders are none of the build's inputs
    ],
)
def test_an_edit_rebuilds_exactly_the_lessons_it_can_change(two_lessons, change, rebuilt):
    assert changed_by(two_lessons, change) == rebuilt


def test_nothing_changed_rebuilds_nothing(two_lessons):
    assert changed_by(two_lessons, lambda root: None) == []


def test_a_stamp_reads_back_and_an_old_or_missing_one_means_rebuild_everything(two_lessons):
    plan = make_plan(two_lessons)
    prints = lesson_fingerprints(plan)
    site = two_lessons / "_site" / "student"
    assert read_stamp(site) == {} and stale_lessons(read_stamp(site), prints) == list(LESSONS)
    site.mkdir(parents=True)
    (site / STAMP).write_text("0" * 64, "utf-8")  # the whole-course stamp builds wrote before
    assert read_stamp(site) == {}
    (site / STAMP).write_text(stamp_text(prints, renderer="pandoc test"), "utf-8")
    assert read_stamp(site) == prints and stale_lessons(read_stamp(site), prints) == []
    assert stale_lessons({**prints, "lesson02": "unreleased"}, prints) == ["lesson02"]


def test_front_matter_is_the_yaml_between_the_first_two_rules():
    assert front_matter('---\ntitle: "第 1 课"\n---\n\n正文\n---\n') == 'title: "第 1 课"'
    assert front_matter("正文\n") == ""


def test_the_course_packages_files_are_named_by_their_place_in_it_so_a_copy_built_elsewhere_rebuilds_nothing(
    two_lessons, tmp_path_factory, monkeypatch
):
    """The project moved and built by another checkout's course (as the tests' copies are): the same hashes; an edit
    to the package still changes every lesson's."""
    import shutil

    from course.site import fingerprint

    plan = make_plan(two_lessons)
    before = (lesson_fingerprints(plan), fingerprint.source_fingerprint(plan, ["student"]))
    elsewhere = tmp_path_factory.mktemp("checkout") / "course"
    shutil.copytree(fingerprint.PACKAGE, elsewhere, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fingerprint, "PACKAGE", elsewhere)
    moved = make_plan(shutil.copytree(two_lessons, tmp_path_factory.mktemp("moved") / "project"))
    assert (lesson_fingerprints(moved), fingerprint.source_fingerprint(moved, ["student"])) == before
    (elsewhere / "site" / "fingerprint.py").write_text("# edited\n", "utf-8")
    assert all(lesson_fingerprints(moved)[stem] != before[0][stem] for stem in LESSONS)
