"""parse_qmd: the lesson becomes typed blocks; broken sources stop with file, line and expectation."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.errors import CourseError
from course.lesson.model import CodeCell, Diagram, Div, StaticCode, exercise_pairs, walk
from course.lesson.parse_qmd import parse_lesson

FIXTURES = Path(__file__).parent / "fixtures"


def test_lesson05_parses_into_the_seed_structure(project_root):
    lesson = parse_lesson(project_root / "lessons" / "lesson05.qmd")
    blocks = list(walk(lesson.blocks))
    assert lesson.title == "第 5 课：ZeRO 与 FSDP" and lesson.front["lesson"] == 5
    assert [b.kind for b in blocks if isinstance(b, Diagram)] == ["mermaid", "mermaid"]
    cells = list(lesson.cells())
    assert [(c.label, c.role, c.evaluated) for c in cells if c.role] == [
        ("ex-zero-memory", "exercise", False), ("sol-zero-memory", "solution", True)]
    callouts = [b for b in blocks if isinstance(b, Div) and "callout-tip" in b.attr.classes]
    assert callouts[0].attr.get("collapse") == "true"
    assert any(isinstance(b, StaticCode) for b in blocks)


def test_solution_cell_is_the_solutions_module(project_root):
    lesson = parse_lesson(project_root / "lessons" / "lesson05.qmd")
    module = (project_root / "solutions" / "lesson05.py").read_text("utf-8").strip("\n")
    assert lesson.cell("sol-zero-memory").source == module


def test_exercise_keeps_the_seed_blanks(project_root):
    exercise = parse_lesson(project_root / "lessons" / "lesson05.qmd").cell("ex-zero-memory").source
    assert "        per_gpu = ______                      # 填空：优化器状态分片" in exercise.splitlines()
    assert exercise.count("return ______") == 2
    assert "#|" not in exercise


def test_exercise_and_solution_pair_by_label():
    lesson = parse_lesson(FIXTURES / "good-minimal.qmd")
    [pair] = exercise_pairs(lesson)
    assert pair.name == "add" and "______" in pair.exercise.source and "a + b" in pair.solution.source


@pytest.mark.parametrize("fixture, line, expected", [
    ("unknown-role.qmd", 8, "'answer' is not allowed; expected one of 'exercise', 'solution'"),
    ("unclosed-fence.qmd", 8, "never closed"),
    ("unclosed-callout.qmd", 6, "never closed: expected a ':::' line"),
    ("solution-without-exercise.qmd", 6, "expected an exercise cell labelled ex-lonely"),
    ("bad-front-matter.qmd", 1, "front matter key lesson"),
    ("unknown-front-key.qmd", 1, "unknown key 'autor'"),
    ("missing-include.qmd", 16, "included file ../nowhere.py not found"),
    ("unknown-cell-option.qmd", 8, "unknown key 'evaluate'"),
])
def test_broken_lessons_name_file_line_and_expectation(fixture, line, expected):
    with pytest.raises(CourseError) as err:
        parse_lesson(FIXTURES / fixture)
    message = str(err.value)
    assert message.startswith(f"{fixture}, line {line}"), message
    assert expected in message


def test_error_names_the_cell_label():
    with pytest.raises(CourseError, match=r"unknown-role.qmd, line 8, cell ex-a: cell option course_role"):
        parse_lesson(FIXTURES / "unknown-role.qmd")


def test_code_cells_are_typed():
    lesson = parse_lesson(FIXTURES / "good-minimal.qmd")
    assert all(isinstance(c, CodeCell) and c.lang == "python" for c in lesson.cells())
