"""The whole `nbgrader generate_assignment` run, as the course's nbgrader config shapes it: safe, and remembered.

nbgrader lets an assignment with submissions be released again as long as its graded cells stay the same ones
(their text, checks and points may change); adding or removing graded cells is refused ("Cannot add or remove
cells … because there are submissions"), and with `--force` the release folder is deleted before that refusal.
The course's config names this exporter (`c.GenerateAssignment.exporter_class`), which wraps nbgrader's loop:
1. before anything is touched, a source whose graded cells differ from the gradebook's while it holds submissions
   stops the run with the cells added and removed and the way out;
2. release/<assignment>/ is put back as it was when nbgrader's loop fails for any other reason;
3. a successful release is kept by version (course.assignment.versions.archive_release), so submissions made
   from it are compared with it later.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import nbformat
from nbconvert.exporters import NotebookExporter
from nbgrader.converters import GenerateAssignment, NbGraderException

from course.assignment.versions import archive_release
from course.grading.cells import nbgrader_meta
from course.grading.deadlines import apply_due_date
from course.grading.gradebook import gradebook


def graded_cell_sets(cells) -> dict[str, set[str]]:
    """The cell names nbgrader's SaveCells keeps per kind (it refuses to change them once there are submissions)."""
    kinds = {"grade": set(), "solution": set(), "task": set(), "source": set()}
    for cell in cells:
        meta = nbgrader_meta(cell)
        name = meta.get("grade_id")
        if not name:
            continue
        for kind in ("grade", "solution", "task"):
            if meta.get(kind):
                kinds[kind].add(name)
        if meta.get("grade") or meta.get("solution") or meta.get("task") or meta.get("locked"):
            kinds["source"].add(name)
    return kinds


def cell_change_refusal(db_url: str, assignment: str, notebook: Path) -> str | None:
    """Why nbgrader would refuse to release NOTEBOOK (graded cells added or removed under submissions), or None."""
    from nbgrader.api import MissingEntry

    new = graded_cell_sets(nbformat.read(notebook, as_version=4).cells)
    with gradebook(db_url) as gb:
        try:
            stored = gb.find_notebook(notebook.stem, assignment)
        except MissingEntry:
            return None
        students = sorted({s.student.id for s in stored.submissions})
        if not students:
            return None
        old = {
            "grade": {c.name for c in stored.grade_cells},
            "solution": {c.name for c in stored.solution_cells},
            "task": {c.name for c in stored.task_cells},
            "source": {c.name for c in stored.source_cells},
        }
    if old == new:
        return None
    added = sorted(set().union(*new.values()) - set().union(*old.values()))
    removed = sorted(set().union(*old.values()) - set().union(*new.values()))
    changed = sorted(k for k in new if new[k] != old[k])
    what = "; ".join(
        filter(
            None,
            [
                added and f"adds {', '.join(added)}",
                removed and f"removes {', '.join(removed)}",
                not (added or removed) and f"changes which cells are {', '.join(changed)} cells",
            ],
        )
    )
    shown = ", ".join(students[:5]) + (f" and {len(students) - 5} more" if len(students) > 5 else "")
    return (
        f"{assignment}: the new source {what}, but the gradebook holds submissions of {assignment} ({shown}); "
        f"nbgrader cannot add or remove graded cells of an assignment with submissions, so nothing was changed "
        f"(release/{assignment} is as it was). Changing checks, text and points of the existing cells re-releases "
        f"fine. To release the new cells anyway, export the grades (`nbgrader export`), remove the assignment's "
        f"grades (`nbgrader db assignment remove {assignment} --force`: every grade of {assignment}, manual ones "
        f"included), run this again and regrade (`course grade {assignment}`)"
    )


class CourseReleaseExporter(NotebookExporter):
    """nbgrader's notebook exporter, which also makes the GenerateAssignment run that creates it safe and remembered."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        converter = self.parent
        if isinstance(converter, GenerateAssignment):
            loop = converter.convert_notebooks
            converter.convert_notebooks = lambda: self.run_safely(converter, loop)

    def run_safely(self, converter: GenerateAssignment, loop) -> None:
        """Refuse a cell change nbgrader would refuse before anything is deleted; restore release/ on failure."""
        coursedir = converter.coursedir
        pattern = converter._format_source("(?P<assignment_id>.*)", "(?P<student_id>.*)", escape=True)
        folders = {m["assignment_id"]: folder for folder in converter.assignments if (m := re.match(pattern, folder))}
        assignments = sorted(folders)
        if not converter.no_database:
            for assignment in assignments:
                for notebook in sorted(converter.assignments[folders[assignment]]):
                    refusal = cell_change_refusal(coursedir.db_url, assignment, Path(notebook))
                    if refusal:
                        self.log.error("%s", refusal)
                        raise NbGraderException(refusal)
        with tempfile.TemporaryDirectory(prefix="course-release-backup-") as backup:
            kept = {}
            for assignment in assignments:
                release = Path(coursedir.format_path(coursedir.release_directory, ".", assignment))
                if release.is_dir():
                    kept[release] = Path(backup) / assignment
                    shutil.copytree(release, kept[release], symlinks=True)
            try:
                loop()
            except BaseException:
                for release, copy in kept.items():
                    shutil.rmtree(release, ignore_errors=True)
                    shutil.copytree(copy, release, symlinks=True)
                    self.log.warning(
                        "kept %s as it was before this failed run", os.path.relpath(release, coursedir.root)
                    )
                raise
        for assignment in assignments:
            if not converter.no_database:
                apply_due_date(coursedir.root, coursedir.db_url, assignment)  # [tool.course] due_dates
            version = archive_release(Path(coursedir.root), assignment)
            if version:
                self.log.info(
                    "%s released as version %s (kept in release-history/%s/)", assignment, version, assignment
                )
