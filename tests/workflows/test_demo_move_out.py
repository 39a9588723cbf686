"""`course demo --move-out`: demo students an older `make` graded in the real course leave it; nothing else does."""

from __future__ import annotations

import csv

import pytest

from tests.workflows.live_course import demo_project, full_marks, grade_class, student_state

pytestmark = [
    pytest.mark.slow,
    pytest.mark.sandbox,
    pytest.mark.usefixtures("released"),  # made from the project: lesson05's outputs in the cache demo_project copies
]
DEMO_CLASS = ["lisi", "wangwu", "zhangsan", "zhaoliu"]


def test_a_course_without_a_gradebook_has_nothing_to_move_out(tmp_path, capsys):
    from course.cli import main

    project = demo_project(tmp_path)
    assert main(["demo", "--move-out", "--root", str(project)]) == 0
    assert "course demo: autograder/ has no gradebook yet: nothing to move out" in capsys.readouterr().out
    assert not (project / "autograder" / "gradebook.db").exists()  # never made one


def test_a_gradebook_that_cannot_be_read_stops_it(tmp_path):
    from course.errors import CourseError
    from course.workflows.demo_move_out import move_out

    project = demo_project(tmp_path)
    (project / "autograder" / "gradebook.db").write_text("not a database\n" * 100, "utf-8")
    with pytest.raises(CourseError, match=r"cannot read the gradebook: "):
        move_out(project)


def test_the_demo_students_move_out_and_every_real_grade_comment_and_veto_stays(tmp_path, gradebook_db, capsys):
    from course.cli import main
    from course.grading.gradebook import configured_gradebook, gradebook
    from course.grading.report import make_report, record_veto
    from course.grading.semester import make_semester_report
    from course.workflows.demo_move_out import move_out

    project = demo_project(tmp_path)
    demo = project / "demo" / "classes" / "lesson05"
    # the course as `make` left it before the demo had its own: the demo class graded beside the real students
    notebooks = {s: demo / s / "lesson05.ipynb" for s in DEMO_CLASS} | {
        "2026001": full_marks(),
        "2026002": full_marks(),
    }
    points = {"Q1": 2, "Q2": 1.5, "Q3": 2}
    course = grade_class(project, notebooks, {s: points for s in notebooks})
    url = configured_gradebook(course).url
    with gradebook(url) as gb:  # lisi is also a real student's id: the roster gave them a name
        gb.update_or_create_student("lisi", first_name="四", last_name="李", email="lisi@example.edu")
    note = "学生写道激活也被分片"
    record_veto(project, "lesson05", student="wangwu", question="Q1", veto="activation-shard", note="demo veto")
    record_veto(project, "lesson05", student="2026001", question="Q1", veto="activation-shard", note=note)
    record_veto(project, "lesson05", student="zhangsan", question="Q1", veto="activation-shard", note="demo veto")
    vetoes = course / "vetoes" / "lesson05.yml"
    header = [line for line in vetoes.read_text("utf-8").splitlines() if line.startswith("#")]
    kept = {s: student_state(url, s) for s in ("2026001", "2026002", "lisi")}
    from course.workflows.demo_cycle import left_alone

    assert (
        "autograder/'s gradebook holds demo students from an older `make` (wangwu, zhangsan, zhaoliu): "
        "`course demo --move-out` moves them out, nothing else"
    ) in left_alone(course, project / "demo")

    assert main(["demo", "--move-out", "--root", str(project)]) == 0
    out = capsys.readouterr().out
    assert "moved out of autograder/: wangwu, zhangsan, zhaoliu" in out and "2 veto record(s)" in out
    assert "kept lisi: a demo id, but the roster gave them a name, email or LMS id" in out
    with gradebook(url) as gb:
        assert sorted(s.id for s in gb.students) == ["2026001", "2026002", "lisi"]
    assert {s: student_state(url, s) for s in kept} == kept  # grades, comments, flags, names: as they were
    text = vetoes.read_text("utf-8")
    assert note in text and "demo veto" not in text
    assert [line for line in text.splitlines() if line.startswith("#")] == header  # the file's comments stay
    moved = project / "demo" / "moved-out"
    assert (moved / "vetoes" / "lesson05.yml").read_text("utf-8").count("demo veto") == 2
    for student in ("wangwu", "zhangsan", "zhaoliu"):
        assert not (course / "submitted" / student).exists() and not (course / "autograded" / student).exists()
        assert (moved / "submitted" / student / "lesson05" / "lesson05.ipynb").is_file()
    report = make_report(project, "lesson05")
    assert [s.submission.student for s in report.students] == ["2026001", "2026002", "lisi"]
    assert {s.submission.student: s.result for s in report.students}["2026001"] == "FAIL"  # its veto stays
    semester = make_semester_report(project)
    with open(semester.canvas, encoding="utf-8") as f:
        rows = list(csv.reader(f))[2:]
    assert sorted(r[3] for r in rows) == ["2026001", "2026002", "lisi"]  # SIS Login ID: the real class only
    assert move_out(project).moved == []  # a second run finds nothing to move
