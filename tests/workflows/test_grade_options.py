"""`course grade`'s options as one typed value: who is graded again, the sandbox settings of the run, the workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.errors import CourseError
from course.sandbox.limits import Limits
from course.workflows.grade import GradeOptions

CLASS = ["s-extra", "s-one", "s-two"]
WHERE = Path("/course/autograder/submitted")


def test_a_student_named_without_a_submission_stops_the_run_with_the_nearest_name():
    with pytest.raises(CourseError) as caught:
        GradeOptions(force_students=("s-extr", "zz")).forced(CLASS, WHERE)
    assert str(caught.value) == (
        "submitted: --force names students without a submission: s-extr, zz (did you mean s-extra?)"
    )


def test_force_all_regrades_everyone_who_handed_in_and_names_regrade_only_them():
    assert GradeOptions(force_all=True).forced(CLASS, WHERE) == frozenset(CLASS)
    assert GradeOptions(force_students=["s-one"]).forced(CLASS, WHERE) == {"s-one"}
    assert GradeOptions().forced(CLASS, WHERE) == frozenset()


@pytest.mark.parametrize(
    "options,message",
    [
        ({"force_all": True, "force_students": ("s-one",)}, "--force grades everyone again or the students named"),
        ({"jobs": 0}, "--jobs must be at least 1, got 0"),
    ],
)
def test_contradictory_or_impossible_options_are_refused_when_made(options, message):
    with pytest.raises(CourseError, match=message):
        GradeOptions(**options)


def test_the_settings_given_win_over_the_limits_and_unsafe_shorthands():
    limits = Limits(cell_timeout_s=7)
    overrides = GradeOptions(limits=limits, unsafe=True, settings={"cell_timeout_s": 9}).overrides()
    assert overrides["cell_timeout_s"] == 9 and overrides["unsafe"] is True
    assert overrides["memory_bytes"] == limits.memory_bytes
    assert GradeOptions().overrides() == {}


def test_the_options_cannot_change_once_made():
    settings = {"engine": "shell"}
    options = GradeOptions(settings=settings)
    settings["engine"] = "kernel"
    assert options.settings["engine"] == "shell"
    with pytest.raises(TypeError):
        options.settings["engine"] = "kernel"
    with pytest.raises(AttributeError):
        options.force_all = True
