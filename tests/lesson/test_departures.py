"""A lesson's departures.yml (course.lesson.departures): each `where` names a heading of the lesson or a file of the
project, and a bad file is an error at its line that says what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.errors import CourseError
from course.lesson.departures import lesson_headings, load_departures
from course.lesson.parse_qmd import parse_lesson

LESSON = """---
title: "第 7 课：示例"
lesson: 7
---

## 本课目标

### 1. 显存 {#sec-memory}

正文。

#### 细节：$2\\Psi$ 的来源

##### 太深的标题

# 一级标题
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with one lesson and a rubric file a departure can name."""
    (tmp_path / "lessons" / "lesson07").mkdir(parents=True)
    (tmp_path / "lessons" / "lesson07.qmd").write_text(LESSON, "utf-8")
    (tmp_path / "autograder" / "rubrics").mkdir(parents=True)
    (tmp_path / "autograder" / "rubrics" / "lesson07.yml").write_text("version: 1\n", "utf-8")
    return tmp_path


def write(project: Path, text: str):
    (project / "lessons" / "lesson07" / "departures.yml").write_text(text, "utf-8")
    return parse_lesson(project / "lessons" / "lesson07.qmd")


ENTRY = '  - where: {where}\n    original: "原稿说 A。"\n    now: "现在说 B。"\n    why: "A 不对。"\n'


def test_headings_are_h2_to_h4_as_written_after_their_marks_with_their_lines(project):
    lesson = write(project, "")
    assert [(h.level, h.text, h.line) for h in lesson_headings(lesson)] == [
        (2, "本课目标", 6),
        (3, "1. 显存", 8),
        (4, "细节：$2\\Psi$ 的来源", 12),
    ]


def test_a_lesson_without_the_file_has_no_departures(project):
    assert load_departures(parse_lesson(project / "lessons" / "lesson07.qmd"), project) == []


def test_a_departure_names_a_heading_or_a_project_file(project):
    lesson = write(
        project,
        "version: 1\ndepartures:\n"
        + ENTRY.format(where='"1. 显存"')
        + ENTRY.format(where="autograder/rubrics/lesson07.yml")
        + ENTRY.format(where='"细节：$2\\\\Psi$ 的来源"'),
    )
    found = load_departures(lesson, project)
    assert [(d.where, d.heading.line if d.heading else None) for d in found] == [
        ("1. 显存", 8),
        ("autograder/rubrics/lesson07.yml", None),
        ("细节：$2\\Psi$ 的来源", 12),
    ]
    assert (found[0].original, found[0].now, found[0].why) == ("原稿说 A。", "现在说 B。", "A 不对。")


@pytest.mark.parametrize(
    "where", ['"显存"', '"太深的标题"', '"一级标题"', "lessons/nothing.yml", "../outside.yml", "autograder/rubrics"]
)
def test_a_where_that_names_no_heading_and_no_file_is_an_error_at_its_line_listing_the_headings(project, where):
    (project.parent / "outside.yml").write_text("x", "utf-8")
    lesson = write(project, "version: 1\ndepartures:\n" + ENTRY.format(where='"1. 显存"') + ENTRY.format(where=where))
    with pytest.raises(CourseError) as err:
        load_departures(lesson, project)
    message = str(err.value)
    assert message.startswith("lesson07/departures.yml, line 7: departures/1/where:")
    assert "'本课目标' (line 6); '1. 显存' (line 8); '细节：$2\\\\Psi$ 的来源' (line 12)" in message
    assert "a project-relative file path" in message


@pytest.mark.parametrize(
    "text, line, expected",
    [
        ("version: 1\ndepartures:\n" + ENTRY.format(where='"本课目标"') + "    note: x\n", 7, "unknown key 'note'"),
        ("version: 1\ndepartures:\n  - where: 本课目标\n    original: a\n    now: b\n", 3, "missing key 'why'"),
        ("version: 2\ndepartures: []\n", 1, "expected 1, got 2"),
        (
            "version: 1\ndepartures:\n  - where: 本课目标\n    original: [a]\n    now: b\n    why: c\n",
            4,
            "expected a string",
        ),
        ("version: 1\ndepartures: [\n", 3, "not valid YAML"),
    ],
)
def test_a_bad_file_is_an_error_at_its_line(project, text, line, expected):
    lesson = write(project, text)
    with pytest.raises(CourseError) as err:
        load_departures(lesson, project)
    assert str(err.value).startswith(f"lesson07/departures.yml, line {line}: ")
    assert expected in str(err.value)


def test_the_real_lessons_departures_load(project_root):
    """Every lesson's departures.yml in this project is valid (the build reads them the same way)."""
    for qmd in sorted((project_root / "lessons").glob("lesson[0-9][0-9].qmd")):
        lesson = parse_lesson(qmd)
        assert all(d.where for d in load_departures(lesson, project_root))
