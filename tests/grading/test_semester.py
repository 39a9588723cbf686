"""`course report` without a lesson: the semester over real nbgrader gradebooks (SQLite, and PostgreSQL set by a hub
config) holding two graded lessons — lesson05's demo class and the second-lesson fixture's lesson07 — and a third
lesson the course knows that nobody has submitted yet. Rows are written through nbgrader's own Gradebook API, as
autograde and formgrader store them; tests/lesson_content/test_second_lesson.py runs the same report on a lesson graded
for real through the sandbox."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from course.cli import main
from course.errors import CourseError
from course.grading.gradebook import configured_gradebook
from course.grading.semester import make_semester_report
from tests.grading.semester_class import ROOT, SECOND, db_url

pytestmark = pytest.mark.long(29)


def rows_of(path: Path, key: str) -> dict[str, dict[str, str]]:
    """A CSV file parsed back, keyed by the KEY column."""
    return {r[key]: r for r in csv.DictReader(io.StringIO(path.read_text("utf-8"), newline=""))}


def nbgrader_scores(root: Path, lesson: str) -> dict[str, float]:
    """Student → nbgrader's own total for LESSON, straight from its Gradebook."""
    with Gradebook(db_url(root)) as gb:
        return {s.student.id: s.score for s in gb.find_assignment(lesson).submissions}


# ---------------------------------------------------------------- standings under the default policy


def test_every_student_by_every_lesson_decided_as_each_lessons_report_decides(semester):
    root = semester()
    result = make_semester_report(root)
    rows = rows_of(result.csv, "student")
    assert list(rows) == ["ada", "chen-jing", "han-meimei", "li-lei", "liu-yang", "wang-fang", "zhang-wei", "zhao-min"]
    assert list(rows["ada"]) == [
        "student",
        "lesson05",
        "lesson05_result",
        "lesson05_flags",
        "lesson07",
        "lesson07_result",
        "lesson07_flags",
        "lesson09",
        "lesson09_result",
        "lesson09_flags",
        "total_percent",
        "result",
        "reasons",
    ]
    # lesson05 as `course report lesson05` decides it (vetoes, INCOMPLETE, pass line), lesson07 by its own rubric
    assert {s: (r["lesson05_result"], r["lesson07_result"], r["lesson09_result"]) for s, r in rows.items()} == {
        "ada": ("MISSING", "PASS", "UNGRADED"),
        "chen-jing": ("FAIL", "PASS", "UNGRADED"),
        "han-meimei": ("PASS", "PASS", "UNGRADED"),
        "li-lei": ("PASS", "PASS", "UNGRADED"),
        "liu-yang": ("INCOMPLETE", "PASS", "UNGRADED"),
        "wang-fang": ("FAIL", "MISSING", "UNGRADED"),
        "zhang-wei": ("FAIL", "FAIL", "UNGRADED"),
        "zhao-min": ("FAIL", "FAIL", "UNGRADED"),
    }
    for lesson in ("lesson05", "lesson07"):
        assert {s: float(r[lesson]) for s, r in rows.items() if r[lesson]} == nbgrader_scores(root, lesson)
    assert rows["chen-jing"]["lesson05_flags"] == "一票否决 activation-shard（Q1）"
    # default policy: equal weights, weighted total >= 60 % and every counted lesson PASS, a missing lesson is 0
    assert {s: (r["total_percent"], r["result"]) for s, r in rows.items()} == {
        "ada": ("50.00", "FAIL"),
        "chen-jing": ("100.00", "FAIL"),
        "han-meimei": ("80.00", "PASS"),
        "li-lei": ("97.50", "PASS"),
        "liu-yang": ("90.00", "INCOMPLETE"),
        "wang-fang": ("37.50", "FAIL"),
        "zhang-wei": ("50.00", "FAIL"),
        "zhao-min": ("70.00", "FAIL"),
    }
    assert rows["ada"]["reasons"] == "lesson05 没有提交，按 0 分、未通过计"
    assert rows["liu-yang"]["reasons"] == "lesson05 尚未评完（INCOMPLETE），学期结果待定"
    assert [(lesson.name, lesson.counted) for lesson in result.lessons] == [
        ("lesson05", True),
        ("lesson07", True),
        ("lesson09", False),
    ]


