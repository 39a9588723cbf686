"""nbgrader sanitize step: give a submission back the graded cells it lost before nbgrader grades it.

Runs first among Autograde's sanitize preprocessors. Cells whose nbgrader metadata was stripped get it back
(matched by cell id or read-only text); every matched cell's nbgrader flags are reset to the source's, so a
test cell cannot be turned into an ungraded one; a deleted read-only or graded cell (test, helpers, question,
written answer) is re-inserted from the source after its predecessor, so nothing waits for manual grading
forever (jupyter/nbgrader#1682). A read-only cell the student left as received gets its source text back
(hidden tests included), so OverwriteCells, which restores edited test code from the gradebook, warns
"Attribute 'checksum' … has changed!" only for a cell a student really edited (RecheckOutOfProcess's warning
names the student too). A deleted code answer cell is not re-inserted: the student's other code cells still run.
What was repaired is reported (and the submission flagged) by RecheckOutOfProcess, which checks the submitted
file the way `course grade` does.
"""

from __future__ import annotations

import copy
import os

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from course.assignment.versions import released_texts
from course.grading.cells import grade_id, match_cells, nbgrader_meta


class RestoreGradedCells(NbGraderPreprocessor):
    """Restore stripped nbgrader metadata and re-insert deleted graded cells from the source notebook."""

    def preprocess(self, nb, resources):
        """Match the submission against source/<assignment>/<notebook>.ipynb and repair it."""
        info = resources["nbgrader"]
        coursedir = CourseDirectory(config=self.config)
        path = os.path.join(
            coursedir.format_path(coursedir.source_directory, ".", info["assignment"]), f"{info['notebook']}.ipynb"
        )
        source = nbformat.read(path, as_version=4)
        match = match_cells(nb.cells, source.cells, released_texts(coursedir.root, info["assignment"]))
        graded = [c for c in source.cells if grade_id(c)]
        for cell in graded:
            if grade_id(cell) in match.index:
                submitted = nb.cells[match.index[grade_id(cell)]]
                submitted.metadata["nbgrader"] = copy.deepcopy(nbgrader_meta(cell))
                if nbgrader_meta(cell).get("locked") and grade_id(cell) not in match.edited:
                    submitted.source = cell.source  # as received: with its hidden tests back, OverwriteCells is quiet
        self._reinsert(nb, graded, set(match.missing))
        return nb, resources

    def _reinsert(self, nb, graded: list, missing: set[str]) -> None:
        """Put each missing read-only or graded cell back after the graded cell that precedes it in the source."""
        previous = None
        for cell in graded:
            name = grade_id(cell)
            if name in missing:
                if not (nbgrader_meta(cell).get("locked") or nbgrader_meta(cell).get("grade")):
                    continue
                nb.cells.insert(self._position(nb, previous), copy.deepcopy(cell))
            previous = name

    @staticmethod
    def _position(nb, previous: str | None) -> int:
        """Index just after the cell named PREVIOUS, or the first graded cell's index when there is none."""
        names = [grade_id(c) for c in nb.cells]
        if previous in names:
            return names.index(previous) + 1
        return next((i for i, name in enumerate(names) if name), len(names))
