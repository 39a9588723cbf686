"""`course similarity`: collect one lesson's class, find and rank the pairs, write reports/<lesson>-similarity.*."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from course.config import load_config
from course.fileio import write_atomic
from course.grading.report_model import SimilarityInReport
from course.similarity.collect import collect
from course.similarity.find_pairs import find_pairs
from course.similarity.rank import Pair, strongest_pair
from course.similarity.render import render_csv, render_html, render_json, render_section


@dataclass(frozen=True)
class SimilarityResult:
    """What was written and found."""

    csv: Path
    html: Path
    students: int
    pairs: tuple[Pair, ...]


def write_similarity(
    project_root: Path, assignment: str, out_dir: Path | None = None, *, autograder: Path | None = None
) -> SimilarityResult:
    """Read the submissions (and the gradebook when there is one), rank the pairs, write CSV and HTML (and the
    JSON formgrader reads to show each student's evidence beside their answers); AUTOGRADER: another course root
    than the project's (the demo course)."""
    work = collect(Path(project_root), assignment, autograder=autograder)
    pairs = find_pairs(work)
    out = Path(out_dir) if out_dir else _course_root(project_root, autograder) / "reports"
    csv_path = write_atomic(out / f"{assignment}-similarity.csv", render_csv(pairs))
    html_path = write_atomic(out / f"{assignment}-similarity.html", render_html(assignment, pairs, len(work.works)))
    write_atomic(out / f"{assignment}-similarity.json", render_json(pairs, work.question_ids, work.answer_cell))
    return SimilarityResult(csv_path, html_path, len(work.works), tuple(pairs))


def _course_root(project_root: Path, autograder: Path | None) -> Path:
    """The nbgrader course root: AUTOGRADER if given, else the project's configured one."""
    return Path(autograder) if autograder else Path(project_root) / load_config(Path(project_root)).autograder_dir


def similarity_for_report(
    project_root: Path, assignment: str, *, autograder: Path | None = None
) -> SimilarityInReport | None:
    """The similarity section and each student's strongest pair for `course report`; None before the release."""
    from nbgrader.coursedir import CourseDirectory

    from course.grading.gradebook import nbgrader_config

    course_root = _course_root(project_root, autograder)
    coursedir = CourseDirectory(config=nbgrader_config(course_root))
    if not any(Path(coursedir.format_path(coursedir.release_directory, ".", assignment)).glob("*.ipynb")):
        return None  # nothing released yet, so nothing handed in to compare
    return similarity_in_report(find_pairs(collect(Path(project_root), assignment, autograder=autograder)))


def similarity_in_report(pairs: Sequence[Pair]) -> SimilarityInReport:
    """The similarity section and each student's strongest pair, from pairs already found (write_similarity's)."""
    strongest = {
        student: f"{pair.b if pair.a == student else pair.a} ({pair.score:.2f}): {pair.evidence[0].reason}"
        for student, pair in strongest_pair(pairs).items()
    }
    return SimilarityInReport(render_section(pairs), strongest)
