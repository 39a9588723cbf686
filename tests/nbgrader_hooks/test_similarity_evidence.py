"""formgrader's similarity notes: `course similarity`'s evidence below the answer it concerns, for graders only."""

from __future__ import annotations

import nbformat

from course.grading.cells import grade_id
from course.nbgrader_hooks.similarity_evidence import SimilarityEvidence
from course.workflows.similarity_report import write_similarity
from tests.similarity.planted_class import write_class


def _page(project, student: str, resources: dict):
    """STUDENT's notebook as SimilarityEvidence leaves it for RESOURCES."""
    nb = nbformat.read(project / "autograder" / "submitted" / student / "lesson05" / "lesson05.ipynb", as_version=4)
    step = SimilarityEvidence(reports_dir=str(project / "autograder" / "reports"))
    return step.preprocess(nb, {"assignment_id": "lesson05", "student": student, **resources})[0]


def test_evidence_sits_below_the_answer_it_concerns_for_graders_only(tmp_path):
    """para-b's Q2 answer is followed by a note naming para-a with the shared spans marked; feedback shows none."""
    project = write_class(tmp_path)
    write_similarity(project, "lesson05")
    nb = _page(project, "para-b", {"submission_id": "abc"})
    notes = [i for i, c in enumerate(nb.cells) if c.metadata.get("course") == "similarity-evidence"]
    assert len(notes) == 1
    [at] = notes
    assert grade_id(nb.cells[at - 1]) == "answer-Q2"
    note = nb.cells[at].source
    assert 'data-other="para-a"' in note and "<mark>" in note and "不是判定" in note
    blank = _page(project, "blank-a", {"submission_id": "abc"})
    [code_note] = [c for c in blank.cells if c.metadata.get("course") == "similarity-evidence"]
    assert 'data-other="blank-b"' in code_note.source
    assert not any(c.metadata.get("course") for c in _page(project, "para-b", {}).cells)  # students' feedback
    assert not any(c.metadata.get("course") for c in _page(project, "h1", {"submission_id": "x"}).cells)
