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
        ("ex-zero-memory", "exercise", False),
        ("solution-zero-memory", "solution", True),
    ]
    callouts = [b for b in blocks if isinstance(b, Div) and "callout-tip" in b.attr.classes]
    assert callouts[0].attr.get("collapse") == "true"
    assert any(isinstance(b, StaticCode) for b in blocks)


def test_solution_cell_is_the_solutions_module(project_root):
    lesson = parse_lesson(project_root / "lessons" / "lesson05.qmd")
    module = (project_root / "solutions" / "lesson05.py").read_text("utf-8").strip("\n")
    assert lesson.cell("solution-zero-memory").source == module


def test_exercise_keeps_the_seed_blanks(project_root):
    exercise = parse_lesson(project_root / "lessons" / "lesson05.qmd").cell("ex-zero-memory").source
    assert "        per_gpu = ______                      # 填空：优化器状态分片" in exercise.splitlines()
    assert exercise.count("return ______") == 2
    assert "#|" not in exercise


def test_exercise_and_solution_pair_by_label():
    lesson = parse_lesson(FIXTURES / "good-minimal.qmd")
    [pair] = exercise_pairs(lesson)
    assert pair.name == "add" and "______" in pair.exercise.source and "a + b" in pair.solution.source


@pytest.mark.parametrize(
    "fixture, line, expected",
    [
        ("unknown-role.qmd", 8, "'answer' is not allowed; expected one of 'exercise', 'solution'"),
        ("unclosed-fence.qmd", 8, "never closed"),
        ("unclosed-callout.qmd", 6, "never closed: expected a ':::' line"),
        ("solution-without-exercise.qmd", 6, "expected an exercise cell labelled ex-lonely"),
        ("bad-front-matter.qmd", 1, "front matter key lesson"),
        ("unknown-front-key.qmd", 1, "unknown key 'autor'"),
        ("missing-include.qmd", 16, "included file ../nowhere.py not found"),
        ("unknown-cell-option.qmd", 8, "unknown key 'evaluate'"),
    ],
)
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


@pytest.mark.parametrize(
    ("label", "role", "expected"),
    [
        (
            "sol-add",
            "solution",
            r"cell sol-add: a solution cell's label sol-add starts with 'sol-', which Quarto "
            r"reserves .*label solutions solution-NAME",
        ),
        (
            "exr-add",
            "exercise",
            r"cell exr-add: an exercise cell's label exr-add starts with 'exr-'.*label exercises ex-NAME",
        ),
        ("thm-table", None, r"cell thm-table: a cell's label thm-table starts with 'thm-'"),
    ],
)
def test_a_label_quarto_reserves_is_a_located_error(tmp_path, label, role, expected):
    """A cell labelled with one of Quarto's cross-reference prefixes (sol-, exr-, thm-, ...) where the course gives
    it a role, or where Quarto cannot make that float of a cell, stops the parse at its line."""
    option = f"#| course_role: {role}\n" if role else ""
    path = tmp_path / "lesson98.qmd"
    path.write_text(
        f'---\ntitle: "t"\nlesson: 98\n---\n\n```{{python}}\n#| label: {label}\n{option}x = 1\n```\n', "utf-8"
    )
    with pytest.raises(CourseError, match=rf"lesson98.qmd, line 6, {expected}"):
        parse_lesson(path)


def test_every_label_form_the_course_uses_is_free_of_quarto_reserved_prefixes(project_root):
    """The course's own prefixes (ex-, solution-) and every label of the lessons and the scaffold avoid Quarto's."""
    from course.lesson.model import EXERCISE_PREFIX, QUARTO_RESERVED_PREFIXES, SOLUTION_PREFIX
    from course.site.plan import make_plan

    assert not any(p.startswith(r) for p in (EXERCISE_PREFIX, SOLUTION_PREFIX) for r in QUARTO_RESERVED_PREFIXES)
    labels = [c.label for p in make_plan(project_root).lessons for c in parse_lesson(p).cells()]
    assert "solution-zero-memory" in labels
    assert not [x for x in labels if x.startswith(QUARTO_RESERVED_PREFIXES)]
