"""The generated nbgrader source notebook: lesson text, graded cells with the rubric's points, regenerated when
stale."""

from __future__ import annotations

import dataclasses
import re
import shutil
from pathlib import Path

import pytest

from course.assignment.make_source import (
    prove,
    question_prompts,
    source_notebook,
    source_notebook_node,
    write_assignment_sources,
)
from course.errors import CourseError
from course.grading.load_checks import load_checks
from course.grading.rubric import load_rubric, unasked_key_points
from course.lesson.model import Markdown, exercise_pairs
from course.lesson.notebook_names import assignment_notebook
from course.lesson.parse_qmd import parse_lesson
from course.site.plan import make_plan
from course.site.select_variant import select_variant
from tests.lesson_cases import each_graded_lesson
from tests.lesson_cases import lesson as discovered_lesson

ROOT = Path(__file__).resolve().parents[2]
RUBRIC = load_rubric(ROOT / "autograder" / "rubrics" / "lesson05.yml")
SPEC = load_checks(ROOT / "lessons" / "lesson05" / "checks.yml")
GRADED = [
    "ex-zero-memory",
    "course-checks",
    "test-formulas",
    "test-fp32-accum",
    "test-comm-volume",
    "test-dp1-cross-check",
    "question-Q1",
    "answer-Q1",
    "question-Q2",
    "answer-Q2",
    "question-Q3",
    "answer-Q3",
]


@pytest.fixture(scope="module")
def lesson():
    """lesson05 as parsed from the repository."""
    return parse_lesson(ROOT / "lessons" / "lesson05.qmd")


def build(lesson, rubric=RUBRIC, view=None):
    """The source notebook of lesson05 for RUBRIC."""
    return source_notebook_node(lesson, view or select_variant(lesson, "student"), SPEC, rubric)


def graded(nb) -> list:
    """The cells carrying nbgrader metadata, in order."""
    return [c for c in nb.cells if "nbgrader" in c.metadata]


def test_graded_cells_follow_the_exercise_and_the_questions_in_lesson_order(lesson):
    nb = build(lesson)
    cells = graded(nb)
    assert [c.metadata.nbgrader["grade_id"] for c in cells] == GRADED
    assert [c.id for c in cells] == GRADED  # the cell id finds a cell again when metadata is stripped
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "ZeRO 的出发点" in text and "## 参考答案" not in text


def test_the_notebook_opens_with_the_title_and_what_to_do_and_the_helpers_collapsed_before_the_first_test(lesson):
    nb = build(lesson)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith(f"# {lesson.title}")
    assert "`______`" in first.source and "course check lesson05.ipynb" in first.source and "Q1、Q2、Q3" in first.source
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].id == "ex-zero-memory" and code[1].id == "course-checks" and code[2].id.startswith("test-")
    assert code[1].metadata["jupyter"] == {"source_hidden": True} and code[1].metadata.nbgrader["locked"]


def test_tests_are_locked_with_hidden_checks_and_answers_are_empty_under_their_question(lesson):
    by_id = {c.id: c for c in build(lesson).cells}
    for item in RUBRIC.code_items:
        meta = by_id[f"test-{item.id}"].metadata.nbgrader
        assert meta["locked"] and meta["grade"] and not meta["solution"] and meta["points"] == item.points
        assert "### BEGIN HIDDEN TESTS" in by_id[f"test-{item.id}"].source
    for q in RUBRIC.questions:
        assert by_id[f"question-{q.id}"].source.startswith(f"### {q.id}\n")
        answer = by_id[f"answer-{q.id}"]
        assert answer.cell_type == "markdown" and answer.source == "" and answer.metadata.nbgrader["points"] == q.points


@each_graded_lesson
def test_the_release_names_its_own_file_in_words_not_by_a_link_that_dies_when_renamed(stem):
    """Students open the assignment in Colab, their own Jupyter or the hub's exchange, where a link to its own file
    leads nowhere."""
    found = discovered_lesson(stem)
    nb = source_notebook_node(
        found,
        select_variant(found, "student"),
        load_checks(ROOT / "lessons" / stem / "checks.yml"),
        load_rubric(ROOT / "autograder" / "rubrics" / f"{stem}.yml"),
    )
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert f"]({assignment_notebook(stem)}" not in text


