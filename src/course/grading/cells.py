"""Find a submission's graded cells again, even after a student stripped metadata, edited or deleted cells.

Every graded cell of a generated source notebook has its grade id as its cell id too. A submitted cell is
matched by its nbgrader grade id, else by its cell id, else (read-only cells only) by its released text. A
read-only cell is edited when it differs from the release the student received (course.assignment.versions keeps
every release), so re-releasing an assignment flags nobody.
Both the nbgrader sanitize step (RestoreGradedCells) and `course grade`'s per-student report use this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"  # nbgrader's ClearHiddenTests delimiters
HIDDEN_END = "### END HIDDEN TESTS"
HIDDEN_FAILED = "HiddenCheckFailed"  # the exception the notebook's helpers raise when a hidden check fails
HIDDEN_REGION = re.compile(rf"^[ \t]*{re.escape(HIDDEN_BEGIN)}.*?^[ \t]*{re.escape(HIDDEN_END)}[^\n]*\n?", re.M | re.S)


def nbgrader_meta(cell) -> dict:
    """A cell's nbgrader metadata ({} when there is none)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def grade_id(cell) -> str | None:
    """The nbgrader grade id of a cell, if it has one."""
    return nbgrader_meta(cell).get("grade_id")


def is_test(cell) -> bool:
    """An autograder test cell: graded, not an answer."""
    meta = nbgrader_meta(cell)
    return bool(meta.get("grade")) and not meta.get("solution")


def released_text(source: str) -> str:
    """A cell's source as students receive it: hidden tests removed."""
    return HIDDEN_REGION.sub("", source)


@dataclass
class CellMatch:
    """Where each graded source cell sits in a submission."""

    index: dict[str, int] = field(default_factory=dict)  # grade id → submission cell index
    by_cell_id: list[str] = field(default_factory=list)  # found by cell id: their nbgrader metadata was missing
    by_text: list[str] = field(default_factory=list)  # found by released text: metadata and cell id missing
    missing: list[str] = field(default_factory=list)  # not in the submission at all
    edited: list[str] = field(default_factory=list)  # read-only cells whose text differs from the release


def match_cells(cells: list, source_cells: list, released: list[dict[str, str]] = ()) -> CellMatch:
    """Match the graded cells of SOURCE_CELLS (in order) to the submitted CELLS.

    RELEASED holds the read-only cells' texts of earlier releases (grade id → text): a read-only cell counts as
    edited only when it differs from the release the student received, the one (current first) it agrees with most.
    """
    match = CellMatch()
    labelled: dict[str, int] = {}
    for i, cell in enumerate(cells):
        labelled.setdefault(grade_id(cell), i)
    unlabelled = [i for i, cell in enumerate(cells) if grade_id(cell) is None]
    by_id = {cells[i].get("id"): i for i in unlabelled}
    by_text = {(cells[i].get("cell_type"), _text(cells[i]).strip()): i for i in unlabelled}
    current = {
        grade_id(c): released_text(_text(c)).strip()
        for c in source_cells
        if grade_id(c) and nbgrader_meta(c).get("locked")
    }
    versions = [current, *released]
    locked = []
    for source in source_cells:
        name = grade_id(source)
        if name is None:
            continue
        texts = [(source.get("cell_type"), v[name]) for v in versions if name in v]
        if name in labelled:
            match.index[name] = labelled[name]
        elif name in by_id:
            match.index[name] = by_id[name]
            match.by_cell_id.append(name)
        elif name in current and (key := next((k for k in texts if k in by_text), None)):
            match.index[name] = by_text[key]
            match.by_text.append(name)
        else:
            match.missing.append(name)
            continue
        if name in current:
            locked.append(name)
    submitted = {name: released_text(_text(cells[match.index[name]])).strip() for name in locked}
    received = max(versions, key=lambda v: sum(v.get(name) == submitted[name] for name in locked))
    match.edited = [name for name in locked if submitted[name] != received.get(name)]
    return match


def _text(cell) -> str:
    """A cell's source as one string (nbformat allows a list of lines on disk)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source
