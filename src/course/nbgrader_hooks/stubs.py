"""nbgrader's ClearSolutions with one stub per solution region, so the released answer cell is the exercise.

Stock ClearSolutions replaces every region with one global code_stub (`raise NotImplementedError()`). The
source notebook stores each region's stub (the exercise's own lines, blanks and 填空 comments included) in
the cell's metadata course.stubs; this preprocessor puts them back in order and drops the list from the
release. Cells without course.stubs get nbgrader's stock behaviour.
"""

from __future__ import annotations

from nbgrader.preprocessors import ClearSolutions

STUBS_KEY = "stubs"


class ClearSolutionsWithStubs(ClearSolutions):
    """Replace the i-th solution region of a cell with the i-th stub from its metadata."""

    def _replace_solution_region(self, cell, language: str) -> bool:
        """Like ClearSolutions, but each region gets its own stub, written verbatim (it carries its indentation)."""
        course = cell.metadata.get("course", {})
        if STUBS_KEY not in course:
            return super()._replace_solution_region(cell, language)
        stubs = list(course.pop(STUBS_KEY))
        if not course:
            del cell.metadata["course"]
        name = cell.metadata.get("nbgrader", {}).get("grade_id", "?")
        lines, inside, used = [], False, 0
        for line in cell.source.split("\n"):
            if self.begin_solution_delimeter in line:
                if inside or used == len(stubs):
                    raise RuntimeError(
                        f"cell {name}: nested solution region or more regions than its {len(stubs)} stubs"
                    )
                inside = True
                lines += stubs[used].split("\n") if stubs[used] else []
                used += 1
            elif self.end_solution_delimeter in line:
                inside = False
            elif not inside:
                lines.append(line)
        if inside or used != len(stubs):
            raise RuntimeError(f"cell {name}: {used} complete solution regions for {len(stubs)} stubs")
        cell.source = "\n".join(lines)
        return True