@each_graded_lesson
def test_every_key_point_a_full_answer_needs_is_asked_for_by_its_question(stem):
    """A question must not grade more than it asks: each 要点 names the words of its question that ask for it."""
    found = discovered_lesson(stem)
    rubric = load_rubric(ROOT / "autograder" / "rubrics" / f"{stem}.yml")
    nb = source_notebook_node(
        found, select_variant(found, "student"), load_checks(ROOT / "lessons" / stem / "checks.yml"), rubric
    )
    prompts = question_prompts(nb.cells)
    assert sorted(prompts) == sorted(q.id for q in rubric.questions)
    for q in rubric.questions:
        assert len(q.asked_by) == len(q.key_points) and all(phrase.strip() for phrase in q.asked_by)
        assert unasked_key_points(q, prompts[q.id]) == [], (q.id, prompts[q.id])


def test_a_question_that_grades_more_than_it_asks_stops_the_build(lesson):
    """The original lesson's Q1 asked only for lesson 2's techniques, yet full marks need lesson 6/8's TP and CP."""
    view = select_variant(lesson, "student")
    asked = "第 2 课的哪些技术、以及第 6、8 课的哪些并行方式与它正交？"
    blocks = tuple(
        Markdown(b.line, b.text.replace(asked, "第 2 课的哪些技术与它正交？")) if isinstance(b, Markdown) else b
        for b in view.blocks
    )
    assert blocks != view.blocks
    line = next(
        n
        for n, s in enumerate((ROOT / "autograder" / "rubrics" / "lesson05.yml").read_text("utf-8").splitlines(), 1)
        if s.strip() == "- asked_by: 第 2 课的哪些技术、以及第 6、8 课的哪些并行方式与它正交"
    )
    with pytest.raises(
        CourseError,
        match=rf"rubrics/lesson05.yml, line {line}: expected each key point's asked_by "
        rf"words in its question as lesson05.qmd prints it .*not found: Q1 key point 3 ",
    ):
        build(lesson, view=view.with_blocks(blocks))


def test_points_come_from_the_rubric(lesson):
    rubric = dataclasses.replace(
        RUBRIC, code_items=tuple(dataclasses.replace(c, points=2.5) for c in RUBRIC.code_items)
    )
    assert {c.metadata.nbgrader["points"] for c in graded(build(lesson, rubric)) if c.id.startswith("test-")} == {2.5}


def test_rubric_items_without_checks_are_an_error(lesson):
    rubric = dataclasses.replace(RUBRIC, code_items=RUBRIC.code_items[:3])
    with pytest.raises(
        CourseError,
        match=r"rubrics/lesson05.yml, line \d+: code_items: expected the ids formulas, "
        r"fp32-accum, comm-volume, dp1-cross-check \(the items of lesson05/checks.yml\)",
    ):
        build(lesson, rubric)


def test_a_question_missing_from_the_lesson_is_an_error(lesson):
    view = select_variant(lesson, "student")
    blocks = tuple(
        Markdown(b.line, b.text.replace("### Q3", "### 问题三")) if isinstance(b, Markdown) else b for b in view.blocks
    )
    with pytest.raises(CourseError, match=r"lesson05.qmd: .*not found once: ### Q3"):
        build(lesson, view=view.with_blocks(blocks))


@pytest.mark.slow
@pytest.mark.every_lesson
def test_lesson5s_source_is_written_when_missing_or_stale_and_left_alone_when_fresh(tmp_path):
    """A project holding lesson 5 alone, whatever other lessons the repository has."""
    from course.workflows.draw_figures import ensure_figures

    ensure_figures(ROOT)
    for folder in ("lessons/lesson05", "solutions", "assets", "autograder/rubrics"):
        shutil.copytree(
            ROOT / folder,
            tmp_path / folder,
            ignore=shutil.ignore_patterns("__pycache__", "lesson0[!5]*", "lesson[!0]*"),
        )
    shutil.copy(ROOT / "lessons" / "lesson05.qmd", tmp_path / "lessons")
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    plan = make_plan(tmp_path)
    target = source_notebook(tmp_path / "autograder", "lesson05")
    assert write_assignment_sources(plan, None) == [target]
    assert (target.parent / "assets" / "figs" / "train_zero_memory.png").exists()
    assert write_assignment_sources(plan, None) == []
    (tmp_path / "autograder" / "checks" / "lesson05.yml").unlink()
    assert write_assignment_sources(plan, None) == [target]  # the course root's copy of the checks is made again
    rubric = tmp_path / "autograder" / "rubrics" / "lesson05.yml"
    rubric.write_text(rubric.read_text("utf-8") + "# changed\n", "utf-8")
    assert write_assignment_sources(plan, None) == [target]
    checks = tmp_path / "lessons" / "lesson05" / "checks.yml"
    checks.write_text(checks.read_text("utf-8").replace("== 38_500_000_000", "== 38_600_000_000", 1), "utf-8")
    with pytest.raises(CourseError, match=r"cell solution-zero-memory: expected the solution to pass every check"):
        write_assignment_sources(plan, None)
    assert source_notebook(tmp_path / "autograder", "lesson05").exists()  # the old source stays whole


