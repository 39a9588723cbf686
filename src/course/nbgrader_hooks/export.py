"""The course's `nbgrader export` plugin: nbgrader's CSV, with each late penalty taken from the lesson's whole total.

The course's nbgrader config makes it `c.ExportApp.plugin_class` (a default: a hub config or `--exporter` may name
another). It writes nbgrader's own columns, honours `--to`, `--assignment` and `--student` as nbgrader's
CsvExportPlugin does, and takes the late penalty from course.grading.late_total, so an export made right after
graders entered Q1–Q3 in formgrader, before any `course report`, shows the number the reports show. While a late
submission still has items waiting for a grader, its penalty is provisional: `score` is left empty rather than
computed from the graded part. A last column, `late`, explains the penalty as the reports do.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from nbgrader.api import MissingEntry
from nbgrader.plugins import CsvExportPlugin

from course.fileio import write_atomic
from course.grading.late_policy import policy_in_words
from course.grading.late_total import late_plugin, lesson_late

COLUMNS = (
    "assignment",
    "duedate",
    "timestamp",
    "student_id",
    "last_name",
    "first_name",
    "email",
    "raw_score",
    "late_submission_penalty",
    "score",
    "max_score",
    "late",
)  # nbgrader's, then the penalty's reason


class CourseExportPlugin(CsvExportPlugin):
    """nbgrader's CSV export with the lesson's late penalty on its whole total."""

    def export(self, gradebook) -> None:
        """One row per assignment and student (those `--assignment` and `--student` name), written to `--to`."""
        plugin, policy = late_plugin(self.config), policy_in_words(self.config)
        assignments, students = {str(a) for a in self.assignment}, {str(s) for s in self.student}
        dest = Path(self.to or "grades.csv")
        self.log.info("Exporting grades to %s", dest)
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(COLUMNS)
        for assignment in gradebook.assignments:
            for student in gradebook.students:
                if (not assignments or assignment.name in assignments) and (not students or student.id in students):
                    writer.writerow(
                        [
                            "" if value is None else str(value)
                            for value in row(gradebook, assignment, student, plugin, policy)
                        ]
                    )
        write_atomic(dest, out.getvalue())


def row(gradebook, assignment, student, plugin, policy: str) -> tuple:
    """One student's row for one assignment: nothing handed in is 0, as nbgrader exports it."""
    people = (student.id, student.last_name, student.first_name, student.email)
    try:
        submission = gradebook.find_submission(assignment.name, student.id)
    except MissingEntry:
        return (assignment.name, assignment.duedate, "", *people, 0.0, 0.0, 0.0, assignment.max_score, "")
    late = lesson_late(submission, plugin)
    penalty = late.penalty if late else 0.0
    score = None if late and late.provisional else submission.score - penalty  # no score from a partial total
    return (
        assignment.name,
        assignment.duedate,
        submission.timestamp,
        *people,
        submission.score,
        penalty,
        score,
        assignment.max_score,
        late.reason(policy) if late else "",
    )
