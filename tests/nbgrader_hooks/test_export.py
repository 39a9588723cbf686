"""The course's `nbgrader export` plugin: nbgrader's columns and options, the late penalty on the whole total."""

from __future__ import annotations

import csv
import datetime as dt
import os
import sys
from pathlib import Path

from traitlets.config import Config

from course.grading.gradebook import gradebook
from course.nbgrader_hooks.export import CourseExportPlugin
from course.nbgrader_hooks.late_penalty import CourseLatePenalty

DUE = dt.datetime(2026, 12, 1, 15, 59)


def test_it_writes_nbgraders_rows_for_the_students_and_lessons_asked_for(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # nbgrader's alembic
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with gradebook(url) as gb:
        for lesson in ("lesson05", "lesson06"):
            gb.add_assignment(lesson, duedate=DUE)
        gb.add_student("ada", first_name="Ada", last_name="Lovelace, Countess")
        gb.add_student("bob")
        gb.add_submission("lesson05", "ada", timestamp=DUE + dt.timedelta(hours=1))
        gb.add_submission("lesson06", "ada", timestamp=DUE - dt.timedelta(hours=1))
    config = Config()
    config.AssignLatePenalties.plugin_class = CourseLatePenalty
    config.CourseLatePenalty.points_per_hour = 1.0
    out = tmp_path / "out" / "grades.csv"
    with gradebook(url) as gb:
        CourseExportPlugin(config=config, to=str(out), student=["ada"], assignment=["lesson05"]).export(gb)
    with open(out, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["assignment"], r["student_id"], r["last_name"]) for r in rows] == [
        ("lesson05", "ada", "Lovelace, Countess")
    ]  # quoted, so the comma stays in its column
    assert (rows[0]["raw_score"], rows[0]["late_submission_penalty"], rows[0]["score"]) == ("0.0", "0.0", "0.0")
    assert rows[0]["late"].startswith("迟交 1 小时 0 分")  # late, but a total of 0 loses nothing
    with gradebook(url) as gb:
        CourseExportPlugin(config=config, to=str(out)).export(gb)
    with open(out, encoding="utf-8") as f:
        rows = {(r["assignment"], r["student_id"]): r for r in csv.DictReader(f)}
    assert sorted(rows) == [("lesson05", "ada"), ("lesson05", "bob"), ("lesson06", "ada"), ("lesson06", "bob")]
    assert (rows["lesson05", "bob"]["timestamp"], rows["lesson05", "bob"]["score"]) == ("", "0.0")  # nothing in
    assert rows["lesson06", "ada"]["late"] == ""
