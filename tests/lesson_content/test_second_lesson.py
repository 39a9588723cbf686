"""A lesson is content: a second lesson of another shape (two exercises, a tuple and a dict returned, a question
without veto items, another whose veto hints come from the lesson's own vocabulary) builds, releases, grades and
reports with nothing in src/ knowing it."""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path

import pytest

from course.lesson.notebook_names import notes_notebook
from tests.scratch_project import ROOT, scratch_project

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

FIXTURE = Path(__file__).resolve().parent / "second_lesson"
LESSON = "lesson07"
FILLS = {
    "ex-bubble": ["(stages - 1) / (micro_batches + stages - 1)"],
    "ex-split": ["base + (1 if s < extra else 0)", "max(counts)"],
}
Q2_ANSWERS = {
    "reference": "流水线并行按层切分模型，每个阶段放连续的几层。",
    "blank": "流水线并行不切分层，它切分的是 micro-batch。",
    "cheat": "ZeRO-2 分片了参数，ZeRO-3 把激活也分片了。",
}  # lesson 5's vetoes, not this lesson's
ANYTHING = '''
class _Anything:
    """Equal to everything."""
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __hash__(self): return 0
'''


def test_src_never_names_the_fixture_lesson():
    assert [p for p in (ROOT / "src").rglob("*") if p.is_file() and LESSON.encode() in p.read_bytes()] == []


@pytest.fixture(scope="module")
def course(tmp_path_factory, monkeypatch_module):
    """The fixture lesson built (both variants), released, and three students graded through the sandbox."""
    import nbformat

    from course.assignment.submissions import cell_by_grade_id, fill_blanks
    from course.workflows.build_site import build_course
    from course.workflows.grade import grade_assignment, release

    root = scratch_project(tmp_path_factory.mktemp("second"), FIXTURE)
    build = build_course(root)
    autograder = root / "autograder"
    nb = nbformat.read(release(autograder, LESSON), as_version=4)
    for student, fills, prepend in (
        ("reference", FILLS, ""),
        ("blank", None, ""),
        ("cheat", {"ex-bubble": ["_Anything()"], "ex-split": ["_Anything()"] * 2}, ANYTHING),
    ):
        work = nbformat.from_dict(nb)
        for label, blanks in (fills or {}).items():
            cell = cell_by_grade_id(work, label)
            cell.source = (prepend.strip() + "\n\n" if prepend else "") + fill_blanks(cell.source, blanks)
        cell_by_grade_id(work, "answer-Q2").source = Q2_ANSWERS[student]
        path = root / f"{student}.ipynb"
        nbformat.write(work, path)
        folder = autograder / "submitted" / student / LESSON
        folder.mkdir(parents=True)
        (folder / f"{LESSON}.ipynb").write_bytes(path.read_bytes())
    graded = grade_assignment(autograder, LESSON)
    return root, build, graded