@pytest.mark.slow
def test_course_build_regenerates_a_deleted_source_even_with_nothing_else_to_do(built_site, project_root):
    from course.workflows.build_site import build_course

    target = source_notebook(project_root / "autograder", "lesson05")
    shutil.rmtree(target.parent, ignore_errors=True)
    assert build_course(project_root).up_to_date and target.exists()


def test_a_solution_that_fails_a_check_stops_the_build(lesson):
    pair = next(p for p in exercise_pairs(lesson) if p.name == "zero-memory")
    wrong = dataclasses.replace(pair.solution, source=pair.solution.source.replace("3 * num_params", "2 * num_params"))
    with pytest.raises(
        CourseError,
        match=r"lesson05.qmd, line \d+, cell solution-zero-memory: expected the solution to "
        r"pass every check; it does not: comm-volume: ",
    ):
        prove(lesson, {pair.exercise.label: dataclasses.replace(pair, solution=wrong)}, SPEC, RUBRIC)


def test_an_exercise_that_already_passes_a_check_stops_the_build(lesson):
    pair = next(p for p in exercise_pairs(lesson) if p.name == "zero-memory")
    source = pair.exercise.source.replace("return ______", "return 2 * num_params", 1).replace(
        "return ______", "return 3 * num_params"
    )
    given = dataclasses.replace(pair.exercise, source=source)
    with pytest.raises(CourseError, match=r"cell ex-zero-memory: expected the exercise to fail every check"):
        prove(lesson, {pair.exercise.label: dataclasses.replace(pair, exercise=given)}, SPEC, RUBRIC)


def test_a_misconception_the_solution_matches_stops_the_build(lesson):
    pair = next(p for p in exercise_pairs(lesson) if p.name == "zero-memory")
    right = dataclasses.replace(SPEC.misconceptions[0], checks=SPEC.items["formulas"].checks[:1])
    spec = dataclasses.replace(SPEC, misconceptions=(right,))
    with pytest.raises(
        CourseError,
        match=r"lesson05/checks.yml, line \d+: misconceptions/0/when: the reference "
        r"solution matches this known wrong answer \(zero1-shards-grads\)",
    ):
        prove(lesson, {pair.exercise.label: pair}, spec, RUBRIC)


SHARED = Path(__file__).resolve().parent / "fixtures" / "shared_solutions"


def shared_lesson_notebook(tmp_path=None):
    """The source notebook of the fixture lesson whose two exercises share one solutions module."""
    lesson = parse_lesson(SHARED / "lessons" / "lesson98.qmd")
    spec = load_checks(SHARED / "lessons" / "lesson98" / "checks.yml")
    rubric = load_rubric(SHARED / "autograder" / "rubrics" / "lesson98.yml")
    return source_notebook_node(lesson, select_variant(lesson, "student"), spec, rubric), rubric


def test_two_exercises_take_their_solutions_from_one_module():
    nb, _ = shared_lesson_notebook()
    by_id = {c.id: c for c in graded(nb)}
    assert [c.id for c in graded(nb)] == [
        "ex-scale",
        "course-checks",
        "test-scale",
        "ex-rms",
        "test-rms",
        "question-Q1",
        "answer-Q1",
    ]
    assert "return SCALE * x" in by_id["ex-scale"].source and "def rms" not in by_id["ex-scale"].source
    assert "math.sqrt" in by_id["ex-rms"].source and "helper_not_in_any_exercise" not in by_id["ex-rms"].source


