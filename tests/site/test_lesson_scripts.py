"""A lesson's own page scripts and styles (front matter page-assets; course.site.lesson_scripts): listed files of its
data folder, loaded by its page, copied beside it, and refused on the student site when they hold solution code."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from course.errors import CourseError
from course.lesson.parse_qmd import parse_lesson
from course.lesson.variants import ANSWER
from course.site.check_leaks import solution_lines
from course.site.lesson_scripts import assets_markdown, check_no_solution, copy_assets, page_assets
from tests.lesson_cases import each_lesson, lesson

FRONT = '---\ntitle: "第 7 课"\nlesson: 7\npage-assets: {assets}\n---\n\n## 目标\n\n正文\n'


def lesson_with(tmp_path: Path, assets: str, files: dict[str, str]):
    (tmp_path / "lesson07").mkdir()
    for name, text in files.items():
        (tmp_path / "lesson07" / name).write_text(text, "utf-8")
    qmd = tmp_path / "lesson07.qmd"
    qmd.write_text(FRONT.format(assets=assets), "utf-8")
    return parse_lesson(qmd)


def test_the_page_loads_the_listed_styles_and_scripts_from_beside_it(tmp_path):
    lessonx = lesson_with(tmp_path, "[calc.js, calc.css]", {"calc.js": "'use strict';\n", "calc.css": "p {}\n"})
    assert assets_markdown(lessonx) == (
        '```{=html}\n<script defer src="lesson07/calc.js"></script>\n'
        '<link rel="stylesheet" href="lesson07/calc.css">\n```\n\n'
    )
    out = tmp_path / "site"
    assert [p.relative_to(out).as_posix() for p in copy_assets(lessonx, out, "student")] == [
        "lesson07/calc.js",
        "lesson07/calc.css",
    ]
    assert (out / "lesson07" / "calc.js").read_text("utf-8") == "'use strict';\n"


def test_a_lesson_without_the_key_ships_nothing(tmp_path):
    qmd = tmp_path / "lesson07.qmd"
    qmd.write_text('---\ntitle: "第 7 课"\nlesson: 7\n---\n\n正文\n', "utf-8")
    assert assets_markdown(parse_lesson(qmd)) == "" and copy_assets(parse_lesson(qmd), tmp_path, "student") == []


def test_a_listed_file_that_is_missing_is_an_error_at_the_key(tmp_path):
    lessonx = lesson_with(tmp_path, "[calc.js]", {})
    with pytest.raises(CourseError) as err:
        page_assets(lessonx)
    assert str(err.value).startswith(
        "lesson07.qmd, line 4: front matter page-assets: 'calc.js' is not a file in lesson07/"
    )


@pytest.mark.parametrize("assets", ["[../secret.js]", "[calc.py]", "[calc.js, calc.js]", "calc.js"])
def test_only_js_and_css_files_of_the_data_folder_named_once(tmp_path, assets):
    with pytest.raises(CourseError) as err:
        lesson_with(tmp_path, assets, {"calc.js": "", "calc.py": ""})
    assert "front matter key page-assets" in str(err.value) and "lesson07.qmd, line 1" in str(err.value)


def test_the_student_site_refuses_a_script_holding_a_line_of_the_solution_and_the_answer_site_takes_it(tmp_path):
    five = lesson("lesson05")
    line = solution_lines(five)[0]
    (tmp_path / "lesson05").mkdir()
    (tmp_path / "lesson05" / "zero-calc.js").write_text(f"// {line}\n", "utf-8")
    (tmp_path / "lesson05" / "zero-calc.css").write_text("", "utf-8")
    copy = five.__class__(path=tmp_path / "lesson05.qmd", front=five.front, blocks=five.blocks)
    with pytest.raises(CourseError) as err:
        copy_assets(copy, tmp_path / "student", "student")
    assert "zero-calc.js would show solution code of lesson05" in str(err.value)
    assert not (tmp_path / "student").exists()
    assert len(copy_assets(copy, tmp_path / "answer", "answer")) == 2
    with pytest.raises(CourseError, match="would show solution code"):  # what the variant shows decides, not its name
        copy_assets(copy, tmp_path / "hidden", replace(ANSWER, shows_solutions=False))


@each_lesson
def test_the_lessons_own_scripts_hold_no_solution_code(stem):
    for asset in page_assets(lesson(stem)):
        check_no_solution(lesson(stem), asset)
