"""`course stats` on small gradebooks filled as nbgrader stores them (SQLite and PostgreSQL): a class too small to
trust, a lesson with nothing graded yet, a lesson graded against two releases; no NaN, no student named."""

from __future__ import annotations

import csv
import io
import json
import shutil

import numpy as np
import pytest

from course.cli import main
from course.grading.item_render import lesson_section
from course.grading.semester import make_semester_report
from tests.grading.report_class import DEMO, FULL, ROOT


def test_a_small_class_is_shown_and_marked_unreliable(course, capsys):
    root = course(DEMO["students"])
    assert main(["stats", "lesson05", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "unreliable" in out
    reports = root / "autograder" / "reports"
    text = (reports / "lesson05-items.json").read_text("utf-8")
    data = json.loads(text)  # written with allow_nan=False: a NaN would not have been written at all
    graded = [s for s, spec in DEMO["students"].items() if None not in spec["scores"].values()]
    assert data["test"]["n"] == len(graded) < 10 and data["unreliable"] is True
    assert data["left_out"] == {"pending": len(DEMO["students"]) - len(graded)}
    rows = list(csv.DictReader(io.StringIO((reports / "lesson05-items.csv").read_text("utf-8"))))
    assert all("unreliable" in r["flags"] for r in rows)
    assert {r["kind"] for r in rows} == {"code", "question", "veto"}  # no re-check outcomes: no check rows
    assert all("nan" not in v.lower() for r in rows for v in r.values())
    q1 = np.array([DEMO["students"][s]["scores"]["answer-Q1"] for s in graded])
    assert next(r for r in data["items"] if r["item"] == "Q1")["mean"] == pytest.approx(q1.mean(), abs=1e-12)
    html = lesson_section(root, "lesson05")
    assert 'id="items-unreliable"' in html and f"只有 {len(graded)} 名学生" in html
    for student in DEMO["students"]:
        assert student not in text and student not in html


def test_a_lesson_with_no_graded_submission_gets_a_clear_message(course, capsys):
    root = course({}, vetoes=None)
    assert main(["stats", "lesson05", "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert "no graded submission of lesson05 yet" in err and "course grade lesson05" in err
    assert not (root / "autograder" / "reports" / "lesson05-items.csv").exists()
    assert "no graded submission of lesson05 yet" in lesson_section(root, "lesson05")


def test_a_class_still_waiting_for_its_grader_says_so(course, capsys):
    root = course({"a": {"scores": {**FULL, "answer-Q2": None}}}, vetoes=None)
    assert main(["stats", "lesson05", "--root", str(root)]) == 2
    assert "no graded submission of lesson05 can be analysed yet (1 waiting for a grader)" in capsys.readouterr().err


def test_items_move_between_releases(course):
    spread = {f"s{i:02d}": {"scores": {**FULL, "answer-Q1": i % 3, "test-formulas": int(i >= 4)}} for i in range(12)}
    root = course(spread, vetoes=None)
    shutil.copy(ROOT / "lessons" / "lesson05.qmd", root / "lessons")  # the semester report discovers lessons
    reports = root / "autograder" / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    versions = {s: {"version": "aaaa0000" if i < 6 else "bbbb1111", "verdicts": {}} for i, s in enumerate(spread)}
    (reports / "lesson05-grade.json").write_text(json.dumps(versions), "utf-8")
    assert main(["stats", "lesson05", "--root", str(root)]) == 0
    data = json.loads((reports / "lesson05-items.json").read_text("utf-8"))
    assert [(r["version"], r["n"]) for r in data["releases"]] == [("aaaa0000", 6), ("bbbb1111", 6)]
    formulas = [next(i for i in r["items"] if i["item"] == "formulas")["facility"] for r in data["releases"]]
    assert formulas == [pytest.approx(2 / 6), 1.0]  # s00–s03 got it wrong, all under the first release
    semester = make_semester_report(root).html.read_text("utf-8").split('id="item-analysis"', 1)[1]
    row = semester.split('data-item="formulas"', 1)[1].split("</tr>", 1)[0]
    assert 'data-version="aaaa0000">0.33' in row and 'data-version="bbbb1111">1.00' in row
