"""`course report lessonNN` shows the similarity evidence and each student's strongest pair (CSV column)."""

from __future__ import annotations

import csv

from course.cli import main
from course.similarity.collect import collect


def test_report_has_the_section_and_the_strongest_pair_column(graded):
    """The copied pair's students name each other in similar_pair; honest students' cells stay empty."""
    assert main(["report", "lesson05", "--root", str(graded)]) == 0
    reports = graded / "autograder" / "reports"
    rows = {r["student"]: r for r in csv.DictReader((reports / "lesson05.csv").open(encoding="utf-8"))}
    assert rows["para-a"]["similar_pair"].startswith("para-b (")
    assert rows["blank-b"]["similar_pair"].startswith("blank-a (") and "blank 2" in rows["blank-b"]["similar_pair"]
    assert rows["h1"]["similar_pair"] == "" and rows["h7"]["similar_pair"] == ""
    html = (reports / "lesson05.html").read_text("utf-8")
    assert 'class="similarity"' in html and 'data-a="helper-a" data-b="helper-b"' in html and "<mark>" in html


def test_failing_check_patterns_come_from_the_gradebook(graded):
    """The gradebook's scores give each student's failing code items; a pattern six students share is no evidence."""
    work = {w.student: w for w in collect(graded, "lesson05").works}
    assert work["blank-a"].failing == ("formulas",) and work["h1"].failing == ()
