"""`nbgrader release_feedback`, as the course's nbgrader config shapes it: per student, and every student accounted for.

Stock release_feedback copies each feedback page into the exchange under a digest of the student's submission secret
and the notebook's name, reading the submission's `timestamp.txt` and `submission_secret.txt` first; one student
without them (a submission handed in as files, or a stand-in page for a file grading could not take) stops the run
with a traceback, and the students after them get nothing. The course's config names this class
(`c.ExchangeFactory.release_feedback`), which:
1. creates the exchange root with the modes stock `release_assignment` gives it, where it does not exist yet;
2. releases each student on their own: a problem with one is reported and the others are released;
3. releases the page under every notebook the student submitted as well (a student who handed in the lesson's
   reading notebook fetches the page that says why it scored 0);
4. ends with who got feedback through the exchange, who handed in files (their page is to be handed back), and who
   got none and why; the run fails when anyone got none for a reason other than a file hand-in.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.exchange import ExchangeError
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import notebook_hash

SECRET = "submission_secret.txt"


@dataclass
class FeedbackRelease:
    """Who of one assignment's class got feedback, and how."""

    released: list[str] = field(default_factory=list)
    handed_back: dict[str, list[str]] = field(default_factory=dict)  # student → pages to hand back
    missed: dict[str, str] = field(default_factory=dict)  # student → why they got nothing

    def lines(self, assignment: str) -> list[str]:
        """The summary: one line per group, one per student who needs the instructors."""
        total = len(self.released) + len(self.handed_back) + len(self.missed)
        lines = [
            f"feedback on {assignment}: {len(self.released)} of {total} student(s) through the exchange"
            + (f": {', '.join(self.released)}" if self.released else "")
        ]
        lines += [
            f"feedback on {assignment}: {s} handed in files (no exchange submission): hand back {', '.join(pages)}"
            for s, pages in self.handed_back.items()
        ]
        lines += [f"feedback on {assignment}: {s} got no feedback: {why}" for s, why in self.missed.items()]
        return lines


def submission_secret(*folders: Path) -> str | None:
    """The secret `nbgrader submit` wrote for this submission, from the first folder that kept it (None: none did)."""
    for folder in folders:
        path = Path(folder) / SECRET
        if path.is_file():
            return path.read_text("utf-8")
    return None


def page_names(pages: list[Path], submitted: Path, assignment: str) -> dict[str, Path]:
    """Notebook name → the page released under it: each page under its own, and every notebook the student
    submitted without a page of its own under the assignment's page (or the only page)."""
    names = {p.stem: p for p in pages}
    main = names.get(assignment) or (pages[0] if len(pages) == 1 else None)
    for notebook in sorted(submitted.glob("*.ipynb")) if main else ():
        names.setdefault(notebook.stem, main)
    return names


class CourseReleaseFeedback(ExchangeReleaseFeedback):
    """Stock release_feedback, one student at a time, ending with who got feedback and who did not."""

    def ensure_root(self):
        """Create a missing exchange root as stock `nbgrader release_assignment` does (everyone may write)."""
        if not os.path.exists(self.root):
            ExchangeReleaseAssignment.ensure_root(self)
        super().ensure_root()

    def copy_files(self):
        """Release every student's pages; log the summary; fail after all others when anyone got none."""
        coursedir, assignment = self.coursedir, self.coursedir.assignment_id
        excluded = set(filter(None, coursedir.student_id_exclude.split(",")))
        pattern = coursedir.format_path(coursedir.feedback_directory, "(?P<student>[^/]+)", assignment, escape=True)
        folders = {
            m["student"]: Path(f)
            for f in sorted(glob.glob(self.src_path))
            if (m := re.fullmatch(pattern, f)) and os.path.isdir(f)
        }
        submitted = {
            Path(f).parent.name
            for f in glob.glob(
                coursedir.format_path(coursedir.submitted_directory, coursedir.student_id or "*", assignment)
            )
            if os.path.isdir(f)
        }
        outcome = FeedbackRelease()
        for student in sorted((set(folders) | submitted) - excluded):
            try:
                self.release_student(student, folders.get(student), outcome)
            except OSError as exc:
                outcome.missed[student] = f"{exc.__class__.__name__}: {exc}"
        for line in outcome.lines(assignment):
            (self.log.warning if " got no feedback" in line else self.log.info)("%s", line)
        if outcome.missed:
            raise ExchangeError(f"{len(outcome.missed)} student(s) got no feedback: {', '.join(outcome.missed)}")

    def release_student(self, student: str, folder: Path | None, outcome: FeedbackRelease) -> None:
        """Release one student's pages under their submission's secret, or say why they cannot be."""
        coursedir, assignment = self.coursedir, self.coursedir.assignment_id
        if folder is None:
            outcome.missed[student] = f"no feedback page yet: run `nbgrader generate_feedback {assignment}`"
            return
        pages = sorted(folder.glob("*.html"))
        if not pages:
            outcome.missed[student] = (
                f"{os.path.relpath(folder, coursedir.root)} holds no page: run "
                f"`nbgrader generate_feedback {assignment} --force`"
            )
            return
        submitted = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
        secret = submission_secret(folder, submitted)
        if secret is None:
            outcome.handed_back[student] = [os.path.relpath(p, coursedir.root) for p in pages]
            return
        for notebook, page in page_names(pages, submitted, assignment).items():
            digest = notebook_hash(secret=secret, notebook_id=notebook)
            staged = os.path.join(self.dest_path, f"{digest}-tmp.html")
            shutil.copy(page, staged)
            shutil.move(staged, os.path.join(self.dest_path, f"{digest}.html"))  # replaced at once
        outcome.released.append(student)
