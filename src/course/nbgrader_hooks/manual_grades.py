"""nbgrader autograde step: SaveAutoGrades, except that what graders finished stays finished for an unchanged answer.

Stock SaveAutoGrades marks every grade that has a manual score as "needs manual grade" on each autograde, so a
regrade (checks tightened, a re-release, `--force`) sends every graded written answer back to the graders with its
score still there, and `course report` shows it INCOMPLETE. Here a grade a grader had finished (a manual score, not
needing grading) keeps that state when the text it was given for is the text autograded now and the autograder's
score is unchanged; a changed answer (a new submission) or a changed autograder score goes back for review, as in
nbgrader. The text graders saw is the one autograded last: its digest per grade is kept in
.course-grade/<assignment>/answers/<student>.json (a written answer: its own cell; a test: all the student's answer
cells). A grade from before that file existed is compared with its autograded notebook, read before nbgrader's
run removes it (remember_autograded_answers).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from nbgrader import utils
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import SaveAutoGrades

from course.fileio import write_atomic
from course.nbgrader_hooks.outcome import STATE_DIR


def answers_path(course_root: Path | str, assignment: str, student: str) -> Path:
    """Where the digests of the answers last autograded for one student are kept."""
    return Path(course_root) / STATE_DIR / assignment / "answers" / f"{student}.json"


def answer_digests(nb) -> dict[str, str]:
    """Per grade cell, the digest of the text its grade depends on: its own for a written answer, else all answers."""

    def digest(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    answers = [c for c in nb.cells if utils.is_solution(c)]
    code = digest("\0".join(f"{c.metadata.nbgrader.get('grade_id')}\0{c.source}" for c in answers))
    return {
        c.metadata.nbgrader["grade_id"]: digest(c.source) if utils.is_solution(c) else code
        for c in nb.cells
        if utils.is_grade(c)
    }


def remember_autograded_answers(course_root: Path | str, assignment: str, student: str, autograded: Path) -> None:
    """Keep the answer digests of an AUTOGRADED notebook graded before digests were kept (none kept yet)."""
    import nbformat

    path = answers_path(course_root, assignment, student)
    if path.is_file() or not autograded.is_file():
        return
    try:
        nb = nbformat.read(autograded, as_version=4)
    except Exception:  # nbformat raises several kinds; an unreadable old notebook just means nothing to keep
        return
    write_atomic(path, json.dumps(answer_digests(nb)))


class SaveAutoGradesKeepingGraded(SaveAutoGrades):
    """nbgrader's SaveAutoGrades that leaves finished manual grading finished for an unchanged answer."""

    def preprocess(self, nb, resources):
        """Compare with the answers autograded last time, save the grades, then record this time's answers."""
        info = resources["nbgrader"]
        path = answers_path(CourseDirectory(config=self.config).root, info["assignment"], info["student"])
        try:
            before = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            before = {}
        now = answer_digests(nb)
        before = before if isinstance(before, dict) else {}
        self._unchanged = {name for name, value in now.items() if before.get(name) == value}
        nb, resources = super().preprocess(nb, resources)
        write_atomic(path, json.dumps(now))
        return nb, resources

    def _add_score(self, cell, resources) -> None:
        """SaveAutoGrades' scoring; then a finished grade of an unchanged answer and score stays finished."""
        name = cell.metadata["nbgrader"]["grade_id"]
        grade = self.gradebook.find_grade(name, self.notebook_id, self.assignment_id, self.student_id)
        finished = grade.manual_score is not None and not grade.needs_manual_grade
        auto_before = grade.auto_score
        super()._add_score(cell, resources)
        if finished and name in self._unchanged and grade.auto_score == auto_before and grade.needs_manual_grade:
            grade.needs_manual_grade = False
            self.gradebook.db.commit()
