"""A class of five, four through nbgrader's exchange (one handed in the lesson's reading notebook by mistake) and one
who handed in a file: stock `nbgrader release_feedback`, and `course feedback`, reach every one of them, say who got
the page and how, and a student's problem never stops the others."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from course.workflows.grade import run_nbgrader
from tests.assignment.make_submissions import OUT

pytestmark = [pytest.mark.long(20), pytest.mark.sandbox, pytest.mark.slow]

EXCHANGE = {"2026001": "reference", "2026002": "swapped-comm-volumes", "2026003": "forgot-extra"}
NOTES = "2026004"  # handed in lesson05-notes.ipynb through the exchange
HAND_IN = "2026005"  # emailed lesson05.ipynb to the instructors


def nbgrader(root: Path, *args: str) -> subprocess.CompletedProcess:
    """A stock nbgrader command in the course root, its output kept."""
    return run_nbgrader(root, *args, check=False)


def student_side(tmp: Path, student: str) -> list[str]:
    """The options that give a student their own home and nbgrader cache, as separate accounts would have."""
    return [
        f"--student={student}",
        f"--Exchange.cache={tmp / 'cache' / student}",
        f"--Exchange.assignment_dir={tmp / 'home' / student}",
    ]


def reading_notebook(path: Path) -> Path:
    """The lesson's reading notebook as the site gives it: prose, no assignment cells."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("# 第 5 课：ZeRO 与 FSDP")],
        metadata={"course": {"lesson": "lesson05", "notebook": "notes"}},
    )
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def course(released, tmp_path_factory):
    """Released through the exchange, four submitted and collected, one handed in, all graded by `course grade`."""
    from course.workflows.grade import grade_assignment
    from course.workflows.hand_in import hand_in, received_at

    tmp = tmp_path_factory.mktemp("five")
    root = shutil.copytree(released, tmp / "autograder")
    assert not (root / "exchange").exists()
    released_run = nbgrader(root, "release_assignment", "lesson05")
    assert released_run.returncode == 0, released_run.stderr
    for student, sample in {**EXCHANGE, NOTES: None}.items():
        fetched = nbgrader(root, "fetch_assignment", "lesson05", *student_side(tmp, student))
        assert fetched.returncode == 0, fetched.stderr
        work = tmp / "home" / student / "lesson05"
        if sample:
            shutil.copyfile(OUT / f"{sample}.ipynb", work / "lesson05.ipynb")
        else:
            (work / "lesson05.ipynb").unlink()
            reading_notebook(work / "lesson05-notes.ipynb")
        submitted = nbgrader(root, "submit", "lesson05", *student_side(tmp, student))
        assert submitted.returncode == 0, submitted.stderr
    assert nbgrader(root, "collect", "lesson05").returncode == 0
    emailed = Path(shutil.copyfile(OUT / "reference.ipynb", tmp / "lesson05.ipynb"))
    hand_in(root, "lesson05", HAND_IN, [emailed], received_at("2026-12-01T17:00+08:00"))
    grade_assignment(root, "lesson05")
    return tmp, root


def fetched_pages(tmp: Path, student: str) -> dict[str, str]:
    """What `nbgrader fetch_feedback` put in the student's home: notebook name → page."""
    return {p.stem: p.read_text("utf-8") for p in (tmp / "home" / student / "lesson05" / "feedback").glob("*/*.html")}


def test_hand_in_records_when_it_was_received_in_nbgraders_format(course):
    _, root = course
    folder = root / "submitted" / HAND_IN / "lesson05"
    assert sorted(p.name for p in folder.iterdir()) == ["lesson05.ipynb", "timestamp.txt"]
    assert (folder / "timestamp.txt").read_text("utf-8") == "2026-12-01 09:00:00.000000 UTC"


