"""Roster, deadlines and late work end to end: a class list with Chinese names, lesson05 due at a set time under a
declared late policy, a submission two hours late penalised exactly by it (by stock `nbgrader autograde` and by
`course grade`, through the course's LateSubmissionPlugin), the reason in the reports and exports, an extension
that moves one student's due date only."""

from __future__ import annotations

import csv
import datetime as dt

import pytest

from tests.conftest import submit
from tests.workflows.live_course import demo_project, full_marks

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]
DUE = dt.datetime(2026, 12, 1, 15, 59)  # UTC: 23:59 in Beijing, as declared below
ROSTER = "id,name,email,lms_user_id\n2026001,张三,zhangsan@example.edu,501\n2026002,李四,lisi@example.edu,502\n" \
         "2026003,欧阳娜娜,ouyang@example.edu,503\n"


def handed_in(course, student: str, at: dt.datetime) -> None:
    """A submission as `nbgrader collect` leaves it: the notebook and the exchange's timestamp.txt."""
    notebook = submit(course, student, full_marks())
    (notebook.parent / "timestamp.txt").write_text(f"{at:%Y-%m-%d %H:%M:%S.%f} UTC\n", "utf-8")


def test_two_hours_late_costs_exactly_the_declared_penalty_and_an_extension_moves_one_due_date(
        tmp_path, gradebook_db, capsys):
    from course.assignment.make_source import write_assignment_sources
    from course.cli import main
    from course.grading.gradebook import configured_gradebook, gradebook
    from course.grading.report import make_report
    from course.grading.semester import make_semester_report
    from course.site.plan import make_plan
    from course.workflows.grade import grade_assignment, release, run_nbgrader

    project = demo_project(tmp_path)
    with open(project / "pyproject.toml", "a", encoding="utf-8") as f:
        f.write("\n[tool.course.due_dates]\nlesson05 = 2026-12-01T23:59:00+08:00\n")
    with open(project / "autograder" / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write("c = get_config()  # noqa: F821\nc.CourseLatePenalty.points_per_hour = 1\n"
                "c.CourseLatePenalty.max_points = 3\n")
    course = project / "autograder"
    (tmp_path / "roster.csv").write_text(ROSTER, "utf-8")
    assert main(["roster", "import", str(tmp_path / "roster.csv"), "--root", str(project)]) == 0
    write_assignment_sources(make_plan(project), None)
    release(course, "lesson05")
    url = configured_gradebook(course).url
    with gradebook(url) as gb:
        assert gb.find_assignment("lesson05").duedate == DUE  # nbgrader's own duedate: stock commands see it
    assert main(["extend", "lesson05", "2026003", "--hours", "3", "--root", str(project)]) == 0
    assert "2026003 on lesson05: extension 3:00:00; due 2026-12-01 18:59 UTC" in capsys.readouterr().out
    handed_in(course, "2026001", DUE - dt.timedelta(minutes=5))
    handed_in(course, "2026002", DUE + dt.timedelta(hours=2))  # two hours late
    handed_in(course, "2026003", DUE + dt.timedelta(hours=2))  # as late, but within their extension

    def penalties() -> dict:
        with gradebook(url) as gb:
            subs = gb.find_assignment("lesson05").submissions
            return {s.student.id: (s.late_submission_penalty, s.duedate, s.score) for s in subs}

    run_nbgrader(course, "autograde", "lesson05")  # stock nbgrader, with the course's config
    stock = penalties()
    assert stock == {"2026001": (0.0, DUE, 4.0), "2026002": (2.0, DUE, 4.0),
                     "2026003": (0.0, DUE + dt.timedelta(hours=3), 4.0)}
    with gradebook(url) as gb:  # forget stock autograde's penalties: `course grade` must find them itself
        for sub in gb.find_assignment("lesson05").submissions:
            for nb in sub.notebooks:
                nb.late_submission_penalty = None
        gb.db.commit()
    grade_assignment(course, "lesson05", force=True)
    assert penalties() == stock  # `course grade` applies the same plugin
    with gradebook(url) as gb:
        assert gb.find_assignment("lesson05").duedate == DUE  # the extension moved 2026003's date only
        for student in ("2026001", "2026002", "2026003"):
            for q in ("Q1", "Q2", "Q3"):
                grade = gb.find_grade(f"answer-{q}", "lesson05", "lesson05", student)
                grade.manual_score, grade.needs_manual_grade = 2, False
        gb.db.commit()

    report = make_report(project, "lesson05")
    decided = {s.submission.student: s for s in report.students}
    assert {s: (r.submission.total, r.result) for s, r in decided.items()} == {
        "2026001": (10, "PASS"), "2026002": (8, "PASS"), "2026003": (10, "PASS")}
    reason = ("迟交 2 小时 0 分（截止 2026-12-01 15:59 UTC，提交于 2026-12-01 17:59 UTC）：按迟交规则"
              "（每迟交一小时（不足一小时按一小时计）扣 1 分，最多扣 3 分）扣 2 分")
    assert decided["2026002"].reasons[-1] == reason
    assert reason in report.html.read_text("utf-8")
    with open(report.csv, encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert (rows["2026002"]["total"], rows["2026002"]["late_penalty"], rows["2026002"]["late"]) == ("8", "2", reason)
    assert rows["2026003"]["late_penalty"] == "" and rows["2026001"]["late"] == ""

    run_nbgrader(course, "export")  # nbgrader's own export carries the penalty as its own column
    with open(course / "reports" / "grades.csv", encoding="utf-8") as f:
        exported = {r["student_id"]: r for r in csv.DictReader(f)}
    assert (exported["2026002"]["raw_score"], exported["2026002"]["late_submission_penalty"],
            exported["2026002"]["score"]) == ("10.0", "2.0", "8.0")
    semester = make_semester_report(project)
    with open(semester.csv, encoding="utf-8") as f:
        flags = {r["student"]: r["lesson05_flags"] for r in csv.DictReader(f)}
    assert flags["2026002"] == reason and flags["2026003"] == ""
    with open(semester.canvas, encoding="utf-8") as f:
        canvas = {r[0]: r for r in list(csv.reader(f))[2:]}
    assert canvas["李四"][1] == "502" and canvas["李四"][5] == "8"  # the roster's name and LMS id, the penalised points
    assert canvas["欧阳娜娜"][5] == "10"
    with open(semester.moodle, encoding="utf-8") as f:
        moodle = {r["username"]: r for r in csv.DictReader(f)}
    assert (moodle["2026002"]["lesson05"], moodle["2026002"]["lesson05 feedback"]) == ("8", reason)
    assert moodle["2026001"]["lesson05 feedback"] == ""  # Moodle's import maps the column to lesson05's feedback
