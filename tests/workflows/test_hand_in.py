"""`course hand-in`: a file handed in becomes submitted/<student>/<assignment>/ with nbgrader's timestamp.txt, a later
one replaces it whole, and bad input is refused before anything is written."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from course.errors import CourseError
from course.workflows.hand_in import hand_in, received_at


def test_a_later_hand_in_replaces_the_folder_and_its_time(tmp_path):
    first, second = tmp_path / "lesson05.ipynb", tmp_path / "notes.md"
    first.write_text("{}", "utf-8")
    second.write_text("x", "utf-8")
    hand_in(tmp_path / "autograder", "lesson05", "2026005", [first, second], received_at("2026-12-01T08:00+08:00"))
    done = hand_in(
        tmp_path / "autograder", "lesson05", "2026005", [first], datetime(2026, 12, 2, 1, 2, 3, 450000, tzinfo=UTC)
    )
    assert sorted(p.name for p in done.folder.iterdir()) == ["lesson05.ipynb", "timestamp.txt"]
    assert (done.folder / "timestamp.txt").read_text("utf-8") == "2026-12-02 01:02:03.450000 UTC"
    assert [p.name for p in done.folder.parent.iterdir()] == ["lesson05"]  # no staging folder left


@pytest.mark.parametrize(
    "student,files,message",
    [
        ("../x", ["lesson05.ipynb"], "student id '../x': expected letters, digits and . _ @ -"),
        ("2026005", ["missing.ipynb"], "missing.ipynb: not a file"),
        ("2026005", ["timestamp.txt"], "expected files with distinct names other than timestamp.txt: timestamp.txt"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_written(tmp_path, student, files, message):
    for name in ("lesson05.ipynb", "timestamp.txt"):
        (tmp_path / name).write_text("{}", "utf-8")
    with pytest.raises(CourseError) as refused:
        hand_in(tmp_path / "autograder", "lesson05", student, [tmp_path / f for f in files])
    assert message in str(refused.value) and not (tmp_path / "autograder").exists()


@pytest.mark.parametrize(
    "text,message",
    [
        ("2026-12-01 17:00", "give its UTC offset, e.g. 2026-12-01 17:00+08:00"),
        ("yesterday", "expected a date and time with its UTC offset"),
    ],
)
def test_a_received_time_needs_its_offset(text, message):
    with pytest.raises(CourseError) as refused:
        received_at(text)
    assert message in str(refused.value)
