"""Lesson 5's checks.yml: every expected value comes from the lesson's formulas, and the hidden cases catch
what the visible ones cannot."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from course.grading.checks import Result
from course.grading.load_checks import load_checks
from course.grading.rubric import load_rubric
from course.lab.formulas import SHARDED
from tests.lesson_content.lesson05_formulas import expected, memory

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
    assert {
        "zero2-shards-params",
        "comm-volumes-swapped",
        "comm-in-bf16-bytes",
        "fp32-accum-missing",
        "fp32-accum-unsharded",
    } <= ids


def _memory_sharding(shards: dict[int, tuple[bool, bool, bool]]):
    """zero_memory_per_gpu as a student would write it if stage s sharded (parameters, gradients, optimizer) =
    shards[s]."""

    def zero_memory_per_gpu(psi, dp, stage, k=12, fp32_grad_accum=False):
        sizes = (2 * psi, 2 * psi, k * psi)
        return sum(Fraction(size, dp if sharded else 1) for size, sharded in zip(sizes, shards[stage]))

    return zero_memory_per_gpu


def _failures(item: str, fn, *, hidden: bool = True) -> list[str]:
    """The checks of ITEM that FN fails."""
    return [
        check.describe()
        for check in SPEC.checks(item, hidden=hidden)
        if check.failure({call: Result(fn(*call.args, **dict(call.kwargs))) for call in check.calls})
    ]


# Every way to get one of ZeRO-1/2/3 wrong by sharding one component too many or too few.
WRONG_STAGES = [(stage, part) for stage in (1, 2, 3) for part in range(3)]


@pytest.mark.parametrize("stage,part", WRONG_STAGES, ids=lambda v: str(v))
def test_the_cross_check_fails_a_stage_that_shards_the_wrong_components(stage, part):
    """dp = 1 alone passes any formula (every stage is 16Ψ there); the differences at dp > 1 catch each slip."""
    flipped = list(SHARDED[stage])
    flipped[part] = not flipped[part]
    wrong = _memory_sharding({**SHARDED, stage: tuple(flipped)})
    dp1_only = [check for check in SPEC.checks("dp1-cross-check") if all(call.args[1] == 1 for call in check.calls)]
    assert dp1_only and all(
        check.failure({c: Result(wrong(*c.args, **dict(c.kwargs))) for c in check.calls}) is None for check in dp1_only
    )
    assert _failures("dp1-cross-check", wrong, hidden=False), (stage, part)  # the visible checks already see it


def test_the_cross_check_passes_the_lessons_formulas_and_leaves_inexact_division_to_the_formulas_item():
    right = _memory_sharding(SHARDED)

    def floor_division(psi, dp, stage, k=12, fp32_grad_accum=False):
        sizes = (2 * psi, 2 * psi, k * psi)
        return sum(size // dp if sharded else size for size, sharded in zip(sizes, SHARDED[stage]))

    assert _failures("dp1-cross-check", right) == []
    assert _failures("dp1-cross-check", floor_division) == [] and _failures("formulas", floor_division)
