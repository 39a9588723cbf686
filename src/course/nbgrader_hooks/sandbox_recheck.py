"""nbgrader autograde step after SaveAutoGrades: the out-of-process re-check, the flag and the student's outcome.

The course's nbgrader config runs it in every autograde (stock `nbgrader autograde` and `course grade`
alike): the code items are re-checked in a second sandbox (course.grading.recheck) — or the re-check
`course grade` made ahead on a worker is picked up from GradingSandbox.runs_dir —, the verdicts that differ
from the kernel's go into the gradebook, and a submission is flagged when the re-check corrected it, the
sandbox stopped it, or its file had lost or changed graded cells (stripped metadata, edited read-only cells,
deleted cells: course.assignment.preflight, checked on the submitted file against the release the student
received). The outcome, with the assignment version and the submission it was graded from, goes to the student's
record and the grade report (course.nbgrader_hooks.outcome), where `course grade` and `course report` read it.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from course.assignment.preflight import Problem, preflight
from course.assignment.versions import assignment_version, released_texts
from course.errors import Location
from course.fileio import write_atomic
from course.grading.gradebook import gradebook
from course.nbgrader_hooks.outcome import StudentGrade, graded_stamp, save_outcome
from course.nbgrader_hooks.sandbox_execute import GradingSandbox, prepared_or_made


def recheck_notebook(nb, rubric, source_cells: list, settings: GradingSandbox) -> dict:
    """The re-check's verdict per code item for the (sanitized) notebook NB."""
    from course.grading.recheck import recheck_code, student_code

    return recheck_code(student_code(nb, source_cells), rubric, unsafe=settings.unsafe)


def save_verdicts(path: Path, verdicts: dict) -> None:
    """Write a re-check made on a worker for RecheckOutOfProcess to pick up."""
    write_atomic(path, json.dumps({k: asdict(v) for k, v in verdicts.items()}, ensure_ascii=False))


def load_verdicts(path: Path) -> dict:
    """A re-check written by save_verdicts."""
    from course.grading.recheck import ItemVerdict

    return {k: ItemVerdict(**v) for k, v in json.loads(path.read_text("utf-8")).items()}


class RecheckOutOfProcess(NbGraderPreprocessor):
    """Re-check the code items outside the kernel, correct the gradebook, flag, and record the outcome."""

    def preprocess(self, nb, resources):
        """Runs after SaveAutoGrades, so the gradebook already holds the kernel's scores."""
        from course.grading.recheck import apply_rechecks
        from course.grading.rubric import load_rubric, rubric_path

        info = resources["nbgrader"]
        coursedir = CourseDirectory(config=self.config)
        rubric_file = rubric_path(Path(coursedir.root), info["assignment"])
        if not rubric_file.is_file():
            self.log.warning("no rubric at %s: code items are not re-checked", rubric_file)
            return nb, resources
        settings = GradingSandbox(config=self.config)
        student = info["student"]
        source = os.path.join(coursedir.format_path(coursedir.source_directory, ".", info["assignment"]),
                              f"{info['notebook']}.ipynb")
        source_cells = nbformat.read(source, as_version=4).cells
        verdicts = prepared_or_made(
            settings, student, nb, "recheck", load_verdicts,
            lambda: recheck_notebook(nb, load_rubric(rubric_file), source_cells, settings))
        changes = apply_rechecks(info["db_url"], info["assignment"], student, verdicts)
        run = info.get("sandbox")
        folder = coursedir.format_path(coursedir.submitted_directory, student, info["assignment"])
        shown = os.path.relpath(folder, coursedir.root)
        released = released_texts(Path(coursedir.root), info["assignment"])
        problems = [*preflight(Path(folder), f"{info['notebook']}.ipynb", source_cells, shown_as=shown,
                               released=released).problems,
                    *(Problem(Location(shown), f"{i.kind} in cell {i.cell_index + 1}: {i.message}")
                      for i in (run.incidents if run else ()))]
        notes = [run.engine_reason] if run is not None and run.engine_reason else []
        version = assignment_version(Path(coursedir.root), info["assignment"])
        grade = StudentGrade(student, verdicts, changes, problems, notes, (run.memory_limit if run else None) or "",
                             version or "")
        if grade.flagged:
            self._flag(info)
        for problem in problems:
            self.log.warning("%s: %s", student, problem)
        for change in changes:
            self.log.warning("%s: %s: kernel %s, re-check %s (%s)", student, change.item, change.kernel_score,
                             change.recheck_score, change.reason)
        save_outcome(coursedir.root, info["assignment"], grade,
                     graded_stamp(info["db_url"], info["assignment"], student, folder, version))
        return nb, resources

    @staticmethod
    def _flag(info: dict) -> None:
        """Flag this submission's notebook for a grader to look at."""
        with gradebook(info["db_url"]) as gb:
            notebook = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            notebook.flagged = True
            gb.db.commit()