@pytest.fixture(scope="module")
def monkeypatch_module():
    """nbgrader calls `alembic` from PATH: this Python's scripts first."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        yield mp


def test_both_variants_are_built_and_the_answer_stays_out_of_the_student_site(course):
    root, build, _ = course
    student = (root / "_site" / "student" / notes_notebook(LESSON)).read_text("utf-8")
    answer = (root / "_site" / "answer" / notes_notebook(LESSON)).read_text("utf-8")
    assert "base + (1 if s < extra else 0)" in answer and "base + (1 if s" not in student
    assert "return ______" in student and "气泡占比" in student
    assert (root / "_site" / "student" / f"{LESSON}.html").is_file() and (
        root / "_site" / "answer" / "index.html"
    ).is_file()


def test_the_source_notebook_has_both_exercises_with_their_tests(course):
    import nbformat

    root, _, _ = course
    source = nbformat.read(root / "autograder" / "source" / LESSON / f"{LESSON}.ipynb", as_version=4)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in source.cells if "nbgrader" in c.metadata]
    assert ids == [
        "ex-bubble",
        "course-checks",
        "test-bubble",
        "ex-split",
        "test-split",
        "question-Q1",
        "answer-Q1",
        "question-Q2",
        "answer-Q2",
    ]


@pytest.mark.parametrize("student,passed", [("reference", True), ("blank", False), ("cheat", False)])
def test_reference_full_blank_and_cheat_zero_after_the_sandbox_and_the_re_check(course, student, passed):
    _, _, graded = course
    verdicts = graded.student(student).verdicts
    assert {item: v.passed for item, v in verdicts.items()} == {"bubble": passed, "split": passed}


def test_the_report_decides_with_the_lessons_own_rubric(course):
    from course.grading.gradebook import configured_gradebook, gradebook
    from course.grading.report import make_report

    root, _, _ = course
    with gradebook(configured_gradebook(root / "autograder").url) as gb:
        for student, points in (("reference", 2), ("blank", 2), ("cheat", 2)):
            for question, score in (("answer-Q1", points), ("answer-Q2", 1 if student == "reference" else 0)):
                grade = gb.find_grade(question, LESSON, LESSON, student)
                grade.manual_score, grade.needs_manual_grade = score, False
        gb.db.commit()
    result = make_report(root, LESSON)
    with open(result.csv, encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert {s: (r["bubble"], r["split"], r["total"], r["result"]) for s, r in rows.items()} == {
        "reference": ("1", "1", "5", "PASS"),
        "blank": ("0", "0", "2", "FAIL"),
        "cheat": ("0", "0", "2", "FAIL"),
    }
    # hints come from lesson 07's own vocabulary: its veto for the blank answer, none of lesson 5's for the cheat's
    assert {s: r["veto_hints"] for s, r in rows.items()} == {"reference": "", "blank": "stage-split", "cheat": ""}
    assert all(r["vetoes"] == "" for r in rows.values())  # hints are never decisions


def test_checks_calling_an_undefined_function_stop_the_build_with_nothing_half_built(tmp_path):
    from course.errors import CourseError
    from course.workflows.build_site import build_course

    root = scratch_project(tmp_path, FIXTURE)
    checks = root / "lessons" / LESSON / "checks.yml"
    checks.write_text(checks.read_text("utf-8").replace("describe_split(10, 4) ==", "summarise(10, 4) =="), "utf-8")
    with pytest.raises(CourseError) as err:
        build_course(root)
    assert str(err.value).startswith(
        "lesson07/checks.yml, line 16: items/split/visible/1: calls summarise(), which "
        "the exercise ex-split does not define; expected one of describe_split, "
        "split_layers"
    )
    assert [p for p in (root / "_site").rglob("*") if p.is_file()] == [] and not (
        root / "autograder" / "source"
    ).exists()


def test_the_semester_report_reads_the_really_graded_lesson_beside_lesson_5(course, tmp_path):
    """lesson07 as the sandbox and the re-check graded it, lesson05 as formgrader would store it: one semester."""
    import shutil

    from course.grading.gradebook import configured_gradebook, gradebook
    from course.grading.rubric import load_rubric
    from course.grading.semester import make_semester_report
    from tests.grading.report_class import FULL, RUBRIC, fill_gradebook

    source, _, _ = course
    root = tmp_path / "project"
    shutil.copytree(source, root, symlinks=True)  # the graded course with its SQLite gradebook (nbgrader's default)
    url = configured_gradebook(root / "autograder").url
    assert url.startswith("sqlite:") and str(root) in url
    shutil.copy(ROOT / "lessons" / "lesson05.qmd", root / "lessons" / "lesson05.qmd")
    shutil.copytree(ROOT / "lessons" / "lesson05", root / "lessons" / "lesson05")
    shutil.copy(RUBRIC, root / "autograder" / "rubrics" / "lesson05.yml")
    with gradebook(url) as gb:  # the graders' points for lesson07's questions
        for student in ("reference", "blank", "cheat"):
            for question, score in (("answer-Q1", 2), ("answer-Q2", 1 if student == "reference" else 0)):
                grade = gb.find_grade(question, LESSON, LESSON, student)
                grade.manual_score, grade.needs_manual_grade = score, False
        gb.db.commit()
    fill_gradebook(
        url,
        "lesson05",
        {"reference": {"scores": FULL}, "blank": {"scores": {k: 0 for k in FULL}}},
        load_rubric(RUBRIC).grade_ids(),
    )
    result = make_semester_report(root)
    with open(result.csv, encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert {
        s: (r["lesson05"], r["lesson05_result"], r[LESSON], r[f"{LESSON}_result"], r["result"]) for s, r in rows.items()
    } == {
        "blank": ("0", "FAIL", "2", "FAIL", "FAIL"),
        "cheat": ("", "MISSING", "2", "FAIL", "FAIL"),
        "reference": ("10", "PASS", "5", "PASS", "PASS"),
    }
    assert rows["reference"]["total_percent"] == "100.00"
    with open(result.canvas, encoding="utf-8", newline="") as f:
        canvas = list(csv.reader(f))
    assert canvas[0][5:] == ["lesson05", LESSON, "semester"] and canvas[1][5:] == ["10", "5", "100"]
    assert {r[3]: r[5:] for r in canvas[2:]} == {
        "blank": ["0", "2", "20"],
        "cheat": ["0", "2", "20"],
        "reference": ["10", "5", "100"],
    }
