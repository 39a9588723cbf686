"""`course similarity lessonNN`: prints the ranked pairs with reasons and writes the CSV and HTML reports."""

from __future__ import annotations

import csv

from course.cli import main
from tests.similarity.planted_class import write_class


def test_command_prints_pairs_and_writes_reports(tmp_path, capsys):
    """The strongest pair is printed with its reason; the CSV has one row per evidence; the HTML marks spans."""
    project = write_class(tmp_path)
    assert main(["similarity", "lesson05", "--root", str(project)]) == 0
    out = capsys.readouterr().out
    assert "#1 " in out and "↔" in out and "pairs among 18 submissions" in out
    reports = project / "autograder" / "reports"
    rows = list(csv.DictReader((reports / "lesson05-similarity.csv").open(encoding="utf-8")))
    assert {(r["student_a"], r["student_b"]) for r in rows} >= {("blank-a", "blank-b"), ("para-a", "para-b")}
    assert any(r["kind"] == "rare-answer" and "blank 2" in r["item"] for r in rows)
    html = (reports / "lesson05-similarity.html").read_text("utf-8")
    assert "<mark>" in html and 'data-a="para-a"' in html and "h1" not in {r["student_a"] for r in rows}


def test_no_submissions_writes_an_empty_report(tmp_path, capsys):
    """A lesson nobody has handed in yet: zero pairs, and the report says so."""
    project = write_class(tmp_path, students={})
    assert main(["similarity", "lesson05", "--root", str(project)]) == 0
    html = (project / "autograder" / "reports" / "lesson05-similarity.html").read_text("utf-8")
    assert "No pair of submissions" in html


def test_missing_release_is_a_located_error(tmp_path, capsys):
    """Without a released notebook the command stops, naming the folder it expected it in."""
    project = write_class(tmp_path, students={})
    (project / "autograder" / "release" / "lesson05" / "lesson05.ipynb").unlink()
    assert main(["similarity", "lesson05", "--root", str(project)]) == 2
    assert "release/lesson05" in capsys.readouterr().err
