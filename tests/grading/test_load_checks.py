"""Bad checks name the file, the line and the key; checks must agree with their lesson and its rubric."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from course.errors import CourseError
from course.grading.load_checks import check_against_lesson, check_against_rubric, load_checks
from course.grading.rubric import load_rubric
from course.lesson.model import CodeCell, Div
from course.lesson.parse_qmd import parse_lesson

ROOT = Path(__file__).resolve().parents[2]
GOOD = """\
version: 1
lesson: lesson07
items:
  add:
    exercise: ex-add
    visible:
      - add(1, 2) == 3
    hidden:
      - add(2, 5) == 7
misconceptions:
  - id: concatenates
    item: add
    name: 拼接而不是相加
    explanation: 数字要相加。
    evidence: add(1, 2) 返回 12
    when:
      - add(1, 2) == 12
"""


def write(tmp_path: Path, text: str) -> Path:
    """checks.yml in a lesson07/ folder."""
    path = tmp_path / "lesson07" / "checks.yml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, "utf-8")
    return path


def test_good_checks_load_with_hidden_cases_and_misconceptions(tmp_path):
    spec = load_checks(write(tmp_path, GOOD))
    assert [c.hidden for c in spec.items["add"].checks] == [False, True]
    assert spec.misconceptions[0].item == "add" and spec.exercises == ["ex-add"]


@pytest.mark.parametrize(
    "old,new,where,message",
    [
        ("      - add(1, 2) == 3", "      - add(1, 2) = 3", 7, "items/add/visible/0: not Python"),
        ("      - add(2, 5) == 7", "      - add(x) == 7", 9, "items/add/hidden/0: expected a literal value, got x"),
        ("    item: add", "    item: sub", 12, "misconceptions/0/item: expected one of the items add, got 'sub'"),
        ("lesson: lesson07", "lesson: lesson08", 2, "lesson: expected 'lesson07' (the lesson's name)"),
        ("    exercise: ex-add\n", "    exercise: ex-add\n    points: 2\n", 6, "items/add: unknown key 'points'"),
        ("    visible:\n      - add(1, 2) == 3\n", "", 5, "items/add: missing key 'visible'"),
        ("    evidence: add(1, 2) 返回 12\n", "", 11, "missing key 'evidence'"),
        (
            "      - add(2, 5) == 7",
            "      - add(2, 5) == {'a': 7}",
            9,
            "a check that holds ': ' (a dict) must be quoted",
        ),
        ("      - add(2, 5) == 7", "      - add(2, 5) == 7: 1", 9, "a check that holds ': ' (a dict) must be quoted"),
        (
            "      - add(2, 5) == 7",
            "      - add(2, 5) raises Valueerror",
            9,
            "items/add/hidden/0: expected a built-in exception such as ValueError after `raises`, got Valueerror",
        ),
    ],
)
def test_bad_checks_name_file_line_and_key(tmp_path, old, new, where, message):
    assert old in GOOD
    with pytest.raises(CourseError) as err:
        load_checks(write(tmp_path, GOOD.replace(old, new)))
    assert str(err.value).startswith(f"lesson07/checks.yml, line {where}: ") and message in str(err.value)


def test_only_a_check_read_as_a_mapping_is_told_to_quote_it(tmp_path):
    """The advice follows the error's kind (a schema's 'string' given a mapping), not its wording."""
    from course.errors import SchemaMismatch

    with pytest.raises(SchemaMismatch) as err:
        load_checks(write(tmp_path, GOOD.replace("    exercise: ex-add\n", "    exercise: ex-add\n    points: 2\n")))
    assert "unknown key 'points'" in str(err.value) and "must be quoted" not in str(err.value)
    assert err.value.rule == "additionalProperties" and err.value.found["points"] == 2


@pytest.fixture(scope="module")
def lesson05():
    """Lesson 5 and its checks as committed."""
    return parse_lesson(ROOT / "lessons" / "lesson05.qmd"), load_checks(ROOT / "lessons" / "lesson05" / "checks.yml")


def test_a_check_calling_a_function_the_exercise_does_not_define_is_named(lesson05, tmp_path):
    lesson, _ = lesson05
    text = (ROOT / "lessons" / "lesson05" / "checks.yml").read_text("utf-8")
    path = tmp_path / "lesson05" / "checks.yml"
    path.parent.mkdir()
    path.write_text(
        text.replace("zero_communication_volume(7_000_000_000, 1) == 14", "zero_comm(7_000_000_000, 1) == 14", 1),
        "utf-8",
    )
    line = next(i for i, ln in enumerate(path.read_text("utf-8").splitlines(), 1) if "zero_comm(" in ln)
    with pytest.raises(CourseError) as err:
        check_against_lesson(load_checks(path), lesson)
    assert str(err.value) == (
        f"lesson05/checks.yml, line {line}: items/comm-volume/visible/0: calls zero_comm(), which "
        f"the exercise ex-zero-memory does not define; expected one of "
        f"make_table, zero_communication_volume, zero_memory_per_gpu"
    )


def test_a_misconception_pointing_to_a_heading_the_lesson_lacks_is_named(lesson05, tmp_path):
    lesson, spec = lesson05
    assert spec.misconceptions[0].section == "2. ZeRO 阶段 1、2、3 的显存拆解与数学推导"
    text = (ROOT / "lessons" / "lesson05" / "checks.yml").read_text("utf-8")
    path = tmp_path / "lesson05" / "checks.yml"
    path.parent.mkdir()
    path.write_text(text.replace("section: 2. ZeRO 阶段", "section: 9. ZeRO 阶段", 1), "utf-8")
    line = next(i for i, ln in enumerate(path.read_text("utf-8").splitlines(), 1) if "9. ZeRO 阶段" in ln)
    with pytest.raises(
        CourseError,
        match=rf"lesson05/checks.yml, line {line}: misconceptions/0/section: expected "
        r"the text of a heading of lesson05.qmd \(without the #s\), got "
        r"'9. ZeRO 阶段 1、2、3 的显存拆解与数学推导'; its headings include 本课目标",
    ):
        check_against_lesson(load_checks(path), lesson)


def test_an_exercise_without_its_solution_is_named(lesson05):
    lesson, spec = lesson05

    def without(blocks):
        return tuple(
            dataclasses.replace(b, children=without(b.children)) if isinstance(b, Div) else b
            for b in blocks
            if not (isinstance(b, CodeCell) and b.label == "solution-zero-memory")
        )

    bare = lesson.with_blocks(without(lesson.blocks))
    with pytest.raises(
        CourseError,
        match=r"lesson05/checks.yml, line 10: items/formulas/exercise: lesson05.qmd has "
        r"the exercise but no solution cell solution-zero-memory",
    ):
        check_against_lesson(spec, bare)


def test_rubric_code_items_that_are_not_the_checks_items_are_named(lesson05):
    _, spec = lesson05
    rubric = load_rubric(ROOT / "autograder" / "rubrics" / "lesson05.yml")
    with pytest.raises(
        CourseError,
        match=r"rubrics/lesson05.yml, line 8: code_items: expected the ids formulas, "
        r"fp32-accum, comm-volume, dp1-cross-check \(the items of "
        r"lesson05/checks.yml\), got formulas",
    ):
        check_against_rubric(spec, dataclasses.replace(rubric, code_items=rubric.code_items[:1]))


def test_a_misconception_naming_an_unknown_veto_is_named(lesson05):
    _, spec = lesson05
    rubric = load_rubric(ROOT / "autograder" / "rubrics" / "lesson05.yml")
    with pytest.raises(
        CourseError,
        match=r"lesson05/checks.yml, line \d+: misconceptions/0/veto: expected a veto id "
        r"of rubrics/lesson05.yml \(activation-shard, comm-volume, unbounded-scaling\), got .shard-target.",
    ):
        check_against_rubric(spec, dataclasses.replace(rubric, vetoes=rubric.vetoes[1:]))


def test_the_course_root_keeps_the_checks_its_source_notebook_was_made_with(released, tmp_path):
    from course.grading.load_checks import checks_for_course

    alone = tmp_path / "grading-server" / "autograder"
    shutil.copytree(released, alone)  # the nbgrader course root without the project around it
    assert (alone / "checks" / "lesson05.yml").read_text("utf-8") == (
        ROOT / "lessons" / "lesson05" / "checks.yml"
    ).read_text("utf-8")
    assert "shard-target" in {m.veto for m in checks_for_course(alone, "lesson05").misconceptions}
    assert list((alone / "release").rglob("*.yml")) == []  # hidden values never reach students
    with pytest.raises(CourseError, match="no checks for lesson09: expected checks/lesson09.yml in the course root"):
        checks_for_course(alone, "lesson09")


def test_a_batch_parses_the_checks_once_and_a_changed_file_again(released, tmp_path, monkeypatch):
    import course.grading.load_checks as module

    root = tmp_path / "autograder"
    shutil.copytree(released, root)
    parsed = []
    real = module.load_checks
    monkeypatch.setattr(module, "load_checks", lambda path, **kw: parsed.append(path) or real(path, **kw))
    first = module.checks_for_course(root, "lesson05")
    assert module.checks_for_course(root, "lesson05") is first and len(parsed) == 1
    copy = root / "checks" / "lesson05.yml"
    copy.write_text(copy.read_text("utf-8") + "\n", "utf-8")  # the same checks, but a new version of the file
    assert module.checks_for_course(root, "lesson05") == first and len(parsed) == 2
