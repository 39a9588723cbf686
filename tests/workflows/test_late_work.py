"""Roster, deadlines and late work end to end: a class list with Chinese names, lesson05 due at a set time under a
declared late policy, a submission two hours late penalised exactly by it (by stock `nbgrader autograde` and by
`course grade`, through the course's LateSubmissionPlugin), the reason in the reports and exports, an extension
that moves one student's due date only; and the penalty taken from the lesson's whole total once graders have
entered Q1–Q3, whatever the code scored, the same in every place that shows a score."""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import pytest

from tests.classes import submit
from tests.workflows.live_course import demo_project, full_marks

pytestmark = [
    pytest.mark.long(55),
    pytest.mark.slow,
    pytest.mark.sandbox,
    pytest.mark.usefixtures("released"),  # made from the project: lesson05's outputs in the cache demo_project copies
]
DUE = dt.datetime(2026, 12, 1, 15, 59)  # UTC: 23:59 in Beijing, as declared below
ROSTER = (
    "id,name,email,lms_user_id\n2026001,张三,zhangsan@example.edu,501\n2026002,李四,lisi@example.edu,502\n"
    "2026003,欧阳娜娜,ouyang@example.edu,503\n"
)


def handed_in(course, student: str, at: dt.datetime, notebook=None) -> None:
    """A submission as `nbgrader collect` leaves it: the notebook (full marks unless given) and the exchange's
    timestamp.txt."""
    notebook = submit(course, student, notebook or full_marks())
    (notebook.parent / "timestamp.txt").write_text(f"{at:%Y-%m-%d %H:%M:%S.%f} UTC\n", "utf-8")


