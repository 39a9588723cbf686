"""Due dates from [tool.course] and the late policy's arithmetic: what nbgrader's late-submission plugin is given."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest

from course.errors import CourseError
from course.grading.deadlines import due_dates
from course.grading.late_policy import LatePolicy
from tests.assignment.make_submissions import ROOT


def project(tmp_path, table: str):
    shutil.copytree(ROOT / "lessons", tmp_path / "lessons")
    (tmp_path / "pyproject.toml").write_text(f"[project]\nname = 'x'\n\n[tool.course.due_dates]\n{table}\n", "utf-8")
    return tmp_path


def test_a_due_date_with_its_offset_becomes_nbgraders_naive_utc(tmp_path):
    root = project(tmp_path, "lesson05 = 2026-12-01T23:59:00+08:00")
    assert due_dates(root) == {"lesson05": dt.datetime(2026, 12, 1, 15, 59)}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("lesson05 = 2026-12-01T23:59:00", "expected a date-time with its UTC offset"),  # which zone? nobody knows
        ("lesson05 = 2026-12-01", "expected a date-time with its UTC offset"),
        ("lesson5 = 2026-12-01T23:59:00+08:00", "expected a lesson of this course (lesson05"),  # lessonNN, two digits
    ],
)
def test_a_bad_due_date_names_its_line(tmp_path, value, message):
    root = project(tmp_path, value)
    with pytest.raises(CourseError) as exc:
        due_dates(root)
    assert "pyproject.toml, line 5" in str(exc.value) and message in str(exc.value)


@pytest.mark.parametrize(
    ("seconds", "points"), [(0, 0), (1, 1), (3600, 1), (3601, 2), (7200, 2), (2 * 3600 + 59, 3), (10 * 3600, 3)]
)
def test_each_started_hour_costs_its_points_up_to_the_cap(seconds, points):
    assert LatePolicy(points_per_hour=1, max_points=3).penalty(seconds) == points


def test_the_grace_period_costs_nothing_and_later_hours_count_from_the_due_date():
    policy = LatePolicy(points_per_hour=0.5, grace_minutes=10)
    assert (policy.penalty(600), policy.penalty(601), policy.penalty(3 * 3600)) == (0, 0.5, 1.5)
    assert policy.describe() == "每迟交一小时（不足一小时按一小时计）扣 0.5 分；截止后 10 分钟内不算迟交"
    assert LatePolicy().penalty(10 * 3600) == 0 and LatePolicy().describe() == "迟交不扣分"  # nbgrader's default


def test_the_reports_name_the_policy_the_config_declares():
    from traitlets.config import Config

    from course.grading.late_policy import policy_in_words

    config = Config()
    config.CourseLatePenalty.points_per_hour = 1.0
    assert policy_in_words(config) == "每迟交一小时（不足一小时按一小时计）扣 1 分"
    config.CourseLatePenalty.penalty_method = "zero"
    assert policy_in_words(config) == "迟交记 0 分（nbgrader 的 penalty_method 'zero'）"
    config.AssignLatePenalties.plugin_class = "university.plugins.LatePolicy"  # a hub's own plugin
    assert policy_in_words(config) == "nbgrader 迟交插件 university.plugins.LatePolicy 的规则"


def test_the_plugin_takes_the_policy_from_nbgraders_config():
    from traitlets.config import Config

    from course.nbgrader_hooks.late_penalty import CourseLatePenalty

    config = Config()
    config.CourseLatePenalty.points_per_hour = 2.0
    plugin = CourseLatePenalty(config=config)
    assert plugin.late_submission_penalty("ada", 4.0, 5400) == 4.0  # two started hours
    config.CourseLatePenalty.penalty_method = "zero"  # nbgrader's own method still works
    assert CourseLatePenalty(config=config).late_submission_penalty("ada", 3.5, 60) == 3.5