def test_what_grading_found_wrong_is_a_flag_of_that_lesson(semester):
    root = semester()
    reports = root / "autograder" / "reports"
    reports.mkdir(parents=True)
    problem = "cell test-split: read-only cell was edited"
    (reports / "lesson07-grade.json").write_text(
        json.dumps({"zhang-wei": {"flagged": True, "verdicts": {}, "changes": [], "problems": [problem]}}), "utf-8"
    )
    rows = rows_of(make_semester_report(root).csv, "student")
    assert rows["zhang-wei"]["lesson07_flags"] == problem and rows["zhang-wei"]["lesson05_flags"] == ""


def test_the_page_is_offline_with_one_plot_per_graded_lesson_and_an_accessible_table(semester):
    root = semester(extra=("lesson04",))
    result = make_semester_report(root)
    html = result.html.read_text("utf-8")
    assert not re.search(r'(src|href)="(https?:)?//', html) and "<script" not in html
    assert result.unknown == ("lesson04",) and "lesson04" in html and "lesson04" not in result.csv.read_text("utf-8")
    figures = dict(re.findall(r'<figure id="plot-(lesson\d+)">(.*?)</figure>', html, re.S))
    assert list(figures) == ["lesson05", "lesson07", "lesson09"]
    # lesson07's histogram: the totals nbgrader holds, one bar per point, titled with an id of its own
    bins = {int(k): int(v) for k, v in re.findall(r'data-score="(\d+)" data-count="(\d+)"', figures["lesson07"])}
    assert bins == {0: 0, 1: 0, 2: 1, 3: 1, 4: 1, 5: 4}
    assert 'aria-labelledby="hist-lesson07"' in figures["lesson07"] and 'id="hist-lesson05"' in figures["lesson05"]
    assert "<svg" not in figures["lesson09"] and "尚未评分" in figures["lesson09"]
    assert len(re.findall(r'<th scope="col"', html)) >= 6 and '<th scope="row">ada' in html
    assert "<caption" in html and 'id="count-PASS">2<' in html and 'id="count-INCOMPLETE">1<' in html
    assert '<span class="muted">Ada Lovelace</span>' in html and '<span class="muted">李雷</span>' in html
    chen = re.search(r'<tr id="student-chen-jing".*?</tr>', html, re.S).group(0)
    assert 'data-result="FAIL"' in chen and "一票否决 activation-shard（Q1）" in chen


# ---------------------------------------------------------------- the policy changes the totals


def test_weights_change_the_weighted_total(semester):
    root = semester('semester_weights = { lesson05 = 3 }\nsemester_pass_rule = "total"\nsemester_pass_percent = 55\n')
    rows = rows_of(make_semester_report(root).csv, "student")
    # lesson05 weighs 3, lesson07 (unlisted) 1: zhang-wei (6/10, 2/5) 55 % reaches 55 %; equal weights give 50 %
    assert (rows["zhang-wei"]["total_percent"], rows["zhang-wei"]["result"]) == ("55.00", "PASS")
    assert rows["li-lei"]["total_percent"] == "96.25"


def test_equal_weights_leave_the_same_student_below_the_line(semester):
    root = semester('semester_pass_rule = "total"\nsemester_pass_percent = 55\n')
    rows = rows_of(make_semester_report(root).csv, "student")
    assert (rows["zhang-wei"]["total_percent"], rows["zhang-wei"]["result"]) == ("50.00", "FAIL")


def test_pass_rule_total_only_and_missing_lessons_excluded(semester):
    root = semester('semester_pass_rule = "total"\nsemester_missing = "excluded"\n')
    rows = rows_of(make_semester_report(root).csv, "student")
    # no every-lesson part: chen-jing's vetoed lesson05 no longer fails the semester; ada's missing lesson05 and
    # wang-fang's missing lesson07 are left out of their totals
    assert {
        s: (r["total_percent"], r["result"]) for s, r in rows.items() if s in ("chen-jing", "ada", "wang-fang")
    } == {"ada": ("100.00", "PASS"), "chen-jing": ("100.00", "PASS"), "wang-fang": ("75.00", "PASS")}
    moodle = rows_of(root / "autograder" / "reports" / "moodle.csv", "username")
    assert (moodle["ada"]["lesson05"], moodle["wang-fang"]["lesson07"], moodle["ada"]["semester"]) == ("", "", "100")


def test_pass_rule_every_lesson_ignores_the_total(semester):
    root = semester('semester_pass_rule = "every-lesson"\nsemester_pass_percent = 99\n')
    rows = rows_of(make_semester_report(root).csv, "student")
    assert (rows["han-meimei"]["result"], rows["li-lei"]["result"]) == ("PASS", "PASS")  # 80 % < 99 % does not matter


