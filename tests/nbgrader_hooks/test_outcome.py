"""The grade report is derived from the per-student records: damaging it by hand loses no one's outcome."""

from __future__ import annotations

import json

import pytest

from course.errors import CourseError
from course.grading.recheck import ItemVerdict
from course.nbgrader_hooks.outcome import StudentGrade, grade_report_path, record_path, save_outcome


def _grade(student: str, passed: bool) -> StudentGrade:
    """An outcome with one re-checked item."""
    return StudentGrade(student, {"ex-1": ItemVerdict(passed, "checked out of process")}, problems=["late"])


def test_each_save_keeps_the_other_students(tmp_path):
    save_outcome(tmp_path, "lesson05", _grade("zhangsan", True))
    save_outcome(tmp_path, "lesson05", _grade("lisi", False))
    report = json.loads(grade_report_path(tmp_path, "lesson05").read_text("utf-8"))
    assert sorted(report) == ["lisi", "zhangsan"]
    assert report["zhangsan"]["verdicts"]["ex-1"]["passed"] is True


@pytest.mark.parametrize("damage", [b"{not json", b"\xff\xfe", b"[1, 2]"])
def test_a_damaged_report_is_rebuilt_from_the_records(tmp_path, damage):
    save_outcome(tmp_path, "lesson05", _grade("zhangsan", True))
    grade_report_path(tmp_path, "lesson05").write_bytes(damage)
    save_outcome(tmp_path, "lesson05", _grade("lisi", False))
    report = json.loads(grade_report_path(tmp_path, "lesson05").read_text("utf-8"))
    assert sorted(report) == ["lisi", "zhangsan"]
    assert report["zhangsan"]["problems"] == ["late"] and report["lisi"]["verdicts"]["ex-1"]["passed"] is False


def test_a_damaged_record_is_named_when_it_is_needed(tmp_path):
    save_outcome(tmp_path, "lesson05", _grade("zhangsan", True))
    record_path(tmp_path, "lesson05", "zhangsan").write_text("{", "utf-8")
    grade_report_path(tmp_path, "lesson05").write_text("{", "utf-8")
    with pytest.raises(CourseError, match=r"records/zhangsan\.json: grading record cannot be read .*--force"):
        save_outcome(tmp_path, "lesson05", _grade("lisi", False))


def test_students_who_left_leave_the_report(tmp_path):
    for student in ("zhangsan", "lisi", "wangwu"):
        save_outcome(tmp_path, "lesson05", _grade(student, True))
    save_outcome(tmp_path, "lesson05", _grade("lisi", False), current={"lisi", "wangwu"})
    report = json.loads(grade_report_path(tmp_path, "lesson05").read_text("utf-8"))
    assert sorted(report) == ["lisi", "wangwu"] and report["lisi"]["verdicts"]["ex-1"]["passed"] is False
