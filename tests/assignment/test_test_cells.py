"""The notebook's test cells: each check a call of the read-only helpers, run in the student's kernel."""

from __future__ import annotations

import dataclasses

import pytest

from course.assignment import test_cells
from course.grading.checks import parse_check
from course.grading.rubric import CodeItem

ITEM = CodeItem("scale", "缩放", 2, "评分者的说明")
CHECKS = (
    parse_check("scale(3) == 6"),
    parse_check("scale(-1) raises ValueError"),
    parse_check("scale(-2) raises ArithmeticError", hidden=True),
)
RIGHT = (
    "class NegativeScale(ValueError, ArithmeticError):\n    pass\n\n"
    "def scale(x):\n    if x < 0:\n        raise NegativeScale(x)\n    return 2 * x\n"
)


def run_test_cell(student: str) -> dict:
    """Run the helpers, the student's cell and the item's test cell as the kernel does, in one namespace."""
    namespace: dict = {}
    for source in (test_cells.HELPERS_SOURCE, student, test_cells.test_cell_source(ITEM, CHECKS, 1, 1)):
        exec(compile(source, "<cell>", "exec"), namespace)
    return namespace


def test_a_raises_check_becomes_a_helper_call_with_the_exception_by_name():
    source = test_cells.test_cell_source(ITEM, CHECKS, 1, 1)
    assert '_course.raises("ValueError", lambda: scale(-1))' in source.replace("'", '"')
    assert '    _course.raises("ArithmeticError", lambda: scale(-2))' in source.replace("'", '"')


def test_a_function_that_raises_the_exception_or_a_subclass_passes():
    run_test_cell(RIGHT)


@pytest.mark.parametrize(
    "student, message",
    [
        ("def scale(x):\n    return 2 * x\n", "应抛出 ValueError，实际返回 -2"),
        (
            "def scale(x):\n    if x < 0:\n        raise TypeError(x)\n    return 2 * x\n",
            "应抛出 ValueError，实际抛出 TypeError",
        ),
    ],
)
def test_a_function_that_returns_or_raises_something_else_fails_the_test_cell(student, message):
    with pytest.raises(AssertionError, match=message):
        run_test_cell(student)


def test_rebinding_the_exception_name_in_the_notebook_does_not_change_the_check():
    with pytest.raises(AssertionError, match="应抛出 ValueError，实际抛出 KeyError"):
        run_test_cell(
            "ValueError = KeyError\n\ndef scale(x):\n    if x < 0:\n        raise KeyError(x)\n    return 2 * x\n"
        )


def test_a_description_is_graders_text_unless_marked_for_students():
    hidden = test_cells.test_cell_source(ITEM, CHECKS, 1, 1)
    shown = test_cells.test_cell_source(dataclasses.replace(ITEM, for_students=True), CHECKS, 1, 1)
    assert "评分者的说明" not in hidden and hidden.splitlines()[0] == "# 测试 1/1：缩放（2 分）。"
    assert shown.splitlines()[0] == "# 测试 1/1：缩放（2 分）。评分者的说明"


def test_a_title_with_quotes_stays_one_python_string():
    item = CodeItem("q", '"引号"\\ 标题', 1, "d")
    namespace: dict = {}
    source = test_cells.test_cell_source(item, (parse_check("f() == 1"),), 1, 1)
    exec(compile(test_cells.HELPERS_SOURCE + "\ndef f():\n    return 1\n" + source, "<cell>", "exec"), namespace)