# ---------------------------------------------------------------- the LMS imports


def test_canvas_csv_has_canvas_columns_a_points_row_and_the_gradebooks_points(semester):
    root = semester("canvas_assignment_ids = { lesson07 = 4711 }\n")
    result = make_semester_report(root)
    table = list(csv.reader(io.StringIO(result.canvas.read_text("utf-8"), newline="")))
    assert result.canvas.read_bytes().count(b"\r\n") == len(table)
    assert table[0] == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "lesson05",
        "lesson07 (4711)",
        "semester",
    ]
    assert table[1] == ["Points Possible", "", "", "", "", "10", "5", "100"]
    rows = {r[3]: dict(zip(table[0], r)) for r in table[2:]}  # default: SIS Login ID is the nbgrader id
    assert sorted(rows) == sorted(rows_of(result.csv, "student"))
    assert rows["li-lei"]["Student"] == "李, 雷" and rows["li-lei"]["ID"] == "1001"
    assert (
        rows["ada"]["Student"] == "Lovelace, Ada"
        and rows["ada"]["ID"] == ""
        and rows["zhang-wei"]["Student"] == "zhang-wei"
    )
    scores = nbgrader_scores(root, "lesson05")
    # decided lessons carry nbgrader's points; INCOMPLETE stays blank (Canvas leaves it alone); no submission is 0,
    # as the default policy counts it
    assert {s: r["lesson05"] for s, r in rows.items()} == {
        s: "" if s == "liu-yang" else f"{scores.get(s, 0):g}" for s in rows
    }
    assert rows["wang-fang"]["lesson07 (4711)"] == "0" and rows["zhang-wei"]["lesson07 (4711)"] == "2"
    assert rows["li-lei"]["semester"] == "97.5" and rows["liu-yang"]["semester"] == ""


def test_moodle_csv_has_the_identifier_column_and_one_column_per_grade_item(semester):
    root = semester()
    result = make_semester_report(root)
    table = list(csv.reader(io.StringIO(result.moodle.read_text("utf-8"), newline="")))
    assert table[0] == ["username", "lesson05", "lesson07", "semester"]
    rows = {r[0]: dict(zip(table[0], r)) for r in table[1:]}
    scores = nbgrader_scores(root, "lesson07")
    assert {s: r["lesson07"] for s, r in rows.items()} == {s: (f"{scores[s]:g}" if s in scores else "0") for s in rows}
    assert rows["han-meimei"] == {"username": "han-meimei", "lesson05": "8", "lesson07": "4", "semester": "80"}


def test_moodle_identity_maps_from_the_student_tables_email(semester):
    root = semester('moodle_id_column = "email"\nmoodle_id_field = "email"\n')
    with Gradebook(db_url(root)) as gb:
        for student in ("chen-jing", "han-meimei", "liu-yang", "wang-fang", "zhang-wei", "zhao-min"):
            gb.update_or_create_student(student, email=f"{student}@example.edu")
    table = list(csv.reader(io.StringIO(make_semester_report(root).moodle.read_text("utf-8"), newline="")))
    assert table[0][0] == "email" and table[1][0] == "ada@example.edu" and table[4][0] == "lilei@example.edu"


def test_a_student_the_lms_cannot_find_stops_the_report_with_nothing_written(semester):
    root = semester('moodle_id_column = "email"\nmoodle_id_field = "email"\n')
    with pytest.raises(CourseError) as err:
        make_semester_report(root)
    assert str(err.value) == (
        f"{configured_gradebook(root / 'autograder').location().path}: student chen-jing: no email in nbgrader's "
        "Student table, so the LMS cannot find them; fill it (`nbgrader db student add chen-jing --email …`; for the "
        "whole class, `course roster import FILE.csv`) or choose other fields with [tool.course] moodle_id_field"
    )
    assert not (root / "autograder" / "reports").exists()


