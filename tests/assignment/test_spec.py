"""Lesson 5's checks: the lesson's own numbers, hidden cases that catch what visible ones cannot, exact verdicts."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from course.assignment.lesson05 import HIDDEN_CASES, SPEC, communication, memory
from course.assignment.spec import Call, Check, Result, literal
from course.grading.rubric import load_rubric

ROOT = Path(__file__).resolve().parents[2]

GB = 10**9


@pytest.mark.parametrize("dp,stage,gb", [(8, 1, "38.5"), (8, 2, "26.25"), (8, 3, "14"), (64, 1, "29.3125"),
                                         (64, 2, "15.53125"), (64, 3, "1.75"), (1, 1, "112"), (1, 3, "112")])
def test_reference_formulas_give_the_lessons_7b_table(dp, stage, gb):
    assert memory(7_000_000_000, dp, stage) == Fraction(gb) * GB


def test_fp32_accumulation_adds_4_psi_or_4_psi_over_dp():
    assert [memory(10, 5, s, accum=True) - memory(10, 5, s) for s in range(4)] == [40, 40, 8, 8]


def test_communication_is_2_psi_then_3_psi():
    assert [communication(1000, s) for s in range(4)] == [2000, 2000, 2000, 3000]


def test_items_are_the_rubric_code_items():
    rubric = load_rubric(ROOT / "autograder" / "rubrics" / "lesson05.yml")
    assert list(SPEC.items) == [c.id for c in rubric.code_items]


def test_every_item_has_visible_and_hidden_checks_on_different_inputs():
    for item, checks in SPEC.items.items():
        visible = {c for check in checks if not check.hidden for c in check.calls}
        hidden = {c for check in checks if check.hidden for c in check.calls}
        assert visible and hidden and not visible & hidden, item


def test_hidden_cases_cover_psi_not_divisible_by_dp_and_several_k():
    assert any(psi % dp for psi, dp, _ in HIDDEN_CASES)
    assert len({k for _, _, k in HIDDEN_CASES}) >= 3


CALL_A, CALL_B = Call("f", (1,)), Call("f", (2,))


@pytest.mark.parametrize("check,results,passes", [
    (Check("equals", (CALL_A,), Fraction(20, 3)), {CALL_A: Result(6.666666666666667)}, True),
    (Check("equals", (CALL_A,), Fraction(20, 3)), {CALL_A: Result(6)}, False),
    (Check("equals", (CALL_A,), Fraction(1)), {CALL_A: Result(float("nan"))}, False),
    (Check("equals", (CALL_A,), Fraction(1)), {CALL_A: Result(problem="returned _Anything, not int or float")}, False),
    (Check("difference", (CALL_A, CALL_B), Fraction(4)), {CALL_A: Result(10.0), CALL_B: Result(6)}, True),
    (Check("same", (CALL_A, CALL_B)), {CALL_A: Result(3.0), CALL_B: Result(3)}, True),
    (Check("same", (CALL_A, CALL_B)), {CALL_A: Result(3.0), CALL_B: Result(3.1)}, False),
])
def test_check_verdicts(check, results, passes):
    assert (check.failure(results) is None) == passes


def test_calls_are_written_as_students_would_type_them():
    call = Call("zero_memory_per_gpu", (7_000_000_000, 8, 2), (("k", 16), ("fp32_grad_accum", True)))
    assert call.code() == "zero_memory_per_gpu(7_000_000_000, 8, 2, k=16, fp32_grad_accum=True)"
    assert literal(Fraction(7, 2)) == "3.5" and literal(Fraction(12)) == "12"
