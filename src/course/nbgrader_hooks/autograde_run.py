"""The whole autograde run, as the course's nbgrader config shapes it: one locked batch, damaged files scored 0.

nbgrader's Autograde converter makes its exporter once per run, right before its loop over the submissions;
the course's config names this exporter (`c.Autograde.exporter_class`), which wraps that loop:
1. a grading sandbox setting that is not valid (course.nbgrader_hooks.sandbox_execute.sandbox_settings), or an
   assignment not released (no release/ notebook, or not in the gradebook), stops the run before anything is
   written: nbgrader would fail each student (removing their autograded notebooks), or create the gradebook, each
   student and their autograded/ folder before failing;
2. it takes the course's batch lock for the whole loop (course.nbgrader_hooks.batch_lock); when another run
   holds it, nbgrader stops before touching anything, with the holder's pid and command; so it does when the
   source notebook or checks changed since the last release (grading would mix two versions of the checks);
   the answers graders saw in each autograded notebook are remembered before nbgrader removes it, where no
   record of them exists yet (course.nbgrader_hooks.manual_grades);
3. it looks at every submission folder the run covers (course.assignment.preflight) and scores the ones that
   cannot be graded (no notebook, renamed, over the size limit, not UTF-8, invalid JSON, not a notebook) 0
   with the reason (grade_unreadable), leaving them out of nbgrader's loop, where reading them would fail the
   student without writing a grade;
4. nbgrader's own loop grades the rest.
`course grade` holds the lock itself, runs nbgrader's autograde per student on its workers with nbconvert's plain
exporter in place of this one (course.workflows.grade_worker) and scores unreadable submissions with the same
grade_unreadable, so both commands leave the same gradebook, flags and grade report.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
from pathlib import Path
from typing import NoReturn

import nbformat
from nbconvert.exporters import NotebookExporter
from nbgrader.converters import Autograde, NbGraderException

from course.assignment.preflight import Problem, preflight
from course.assignment.versions import assignment_version, released_version
from course.grading.deadlines import apply_due_date
from course.grading.gradebook import gradebook
from course.nbgrader_hooks.batch_lock import BatchBusy, batch_lock
from course.nbgrader_hooks.manual_grades import remember_autograded_answers
from course.nbgrader_hooks.outcome import StudentGrade, current_students, graded_stamp, save_outcome
from course.nbgrader_hooks.speedups import install_for


def grade_unreadable(coursedir, assignment: str, student: str, problem: Problem) -> StudentGrade:
    """Score a submission nobody can grade: 0 for every grade nobody graded by hand, flagged, with PROBLEM as reason.

    Output autograded from an earlier submission is replaced by a stand-in (write_stand_in), so neither feedback
    nor the report shows work that is not this submission's.
    """
    from course.grading.recheck import all_failed
    from course.grading.rubric import load_rubric, rubric_path

    rubric_file = rubric_path(Path(coursedir.root), assignment)
    verdicts = all_failed(load_rubric(rubric_file), problem.message) if rubric_file.is_file() else {}
    with gradebook(coursedir.db_url) as gb:
        gb.update_or_create_student(student)
        submission = gb.update_or_create_submission(assignment, student)
        for notebook in submission.notebooks:
            notebook.flagged = True
            for grade in notebook.grades:
                if grade.manual_score is None:
                    grade.auto_score, grade.needs_manual_grade = 0.0, False
        gb.db.commit()
    write_stand_in(coursedir, assignment, student, problem)
    version = assignment_version(Path(coursedir.root), assignment)
    outcome = StudentGrade(student, verdicts, [], [problem], version=version or "", ungradable=str(problem))
    folder = coursedir.format_path(coursedir.submitted_directory, student, assignment)
    stamp = graded_stamp(coursedir.db_url, assignment, student, folder, version)
    save_outcome(coursedir.root, assignment, outcome, stamp, current_students(coursedir, assignment))
    return outcome


STAND_IN_NOTICE = (
    "**这份提交无法评分，每题记 0 分。**\n\n原因：{problem}\n"
    "\n请按原因修正后重新提交：在课程发布的 `{notebook}` 里作答，"
    "保存后原名提交，不要改名或另存为其他格式。下面是空白的发布版作业，只用来显示各题得分，并不是你提交的内容。"
)


SUBMISSION_RECORDS = ("timestamp.txt", "submission_secret.txt")  # what `nbgrader submit` writes beside the notebook


def write_stand_in(coursedir, assignment: str, student: str, problem: Problem) -> None:
    """Put the blank released assignment, headed by the reason, where the autograded notebook goes.

    nbgrader's feedback is made from autograded notebooks, so without one a student whose file could not be read
    would get 0 and no word why. The submission's time and secret go beside it, as nbgrader's autograde copies them,
    so the page is released to that student. Without a release there is nothing to stand in: the folder is only
    emptied.
    """
    target = Path(coursedir.format_path(coursedir.autograded_directory, student, assignment))
    shutil.rmtree(target, ignore_errors=True)
    release = Path(coursedir.format_path(coursedir.release_directory, ".", assignment))
    notebook = release / f"{assignment}.ipynb"
    if not notebook.is_file():
        return
    shutil.copytree(release, target)
    submitted = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
    for name in SUBMISSION_RECORDS:  # what release_feedback names the page by, and when it was handed in
        if (submitted / name).is_file():
            shutil.copyfile(submitted / name, target / name)
    nb = nbformat.read(notebook, as_version=4)
    notice = STAND_IN_NOTICE.format(problem=problem.message, notebook=notebook.name)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(notice, metadata={"course": {"stand_in": True}}))
    nbformat.write(nb, target / notebook.name)


def source_cells(coursedir, assignment: str) -> list:
    """The cells of source/<assignment>/<assignment>.ipynb, what submissions are checked against ([] without it)."""
    path = Path(coursedir.format_path(coursedir.source_directory, ".", assignment)) / f"{assignment}.ipynb"
    return nbformat.read(path, as_version=4).cells if path.is_file() else []


def submission_folders(coursedir) -> dict[str, tuple[str, str]]:
    """Every submission folder the run covers (with a notebook or not) → (student, assignment)."""
    pattern = coursedir.format_path(coursedir.submitted_directory, "(?P<student>.*)", "(?P<assignment>.*)", escape=True)
    excluded = set(filter(None, coursedir.student_id_exclude.split(",")))
    found = {}
    for folder in glob.glob(
        coursedir.format_path(coursedir.submitted_directory, coursedir.student_id, coursedir.assignment_id)
    ):
        match = re.fullmatch(pattern, folder)
        if match and os.path.isdir(folder) and match["student"] not in excluded:
            found[folder] = (match["student"], match["assignment"])
    return found


class CourseAutogradeExporter(NotebookExporter):
    """nbgrader's notebook exporter, which also makes the Autograde run that creates it one locked batch."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        converter = self.parent
        if isinstance(converter, Autograde):
            install_for(self.config)  # set-up nbgrader repeats per student, done once (nbgrader_hooks.speedups)
            loop = converter.convert_notebooks
            converter.convert_notebooks = lambda: self.run_locked(converter, loop)

    def run_locked(self, converter: Autograde, loop) -> None:
        """Under the batch lock: score the unreadable submissions, then run nbgrader's loop on the others."""
        coursedir = converter.coursedir
        try:
            self.require_settings()
            self.require_release(coursedir)
            with batch_lock(Path(coursedir.root), f"nbgrader autograde {coursedir.assignment_id}"):
                self.require_current_release(coursedir)
                for assignment in sorted({a for _, a in submission_folders(coursedir).values()}):
                    apply_due_date(coursedir.root, coursedir.db_url, assignment)  # what the late check reads
                for student, assignment in submission_folders(coursedir).values():
                    notebook = Path(coursedir.format_path(coursedir.autograded_directory, student, assignment))
                    remember_autograded_answers(coursedir.root, assignment, student, notebook / f"{assignment}.ipynb")
                for folder in self.score_unreadable(coursedir):
                    converter.assignments.pop(folder, None)
                loop()
        except BatchBusy as exc:
            self.refuse(str(exc))

    def refuse(self, message: str) -> NoReturn:
        """Stop the run before nbgrader's loop grades anyone: MESSAGE logged as nbgrader's own errors are, then raised
        as the exception nbgrader's app exits on."""
        self.log.error("%s", message)
        raise NbGraderException(message) from None

    def require_settings(self) -> None:
        """Stop before anything is written when a grading sandbox setting is not valid: nbgrader would fail every
        student separately, removing each one's autograded notebook."""
        from course.errors import CourseError
        from course.nbgrader_hooks.sandbox_execute import sandbox_settings

        try:
            sandbox_settings(self.config)
        except CourseError as exc:
            self.refuse(str(exc))

    def require_release(self, coursedir) -> None:
        """Stop before anything is written (gradebook, autograded/, the lock) when an assignment is not released.

        nbgrader would create the gradebook and each student before finding that the assignment is not in it.
        """
        from nbgrader.api import MissingEntry

        from course.errors import CourseError
        from course.grading.gradebook import GradebookAt, check_gradebook

        for assignment in sorted({a for _, a in submission_folders(coursedir).values()}):
            fix = (
                f"{assignment} is not released yet: run `nbgrader generate_assignment {assignment}` first "
                "(nothing was graded or written)"
            )
            release = Path(coursedir.format_path(coursedir.release_directory, ".", assignment)) / f"{assignment}.ipynb"
            try:
                if not release.is_file():
                    raise CourseError(fix)
                check_gradebook(GradebookAt(coursedir.db_url, Path(coursedir.root)), fix)
                with gradebook(coursedir.db_url) as gb:
                    gb.find_assignment(assignment)
            except (CourseError, MissingEntry) as exc:  # MissingEntry: not released into this gradebook
                self.refuse(str(exc) if isinstance(exc, CourseError) else fix)

    def require_current_release(self, coursedir) -> None:
        """Stop before grading anyone when the source or checks changed since the recorded release.

        nbgrader grades with the gradebook's copy of the test cells, the re-check with the current checks: both must
        be the same version. Releases made before versions were recorded are not checked.
        """
        root = Path(coursedir.root)
        for assignment in sorted({a for _, a in submission_folders(coursedir).values()}):
            released, current = released_version(root, assignment), assignment_version(root, assignment)
            if released and current and released != current:
                message = (
                    f"{assignment} changed since it was released (source notebook or checks: version "
                    f"{released} released, {current} built): run `nbgrader generate_assignment {assignment} "
                    f"--force` first, then autograde with --force; or `course grade {assignment}`, which does "
                    "both"
                )
                self.refuse(message)

    def score_unreadable(self, coursedir) -> list[str]:
        """Score 0 every submission preflight cannot read (with its reason); return their folders."""
        from nbgrader.api import MissingEntry

        unreadable, cells = [], {}
        for folder, (student, assignment) in sorted(submission_folders(coursedir).items()):
            if assignment not in cells:
                cells[assignment] = source_cells(coursedir, assignment)
            checked = preflight(
                Path(folder), f"{assignment}.ipynb", cells[assignment], shown_as=os.path.relpath(folder, coursedir.root)
            )
            if checked.notebook is not None:
                continue
            try:
                grade_unreadable(coursedir, assignment, student, checked.problems[0])
            except MissingEntry:  # no such assignment in the gradebook: nbgrader's loop says so for each student
                continue
            self.log.warning("%s: not graded, scored 0: %s", student, checked.problems[0])
            unreadable.append(folder)
        return unreadable