def test_stock_release_feedback_reaches_all_five_and_says_how(course):
    tmp, root = course
    generated = nbgrader(root, "generate_feedback", "lesson05")
    assert generated.returncode == 0, generated.stderr
    run = nbgrader(root, "release_feedback", "lesson05")
    assert run.returncode == 0, run.stderr
    assert (
        "feedback on lesson05: 4 of 5 student(s) through the exchange: 2026001, 2026002, 2026003, 2026004" in run.stderr
    )
    assert (
        "feedback on lesson05: 2026005 handed in files (no exchange submission): hand back "
        "feedback/2026005/lesson05/lesson05.html"
    ) in run.stderr
    assert "Traceback" not in run.stderr and "got no feedback" not in run.stderr
    for student in EXCHANGE:
        got = nbgrader(root, "fetch_feedback", "lesson05", *student_side(tmp, student))
        assert got.returncode == 0, got.stderr
        assert list(fetched_pages(tmp, student)) == ["lesson05"]
    notes = fetched_pages(tmp, NOTES)  # the page that says why the reading notebook scored 0
    assert nbgrader(root, "fetch_feedback", "lesson05", *student_side(tmp, NOTES)).returncode == 0
    notes = fetched_pages(tmp, NOTES)
    assert list(notes) == ["lesson05-notes"] and "这份提交无法评分" in notes["lesson05-notes"]
    assert "found lesson05-notes.ipynb" in notes["lesson05-notes"]
    assert (root / "feedback" / HAND_IN / "lesson05" / "lesson05.html").is_file()


def test_one_students_problem_never_stops_the_others(course, tmp_path):
    _, original = course
    root = shutil.copytree(original, tmp_path / "autograder")
    shutil.rmtree(root / "exchange" / "llm-scale-course" / "feedback", ignore_errors=True)
    nbgrader(root, "generate_feedback", "lesson05")
    (root / "feedback" / "2026001" / "lesson05" / "lesson05.html").unlink()  # the first one has no page
    broken = root / "feedback" / "2026002" / "lesson05" / "lesson05.html"
    broken.unlink()
    broken.mkdir()  # a page that cannot be copied
    run = nbgrader(root, "release_feedback", "lesson05")
    assert run.returncode != 0
    assert "feedback on lesson05: 2 of 5 student(s) through the exchange: 2026003, 2026004" in run.stderr
    assert (
        "feedback on lesson05: 2026001 got no feedback: feedback/2026001/lesson05 holds no page: run "
        "`nbgrader generate_feedback lesson05 --force`"
    ) in run.stderr
    assert "feedback on lesson05: 2026002 got no feedback: IsADirectoryError" in run.stderr
    released = list((root / "exchange" / "llm-scale-course" / "feedback").glob("*.html"))
    assert len(released) == 3  # 2026003's page, and 2026004's under both notebook names


def test_course_feedback_makes_and_releases_every_page_into_a_missing_exchange(course, tmp_path):
    from course.workflows.give_feedback import give_feedback

    _, original = course
    root = shutil.copytree(original, tmp_path / "autograder")
    shutil.rmtree(root / "exchange")  # a course that never used the exchange: the release makes it
    done = give_feedback(root, "lesson05")
    assert done.complete
    assert done.lines == [
        "feedback on lesson05: 4 of 5 student(s) through the exchange: 2026001, 2026002, 2026003, 2026004",
        "feedback on lesson05: 2026005 handed in files (no exchange submission): hand back "
        "feedback/2026005/lesson05/lesson05.html",
    ]
    assert (root / "exchange").stat().st_mode & 0o777 == 0o777


def test_course_feedback_releases_the_others_when_one_page_cannot_be_made(course, tmp_path):
    from course.workflows.give_feedback import give_feedback

    _, original = course
    root = shutil.copytree(original, tmp_path / "autograder")
    (root / "autograded" / "2026002" / "lesson05" / "lesson05.ipynb").write_text("{ not json", "utf-8")
    done = give_feedback(root, "lesson05")
    assert not done.complete
    assert done.lines[0] == "feedback on lesson05: 3 of 5 student(s) through the exchange: 2026001, 2026003, 2026004"
    assert "feedback on lesson05: 2026002 got no feedback: no feedback page yet" in done.lines[2]
    assert done.lines[-1].startswith("feedback on lesson05: nbgrader generate_feedback failed: ")
