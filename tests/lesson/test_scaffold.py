"""`course new`: a new lesson's files, never over existing ones; end to end it builds, releases and grades."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from course.errors import CourseError
from course.lesson.notebook_names import assignment_notebook, notes_notebook
from course.lesson.scaffold import scaffold_lesson

ROOT = Path(__file__).resolve().parents[2]
FILES = [
    "lessons/lesson06.qmd",
    "lessons/lesson06/checks.yml",
    "lessons/lesson06/figures.py",
    "lessons/lesson06/scale_chart.py",
    "solutions/lesson06.py",
    "autograder/rubrics/lesson06.yml",
    "demo/classes/lesson06/students.yml",
    "demo/classes/lesson06/graders.yml",
]


def test_the_scaffold_writes_a_valid_lesson_checks_rubric_and_demo_class(tmp_path):
    from course.grading.load_checks import check_against_lesson, check_against_rubric, load_checks
    from course.grading.rubric import load_rubric
    from course.lesson.parse_qmd import parse_lesson

    assert [str(p) for p in scaffold_lesson(tmp_path, "lesson06", "第 6 课：张量并行")] == FILES
    lesson = parse_lesson(tmp_path / "lessons" / "lesson06.qmd")
    assert lesson.title == "第 6 课：张量并行" and lesson.front["lesson"] == 6
    spec = load_checks(tmp_path / "lessons" / "lesson06" / "checks.yml")
    rubric = load_rubric(tmp_path / "autograder" / "rubrics" / "lesson06.yml")
    check_against_rubric(spec, rubric)
    assert list(check_against_lesson(spec, lesson)) == ["ex-scale"]
    assert [v.id for v in rubric.vetoes] == ["mutates-input"]


def test_the_scaffold_declares_a_figure_with_the_authors_api_drawn_from_the_solution(tmp_path):
    from course.workflows.draw_figures import ensure_figures, lesson_figures

    scaffold_lesson(tmp_path, "lesson06", "第 6 课：张量并行")
    figures = (tmp_path / "lessons" / "lesson06" / "figures.py").read_text("utf-8")
    assert "from course.figures.declare import" in figures and "from course.workflows" not in figures
    [spec] = lesson_figures(tmp_path)
    assert spec.output == "assets/figs/lesson06-scale.png"
    assert spec.inputs[:2] == ("solutions/lesson06.py", "lessons/lesson06/scale_chart.py")
    assert "](../assets/figs/lesson06-scale.png)" in (tmp_path / "lessons" / "lesson06.qmd").read_text("utf-8")
    [png] = ensure_figures(tmp_path)
    first = png.read_bytes()
    assert first.startswith(b"\x89PNG")
    solution = tmp_path / "solutions" / "lesson06.py"
    solution.write_text(solution.read_text("utf-8").replace("v * factor", "v * factor * 2"), "utf-8")
    assert ensure_figures(tmp_path) == [png] and png.read_bytes() != first  # drawn from the solution


@pytest.mark.parametrize("name", ["lesson6", "lesson00", "Lesson06", "lesson106"])
def test_a_bad_name_is_refused(tmp_path, name):
    with pytest.raises(CourseError, match="expected a lesson name lessonNN with two digits"):
        scaffold_lesson(tmp_path, name, "t")
    assert list(tmp_path.iterdir()) == []


def test_an_existing_file_stops_it_before_anything_is_written(tmp_path):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "lesson06.py").write_text("mine\n", "utf-8")
    with pytest.raises(
        CourseError,
        match=r"lesson06 already exists: expected none of its files, found "
        r"solutions/lesson06.py",
    ):
        scaffold_lesson(tmp_path, "lesson06", "t")
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == ["solutions", "solutions/lesson06.py"]


def test_cli_registers_new(tmp_path, capsys):
    from course.cli import main

    assert main(["new", "lesson08", "--title", "第 8 课", "--root", str(tmp_path)]) == 0
    assert "course demo lesson08" in capsys.readouterr().out
    assert main(["new", "lesson08", "--title", "第 8 课", "--root", str(tmp_path)]) == 2


@pytest.mark.slow
@pytest.mark.sandbox
def test_a_new_lesson_builds_releases_and_grades_its_demo_student_at_full_marks(tmp_path, capsys, monkeypatch):
    import os
    import sys

    from course.workflows.build_site import build_course
    from course.workflows.demo_cycle import run_cycle
    from tests.scratch_project import scratch_project

    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    root = scratch_project(tmp_path)
    scaffold_lesson(root, "lesson06", "第 6 课：张量并行")
    build_course(root)
    assert (root / "_site" / "student" / "lesson06.html").is_file()
    assert "v * factor" in (root / "_site" / "answer" / notes_notebook("lesson06")).read_text("utf-8")
    for name in (notes_notebook("lesson06"), assignment_notebook("lesson06")):
        assert "v * factor" not in (root / "_site" / "student" / name).read_text("utf-8")
    course = run_cycle(root, "lesson06")
    with open(course / "reports" / "lesson06.csv", encoding="utf-8") as f:
        [row] = list(csv.DictReader(f))
    assert (row["student"], row["scale"], row["Q1"], row["total"], row["result"]) == ("demo", "1", "2", "3", "PASS")