def test_cli_without_a_lesson_writes_the_semester_and_says_which_lessons_count(semester, capsys):
    root = semester()
    assert main(["report", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "lesson09: not graded yet" in out and "lesson07: 7 submissions in the gradebook" in out
    assert "course report (semester): 2 PASS, 5 FAIL, 1 INCOMPLETE" in out
    assert sorted(p.name for p in (root / "autograder" / "reports").iterdir()) == [
        "canvas.csv",
        "moodle.csv",
        "semester.csv",
        "semester.html",
    ]
    assert main(["report", "--root", str(root), "--veto", "ada", "Q1", "x", "--note", "n"]) == 2
    assert "--veto needs the lesson" in capsys.readouterr().err


def test_without_a_gradebook_the_report_says_so_and_creates_none(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "no-hub"))  # nbgrader's default: autograder/gradebook.db
    root = course_without_gradebook(tmp_path, "")
    with pytest.raises(
        CourseError,
        match=r"no gradebook: nothing is graded there yet: release and grade a lesson "
        r"first .*\(c\.CourseDirectory\.db_url from nbgrader's default",
    ):
        make_semester_report(root)
    assert not (root / "autograder").exists()


# ---------------------------------------------------------------- bad policy config names its line


def course_without_gradebook(root: Path, config: str) -> Path:
    """Lessons 05 and 07 and a pyproject.toml whose [tool.course] is CONFIG; no gradebook (the policy comes first)."""
    shutil.copytree(SECOND / "lessons", root / "lessons")
    shutil.copy(ROOT / "lessons" / "lesson05.qmd", root / "lessons" / "lesson05.qmd")
    shutil.copytree(ROOT / "lessons" / "lesson05", root / "lessons" / "lesson05")
    (root / "pyproject.toml").write_text(f'[project]\nname = "x"\n\n[tool.course]\n{config}', "utf-8")
    return root


@pytest.mark.parametrize(
    "config, line, expected",
    [
        (
            "semester_weights = { lesson05 = 2, lesson99 = 1 }\n",
            5,
            "[tool.course] semester_weights.lesson99: expected a graded "
            "lesson of this course (lesson05, lesson07), got 'lesson99'",
        ),
        (
            'kernel = "python3"\n\n[tool.course.semester_weights]\nlesson05 = 2\nlesson07 = -1\n',
            9,
            "[tool.course] semester_weights.lesson07: expected a weight >= 0, got -1",
        ),
        ("semester_weights = 3\n", 5, "[tool.course] semester_weights must be a table, got 3"),
        (
            'course_title = "t"\nsemester_pass_rule = "most"\n',
            6,
            "[tool.course] semester_pass_rule: expected one of total, every-lesson, total-and-every-lesson, got 'most'",
        ),
        (
            "semester_pass_percent = 120\n",
            5,
            "[tool.course] semester_pass_percent: expected a percentage from 0 to 100, got 120.0",
        ),
        (
            'semester_missing = "skip"\n',
            5,
            "[tool.course] semester_missing: expected one of zero, excluded, got 'skip'",
        ),
        (
            '[tool.course.canvas_identity]\n"SIS Login" = "id"\n',
            6,
            "[tool.course] canvas_identity.SIS Login: expected a "
            "Canvas identity column (ID, SIS User ID, SIS Login ID), "
            "got 'SIS Login'",
        ),
        (
            'canvas_identity = { ID = "nickname" }\n',
            5,
            "[tool.course] canvas_identity.ID: expected an nbgrader Student field (id, first_name, last_name, email, "
            "lms_user_id), got 'nickname'",
        ),
        (
            'canvas_assignment_ids = { lesson05 = "abc" }\n',
            5,
            "[tool.course] canvas_assignment_ids.lesson05: expected Canvas's numeric assignment id, got 'abc'",
        ),
        (
            'moodle_id_column = "login"\n',
            5,
            "[tool.course] moodle_id_column: expected a Moodle user field the import "
            "maps to (username, idnumber, email, id), got 'login'",
        ),
    ],
)
def test_bad_policy_config_is_a_located_error_and_nothing_is_written(tmp_path, config, line, expected):
    root = course_without_gradebook(tmp_path, config)
    with pytest.raises(CourseError) as err:
        make_semester_report(root)
    assert str(err.value) == f"pyproject.toml, line {line}: {expected}"
    assert not (root / "autograder").exists()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("gradebook_db", ["sqlite"], indirect=True)
def test_the_page_has_no_serious_accessibility_violation_and_reads_at_phone_width(semester, gradebook_db, browser):
    from tests.site.page_checks import PHONE, axe_violations

    html = make_semester_report(semester()).html
    page = browser.new_page()
    page.set_viewport_size(PHONE)
    remote = []
    page.route(
        "**/*",
        lambda route: (
            route.continue_()
            if route.request.url.startswith("file://")
            else (remote.append(route.request.url), route.abort())
        ),
    )
    page.goto(html.as_uri())
    assert axe_violations(page) == [] and remote == []
    # the wide table scrolls in its own box; the page itself does not scroll sideways
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    assert page.evaluate("() => document.querySelectorAll('figure svg[role=img] title').length") == 2
