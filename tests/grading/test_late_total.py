"""The late penalty on a lesson's whole total: the configured plugin asked with the total once it is final, at most
that total, provisional while items wait for a grader, split over notebooks as nbgrader keeps it."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pytest
from traitlets.config import Config

from course.grading.late_total import Late, late_plugin, lesson_late, notebook_shares

DUE = dt.datetime(2026, 12, 1, 15, 59)


def course_policy(**policy) -> Config:
    """An nbgrader config naming the course's plugin with POLICY, as autograder/nbgrader_config.py does."""
    from course.nbgrader_hooks.late_penalty import CourseLatePenalty

    config = Config()
    config.AssignLatePenalties.plugin_class = CourseLatePenalty
    for name, value in policy.items():
        config.CourseLatePenalty[name] = value
    return config


def submission(score: float, *, late_by: dt.timedelta, pending: bool = False, max_score: float = 10.0):
    """What lesson_late reads of nbgrader's SubmittedAssignment."""
    return SimpleNamespace(
        student=SimpleNamespace(id="ada"),
        score=score,
        max_score=max_score,
        needs_manual_grade=pending,
        total_seconds_late=max(late_by.total_seconds(), 0),
        duedate=DUE,
        timestamp=DUE + late_by,
        extension=None,
    )


@pytest.mark.parametrize(("score", "penalty"), [(7.0, 3.0), (4.0, 3.0), (2.0, 2.0), (0.0, 0.0)])
def test_the_policy_takes_its_points_off_the_whole_total_and_never_more_than_it(score, penalty):
    plugin = late_plugin(course_policy(points_per_hour=1.0, max_points=3.0))
    late = lesson_late(submission(score, late_by=dt.timedelta(hours=2, minutes=59)), plugin)
    assert (late.penalty, late.taken, late.provisional) == (penalty, penalty, False)


def test_on_time_is_no_penalty():
    plugin = late_plugin(course_policy(points_per_hour=1.0))
    assert lesson_late(submission(7.0, late_by=dt.timedelta(0)), plugin) is None
    assert lesson_late(submission(7.0, late_by=-dt.timedelta(hours=1)), plugin) is None


def test_while_items_wait_for_a_grader_the_penalty_is_provisional_and_not_taken():
    plugin = late_plugin(course_policy(points_per_hour=1.0, max_points=3.0))
    late = lesson_late(submission(1.0, late_by=dt.timedelta(hours=2, minutes=59), pending=True), plugin)
    assert (late.penalty, late.taken, late.provisional) == (3.0, 0.0, True)  # not capped at the code's 1 point
    assert "按迟交规则（1 分每小时）暂定扣 3 分（" in late.reason("1 分每小时")


def test_nbgraders_zero_method_and_a_hubs_plugin_by_name_are_asked_with_the_whole_total():
    config = course_policy(penalty_method="zero")
    assert lesson_late(submission(7.0, late_by=dt.timedelta(minutes=1)), late_plugin(config)).penalty == 7.0
    config.AssignLatePenalties.plugin_class = "nbgrader.plugins.LateSubmissionPlugin"  # a hub's choice, by name
    config.LateSubmissionPlugin.penalty_method = "zero"
    assert lesson_late(submission(6.5, late_by=dt.timedelta(minutes=1)), late_plugin(config)).penalty == 6.5
    assert lesson_late(submission(6.5, late_by=dt.timedelta(minutes=1)), late_plugin(Config())).penalty == 0.0


def test_the_penalty_is_kept_per_notebook_in_name_order_never_above_a_notebooks_score():
    late = Late(60, 3.0, DUE, DUE, None)
    assert notebook_shares(late, {"b": 5.0, "a": 2.0}) == {"a": 2.0, "b": 1.0}
    assert notebook_shares(None, {"a": 2.0}) == {"a": 0.0}