def late_course(tmp_path):
    """The demo project with lesson05 due 2026-12-01 23:59 Beijing time, 1 point per started hour late, at most 3,
    the roster imported and the lesson released; its course root."""
    from course.assignment.make_source import write_assignment_sources
    from course.cli import main
    from course.site.plan import make_plan
    from course.workflows.grade import release

    project = demo_project(tmp_path)
    with open(project / "pyproject.toml", "a", encoding="utf-8") as f:
        f.write("\n[tool.course.due_dates]\nlesson05 = 2026-12-01T23:59:00+08:00\n")
    with open(project / "autograder" / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write(
            "c = get_config()  # noqa: F821\nc.CourseLatePenalty.points_per_hour = 1\n"
            "c.CourseLatePenalty.max_points = 3\n"
        )
    (tmp_path / "roster.csv").write_text(ROSTER, "utf-8")
    assert main(["roster", "import", str(tmp_path / "roster.csv"), "--root", str(project)]) == 0
    write_assignment_sources(make_plan(project), None)
    release(project / "autograder", "lesson05")
    return project / "autograder"


def answered(tmp_path, name: str, *, code_items: int) -> Path:
    """A submission with Q1–Q3 answered (graders score them) whose code earns CODE_ITEMS points: 4 (full marks) or
    1 (only the communication volumes: nothing sharded, so the memory formulas, the FP32 accumulation and the
    cross-check between stages all fail)."""
    import nbformat

    nb = nbformat.read(full_marks(), as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.startswith("answer-"):
            cell.source = f"{grade_id} 的回答：ZeRO 消除的是跨数据并行副本的冗余。"
        elif grade_id == "ex-zero-memory" and code_items == 1:
            cell.source = cell.source.replace(" / dp", "")
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def test_two_hours_late_costs_exactly_the_declared_penalty_and_an_extension_moves_one_due_date(
    tmp_path, gradebook_db, capsys
):
    from course.cli import main
    from course.grading.gradebook import configured_gradebook, gradebook
    from course.grading.report import make_report
    from course.grading.semester import make_semester_report
    from course.workflows.grade import GradeOptions, grade_assignment, run_nbgrader

    course = late_course(tmp_path)
    project = course.parent
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
    assert stock == {
        "2026001": (0.0, DUE, 4.0),
        "2026002": (2.0, DUE, 4.0),
        "2026003": (0.0, DUE + dt.timedelta(hours=3), 4.0),
    }
    with gradebook(url) as gb:  # forget stock autograde's penalties: `course grade` must find them itself
        for sub in gb.find_assignment("lesson05").submissions:
            for nb in sub.notebooks:
                nb.late_submission_penalty = None
        gb.db.commit()
    grade_assignment(course, "lesson05", GradeOptions(force_all=True))
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
        "2026001": (10, "PASS"),
        "2026002": (8, "PASS"),
        "2026003": (10, "PASS"),
    }
    reason = (
        "迟交 2 小时 0 分（截止 2026-12-01 15:59 UTC，提交于 2026-12-01 17:59 UTC）：按迟交规则"
        "（每迟交一小时（不足一小时按一小时计）扣 1 分，最多扣 3 分）扣 2 分"
    )
    assert decided["2026002"].reasons[-1] == reason
    assert reason in report.html.read_text("utf-8")
    with open(report.csv, encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert (rows["2026002"]["total"], rows["2026002"]["late_penalty"], rows["2026002"]["late"]) == ("8", "2", reason)
    assert rows["2026003"]["late_penalty"] == "" and rows["2026001"]["late"] == ""

    run_nbgrader(course, "export")  # nbgrader's own export carries the penalty as its own column
    with open(course / "reports" / "grades.csv", encoding="utf-8") as f:
        exported = {r["student_id"]: r for r in csv.DictReader(f)}
    assert (
        exported["2026002"]["raw_score"],
        exported["2026002"]["late_submission_penalty"],
        exported["2026002"]["score"],
    ) == ("10.0", "2.0", "8.0")
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


def test_the_penalty_comes_off_the_whole_total_the_same_everywhere_and_course_report_follows_changes(
    tmp_path, gradebook_db, capsys
):
    from course.cli import main
    from course.grading.gradebook import configured_gradebook, gradebook
    from course.workflows.grade import grade_assignment, run_nbgrader

    course = late_course(tmp_path)
    project = course.parent
    late = DUE + dt.timedelta(hours=2, minutes=59)  # three started hours: 3 points, the most the policy takes
    handed_in(course, "2026001", late, answered(tmp_path, "a", code_items=1))  # code 1/4, then Q1–Q3 6/6: raw 7
    handed_in(course, "2026002", late, answered(tmp_path, "b", code_items=4))  # code 4/4, then Q1–Q3 0/6: raw 4
    handed_in(course, "2026003", DUE - dt.timedelta(minutes=1), answered(tmp_path, "c", code_items=4))  # on time
    grade_assignment(course, "lesson05")
    url = configured_gradebook(course).url

    def stored() -> dict:
        with gradebook(url) as gb:
            return {
                s.student.id: (s.score, s.late_submission_penalty) for s in gb.find_assignment("lesson05").submissions
            }

    assert stored() == {"2026001": (1.0, 1.0), "2026002": (4.0, 3.0), "2026003": (4.0, 0.0)}  # nbgrader: code only

    def rows(path, key: str) -> dict:
        with open(path, encoding="utf-8") as f:
            return {r[key]: r for r in csv.DictReader(f)}

    # Q1–Q3 not graded yet: the penalty is provisional, and no score is made from the code alone
    assert main(["report", "lesson05", "--root", str(project)]) == 0
    report = rows(course / "reports" / "lesson05.csv", "student")
    assert (report["2026001"]["result"], report["2026001"]["total"], report["2026001"]["late_penalty"]) == (
        "INCOMPLETE",
        "1",
        "3",
    )
    assert "暂定扣 3 分" in report["2026001"]["late"] and "暂定扣 3 分" in report["2026002"]["late"]
    exported = tmp_path / "exported" / "early.csv"
    run_nbgrader(course, "export", "--to", str(exported))
    early = rows(exported, "student_id")
    assert (early["2026001"]["late_submission_penalty"], early["2026001"]["score"]) == ("3.0", "")
    assert "暂定" in early["2026001"]["late"] and early["2026003"]["late"] == ""
    run_nbgrader(course, "generate_feedback", "lesson05", "--force")
    page = (course / "feedback" / "2026001" / "lesson05" / "lesson05.html").read_text("utf-8")
    assert "暂定扣 3 分" in page and "已评部分得分 1.0 / 4.0" in page
    capsys.readouterr()

    with gradebook(url) as gb:  # graders enter Q1–Q3, as formgrader saves them
        for student, points in (("2026001", 2), ("2026002", 0), ("2026003", 2)):
            for q in ("Q1", "Q2", "Q3"):
                grade = gb.find_grade(f"answer-{q}", "lesson05", "lesson05", student)
                grade.manual_score, grade.needs_manual_grade = points, False
        gb.db.commit()
    run_nbgrader(course, "export", "--to", str(exported))  # before any `course report`: the same numbers
    assert {s: r["score"] for s, r in rows(exported, "student_id").items()} == {
        "2026001": "4.0",
        "2026002": "1.0",
        "2026003": "10.0",
    }
    assert not (course / "reports" / "grades.csv").exists()  # --to wins over the course's default file
    run_nbgrader(course, "generate_feedback", "lesson05", "--force")
    for student, score in (("2026001", "4.0"), ("2026002", "1.0"), ("2026003", "10.0")):
        page = (course / "feedback" / student / "lesson05" / "lesson05.html").read_text("utf-8")
        assert f"lesson05 (Score: {score} / 10.0)" in page
        assert ("扣 3 分" in page) == (student != "2026003")

    assert main(["report", "lesson05", "--root", str(project)]) == 0
    out = capsys.readouterr().out
    assert "changed lesson05 2026001: late penalty 1 → 3 in the gradebook (the policy on the whole total)" in out
    assert "2026002: late penalty" not in out and "2026003" not in out  # already right, or on time
    report = rows(course / "reports" / "lesson05.csv", "student")
    assert {s: (r["total"], r["late_penalty"], r["result"]) for s, r in report.items()} == {
        "2026001": ("4", "3", "FAIL"),
        "2026002": ("1", "3", "FAIL"),
        "2026003": ("10", "", "PASS"),
    }
    assert report["2026001"]["late"] == (
        "迟交 2 小时 59 分（截止 2026-12-01 15:59 UTC，提交于 2026-12-01 18:58 UTC）："
        "按迟交规则（每迟交一小时（不足一小时按一小时计）扣 1 分，最多扣 3 分）扣 3 分"
    )
    assert stored() == {"2026001": (7.0, 3.0), "2026002": (4.0, 3.0), "2026003": (10.0, 0.0)}
    assert main(["report", "--root", str(project)]) == 0
    with open(course / "reports" / "canvas.csv", encoding="utf-8") as f:
        canvas = {r[3]: r[5] for r in list(csv.reader(f))[2:]}  # SIS Login ID → lesson05
    assert canvas == {"2026001": "4", "2026002": "1", "2026003": "10"}
    moodle = rows(course / "reports" / "moodle.csv", "username")
    assert {s: r["lesson05"] for s, r in moodle.items()} == {"2026001": "4", "2026002": "1", "2026003": "10"}
    assert moodle["2026001"]["lesson05 feedback"] == report["2026001"]["late"]

    capsys.readouterr()
    assert main(["extend", "lesson05", "2026001", "--hours", "3", "--root", str(project)]) == 0
    assert main(["report", "lesson05", "--root", str(project)]) == 0  # no regrading
    assert "changed lesson05 2026001: late penalty 3 → 0 in the gradebook (not late)" in capsys.readouterr().out
    report = rows(course / "reports" / "lesson05.csv", "student")
    assert (report["2026001"]["total"], report["2026001"]["late_penalty"], report["2026001"]["late"]) == ("7", "", "")
    assert report["2026002"]["total"] == "1"  # the extension is one student's
    assert stored()["2026001"] == (7.0, 0.0)
    run_nbgrader(course, "export", "--to", str(exported))
    assert rows(exported, "student_id")["2026001"]["score"] == "7.0"

    with open(course / "nbgrader_config.py", "a", encoding="utf-8") as f:  # a milder policy, then a later due date
        f.write("c.CourseLatePenalty.max_points = 2\n")
    assert main(["report", "lesson05", "--root", str(project)]) == 0
    assert "changed lesson05 2026002: late penalty 3 → 2 in the gradebook" in capsys.readouterr().out
    assert rows(course / "reports" / "lesson05.csv", "student")["2026002"]["total"] == "2"
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text("utf-8").replace("2026-12-01T23:59", "2026-12-02T23:59"), "utf-8")
    assert main(["report", "--root", str(project)]) == 0  # the semester's report picks it up too
    out = capsys.readouterr().out
    assert "changed lesson05: due date 2026-12-01 15:59 UTC → 2026-12-02 15:59 UTC ([tool.course] due_dates)" in out
    assert "changed lesson05 2026002: late penalty 2 → 0 in the gradebook (not late)" in out
    moodle = rows(course / "reports" / "moodle.csv", "username")
    assert {s: r["lesson05"] for s, r in moodle.items()} == {"2026001": "7", "2026002": "4", "2026003": "10"}
    assert stored() == {"2026001": (7.0, 0.0), "2026002": (4.0, 0.0), "2026003": (10.0, 0.0)}
