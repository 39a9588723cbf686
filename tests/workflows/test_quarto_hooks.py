"""The course's Quarto project scripts without Quarto: which variant a render makes, which lessons it renders (as
Quarto's environment variables say), and where the filter reads the variant's includes. The page checks they run:
tests/workflows/test_site_steps.py; the renders themselves: tests/workflows/test_quarto_render.py."""

from __future__ import annotations

import shutil

import pytest

from course.errors import CourseError
from course.lesson.parse_qmd import parse_lesson
from course.site.plan import make_plan
from course.workflows.quarto_hooks import active_variant, check_includes_folder, rendered_after, rendered_before


@pytest.fixture(scope="module")
def course(project_root):
    plan = make_plan(project_root)
    return plan, [parse_lesson(p) for p in plan.lessons]


def test_the_variant_is_the_course_profile_among_quartos_active_ones_else_answer(course):
    plan, _ = course
    assert active_variant(plan, "student").name == "student"
    assert active_variant(plan, "draft,student").name == "student"
    assert active_variant(plan, None).name == "answer" and active_variant(plan, "draft").name == "answer"


def test_the_lessons_rendered_are_those_quarto_names_and_all_of_them_on_a_whole_render(course, tmp_path):
    plan, lessons = course
    out = plan.root / "_site" / "student"
    every = {lesson.stem for lesson in lessons}
    whole = {"QUARTO_PROJECT_RENDER_ALL": "1", "QUARTO_PROJECT_INPUT_FILES": "index.qmd"}
    assert rendered_before(lessons, plan.root, whole) == every
    assert rendered_before(lessons, plan.root, {"QUARTO_PROJECT_INPUT_FILES": "lessons/lesson05.qmd"}) == {"lesson05"}
    assert rendered_before(lessons, plan.root, {"QUARTO_PROJECT_INPUT_FILES": "index.qmd"}) == set()
    assert rendered_before(lessons, plan.root, {}) == every  # run by hand: every lesson
    listing = tmp_path / "inputs.txt"
    listing.write_text("index.qmd\n", "utf-8")  # QUARTO_USE_FILE_FOR_…: the list in a file, for long lists
    assert (
        rendered_before(
            lessons,
            plan.root,
            {
                "QUARTO_PROJECT_INPUT_FILES": "lessons/lesson05.qmd",
                "QUARTO_USE_FILE_FOR_PROJECT_INPUT_FILES": str(listing),
            },
        )
        == set()
    )
    made = {"QUARTO_PROJECT_OUTPUT_FILES": "_site/student/lessons/lesson05.html"}
    assert rendered_after(lessons, plan.root, out, "lessons", made) == {"lesson05"}
    index_only = {"QUARTO_PROJECT_OUTPUT_FILES": "_site/student/index.html"}
    assert rendered_after(lessons, plan.root, out, "lessons", index_only) == set()


def test_the_includes_folder_in_quarto_yml_must_be_the_build_cache(project_root, tmp_path):
    check_includes_folder(make_plan(project_root))
    for name in ("_quarto.yml", "pyproject.toml"):
        shutil.copy(project_root / name, tmp_path / name)
    shutil.copytree(project_root / "lessons", tmp_path / "lessons")
    quarto = tmp_path / "_quarto.yml"
    quarto.write_text(quarto.read_text("utf-8").replace("course-includes: .course-cache/quarto", "course-includes: x"))
    with pytest.raises(CourseError, match=r"_quarto.yml: course-includes: expected \.course-cache/quarto .*got 'x'"):
        check_includes_folder(make_plan(tmp_path))
