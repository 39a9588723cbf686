"""Lesson 5's checks.yml: every expected value comes from the lesson's formulas, and the hidden cases catch
what the visible ones cannot."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.grading.load_checks import load_checks
from course.grading.rubric import load_rubric
from tests.lessons.lesson05_formulas import expected, memory

ROOT = Path(__file__).resolve().parents[2]
SPEC = load_checks(ROOT / "lessons" / "lesson05" / "checks.yml")
CHECKS = [c for item in SPEC.items for c in SPEC.checks(item)]
GB = 10**9


@pytest.mark.parametrize("dp,stage,gb", [(8, 1, 38.5), (8, 2, 26.25), (8, 3, 14), (64, 3, 1.75), (1, 1, 112)])
def test_the_formulas_give_the_lessons_7b_table(dp, stage, gb):
    assert memory(7_000_000_000, dp, stage) == gb * GB


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.describe()[:60])
def test_every_expected_value_is_what_the_lessons_formulas_give(check):
    values = [expected(call) for call in check.calls]
    if check.kind == "equals":
        assert values[0] == check.want
    elif check.kind == "difference":
        assert values[0] - values[1] == check.want
    else:
        assert len(set(values)) == 1


@pytest.mark.parametrize("wrong", SPEC.misconceptions, ids=lambda m: m.id)
def test_no_known_wrong_answer_matches_the_formulas(wrong):
    from course.grading.checks import Result

    assert not wrong.holds({call: Result(expected(call)) for check in wrong.checks for call in check.calls})


def test_items_are_the_rubric_code_items_and_vetoes_are_the_rubrics():
    rubric = load_rubric(ROOT / "autograder" / "rubrics" / "lesson05.yml")
    assert list(SPEC.items) == [c.id for c in rubric.code_items]
    assert {m.veto for m in SPEC.misconceptions} - {None} == {"shard-target", "comm-volume"}
    assert {m.veto for m in SPEC.misconceptions} <= {v.id for v in rubric.vetoes} | {None}


def test_every_item_has_visible_and_hidden_checks_on_different_inputs():
    for item in SPEC.items:
        visible = {c for check in SPEC.checks(item, hidden=False) for c in check.calls}
        hidden = {c for check in SPEC.checks(item) if check.hidden for c in check.calls}
        assert visible and hidden and not visible & hidden, item


def test_hidden_cases_cover_psi_not_divisible_by_dp_and_several_k():
    memory_calls = [c for check in CHECKS if check.hidden for c in check.calls if c.func == "zero_memory_per_gpu"]
    assert any(c.args[0] % c.args[1] for c in memory_calls)
    assert len({dict(c.kwargs).get("k", 12) for c in memory_calls}) >= 3


def test_the_misconceptions_of_issue_11_are_declared():
    ids = {m.id for m in SPEC.misconceptions}
    assert {"zero2-shards-params", "comm-volumes-swapped", "comm-in-bf16-bytes", "fp32-accum-missing",
            "fp32-accum-unsharded"} <= ids