def test_a_question_heading_may_carry_a_title():
    nb, _ = shared_lesson_notebook()
    prompt = next(c for c in nb.cells if c.id == "question-Q1")
    assert prompt.source.startswith("### Q1：为什么要开平方？\n\n说明均方根为什么最后要开平方。")


def test_a_heading_of_another_id_is_not_the_question(lesson):
    view = select_variant(lesson, "student")
    blocks = tuple(
        Markdown(b.line, b.text.replace("### Q3", "### Q30：别的题")) if isinstance(b, Markdown) else b
        for b in view.blocks
    )
    with pytest.raises(
        CourseError,
        match=r"not found once: ### Q3 \(a question's heading is its rubric id, alone or "
        r"followed by a title: `### Q1` or `### Q1：…`\)",
    ):
        build(lesson, view=view.with_blocks(blocks))


def test_a_raises_check_reaches_the_test_cell_and_the_reference_passes_it():
    nb, _ = shared_lesson_notebook()
    test = next(c for c in nb.cells if c.id == "test-scale")
    assert "_course.raises('ValueError', lambda: scale(-1))" in test.source


def test_the_test_cell_shows_a_description_only_when_it_is_marked_for_students():
    nb, _ = shared_lesson_notebook()
    by_id = {c.id: c.source for c in nb.cells}
    assert "评分者注意" not in by_id["test-scale"] and by_id["test-scale"].startswith("# 测试 1/2：缩放（2 分）。\n")
    assert by_id["test-rms"].startswith("# 测试 2/2：均方根（1 分）。对平方的平均值开平方。\n")


# ---------------------------------------------------------------- questions and rubric must match (issue 34, 5)


def _edited_lesson(tmp_path, stem, edit):
    """lessons/STEM.qmd with EDIT applied to its text, parsed (with the line numbers of the edited text)."""
    folder = tmp_path / "lessons"
    folder.mkdir(exist_ok=True)
    (tmp_path / "solutions").symlink_to(ROOT / "solutions")  # what the lesson includes
    text = edit((ROOT / "lessons" / f"{stem}.qmd").read_text("utf-8"))
    (folder / f"{stem}.qmd").write_text(text, "utf-8")
    return parse_lesson(folder / f"{stem}.qmd"), text


def _build(found, stem):
    return source_notebook_node(
        found,
        select_variant(found, "student"),
        load_checks(ROOT / "lessons" / stem / "checks.yml"),
        load_rubric(ROOT / "autograder" / "rubrics" / f"{stem}.yml"),
    )


@each_graded_lesson
def test_a_question_without_a_rubric_item_stops_the_build_at_its_heading(tmp_path, stem):
    """`### Q99` added to a lesson built, and students saw a question with no answer cell and no points."""
    rubric = load_rubric(ROOT / "autograder" / "rubrics" / f"{stem}.yml")
    last = rubric.questions[-1].id
    found, text = _edited_lesson(
        tmp_path,
        stem,
        lambda t: re.sub(
            rf"^(#+)([ \t]+{last}\b.*)$",
            lambda m: f"{m[1]}{m[2]}\n\n{m[1]} Q99：新加的一题\n\n说明。",
            t,
            count=1,
            flags=re.M,
        ),
    )
    line = text.splitlines().index(next(s for s in text.splitlines() if s.endswith(" Q99：新加的一题"))) + 1
    with pytest.raises(CourseError, match=rf"^lessons/{stem}\.qmd, line {line}: question Q99 has no rubric item"):
        _build(found, stem)


@each_graded_lesson
def test_a_rubric_item_without_its_question_stops_the_build_at_the_rubric_line(tmp_path, stem):
    rubric = load_rubric(ROOT / "autograder" / "rubrics" / f"{stem}.yml")
    first = rubric.questions[0].id
    found, _ = _edited_lesson(
        tmp_path, stem, lambda t: re.sub(rf"^(#+[ \t]+){first}\b", r"\1Question", t, count=1, flags=re.M)
    )
    rubric_lines = (ROOT / "autograder" / "rubrics" / f"{stem}.yml").read_text("utf-8").splitlines()
    line = next(n for n, s in enumerate(rubric_lines, 1) if re.match(rf"\s*-?\s*id:\s*{first}\s*$", s))
    with pytest.raises(
        CourseError,
        match=rf"^rubrics/{stem}\.yml, line {line}: questions/0/id: rubric question "
        rf"{first} has no question in lessons/{stem}\.qmd",
    ):
        _build(found, stem)
