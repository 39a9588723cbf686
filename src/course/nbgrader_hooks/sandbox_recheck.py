"""nbgrader autograde step after SaveAutoGrades: the out-of-process re-check, the flag and the student's outcome.

The course's nbgrader config runs it in every autograde (stock `nbgrader autograde` and `course grade`
alike): the code items are re-checked in a second sandbox (course.grading.recheck), the verdicts that differ
from the kernel's go into the gradebook, and a submission is flagged when the re-check corrected it, the
sandbox stopped it, or its file had lost or changed graded cells (stripped metadata, edited read-only cells,
deleted cells: course.assignment.preflight, checked on the submitted file against the release the student
received). The outcome, with the assignment version and the submission it was graded from, goes to the student's
record and the grade report (course.nbgrader_hooks.outcome), where `course grade` and `course report` read it
(`course grade`'s workers write the record only; the grading process merges the batch into the report).
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool

from course.assignment.preflight import Problem, preflight
from course.assignment.versions import assignment_version, released_texts
from course.errors import Location
from course.grading.gradebook import gradebook
from course.nbgrader_hooks.outcome import StudentGrade, current_students, graded_stamp, save_outcome, write_record
from course.nbgrader_hooks.sandbox_execute import GradingSandbox, require_sandbox


def recheck_notebook(nb, rubric, source_cells: list, settings: GradingSandbox) -> dict:
    """The re-check's verdict per code item for the (sanitized) notebook NB."""
    from course.grading.recheck import recheck_code, student_cells

    cells = student_cells(nb, source_cells)
    return recheck_code(
        [code for _, code in cells],
        rubric,
        unsafe=settings.unsafe,
        labels=[label for label, _ in cells],
        call_seconds=settings.recheck_call_timeout_s,
        limits=settings.limits(),
    )


class RecheckOutOfProcess(NbGraderPreprocessor):
    """Re-check the code items outside the kernel, correct the gradebook, flag, and record the outcome."""

    merge_report = Bool(
        True,
        help="also put each outcome into reports/<assignment>-grade.json at once (off in "
        "`course grade`'s workers: the grading process merges the batch's outcomes)",
    ).tag(config=True)

    def preprocess(self, nb, resources):
        """Runs after SaveAutoGrades, so the gradebook already holds the kernel's scores."""
        from course.grading.recheck import apply_rechecks
        from course.grading.rubric import rubric_as_saved, rubric_path

        info = resources["nbgrader"]
        coursedir = CourseDirectory(config=self.config)
        rubric_file = rubric_path(Path(coursedir.root), info["assignment"])
        if not rubric_file.is_file():
            self.log.warning("no rubric at %s: code items are not re-checked", rubric_file)
            return nb, resources
        settings = GradingSandbox(config=self.config)
        student = info["student"]
        source = os.path.join(
            coursedir.format_path(coursedir.source_directory, ".", info["assignment"]), f"{info['notebook']}.ipynb"
        )
        source_cells = nbformat.read(source, as_version=4).cells
        require_sandbox(settings)
        verdicts = recheck_notebook(nb, rubric_as_saved(rubric_file), source_cells, settings)
        changes = apply_rechecks(info["db_url"], info["assignment"], student, verdicts)
        run = info.get("sandbox")
        folder = coursedir.format_path(coursedir.submitted_directory, student, info["assignment"])
        shown = os.path.relpath(folder, coursedir.root)
        released = released_texts(Path(coursedir.root), info["assignment"])
        problems = [
            *preflight(
                Path(folder), f"{info['notebook']}.ipynb", source_cells, shown_as=shown, released=released
            ).problems,
            *(
                Problem(Location(shown), f"{i.kind} in cell {i.cell_index + 1}: {i.message}")
                for i in (run.incidents if run else ())
            ),
        ]
        notes = [run.engine_reason] if run is not None and run.engine_reason else []
        version = assignment_version(Path(coursedir.root), info["assignment"])
        grade = StudentGrade(
            student, verdicts, changes, problems, notes, (run.memory_limit if run else None) or "", version or ""
        )
        if grade.flagged:
            self._flag(info)
        for problem in problems:
            self.log.warning("%s: %s", student, problem)
        for change in changes:
            self.log.warning(
                "%s: %s: kernel %s, re-check %s (%s)",
                student,
                change.item,
                change.kernel_score,
                change.recheck_score,
                change.reason,
            )
        stamp = graded_stamp(info["db_url"], info["assignment"], student, folder, version)
        if self.merge_report:
            current = current_students(coursedir, info["assignment"])
            save_outcome(coursedir.root, info["assignment"], grade, stamp, current)
        else:
            write_record(coursedir.root, info["assignment"], grade, stamp)
        return nb, resources

    @staticmethod
    def _flag(info: dict) -> None:
        """Flag this submission's notebook for a grader to look at."""
        with gradebook(info["db_url"]) as gb:
            notebook = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            notebook.flagged = True
            gb.db.commit()
