"""check_gradebook tells "no gradebook yet" (NoGradebook, which the demo reports on and `--move-out` accepts) from a
gradebook that cannot be read (any other CourseError, which stops them), by class rather than by wording."""

from __future__ import annotations

import sqlite3

import pytest

from course.errors import CourseError, NoGradebook
from course.grading.gradebook import GradebookAt, check_gradebook


@pytest.fixture
def sqlite_at(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "hub"))  # no config of the machine's is read
    (tmp_path / "autograder").mkdir()
    return GradebookAt(f"sqlite:///{tmp_path / 'autograder' / 'gradebook.db'}", tmp_path / "autograder")


def test_a_missing_gradebook_file_is_no_gradebook(sqlite_at):
    with pytest.raises(NoGradebook, match=r"no gradebook: none yet \(c.CourseDirectory.db_url from "):
        check_gradebook(sqlite_at, "none yet")


def test_an_empty_database_is_no_gradebook_and_stays_empty(sqlite_at, tmp_path):
    path = tmp_path / "autograder" / "gradebook.db"
    sqlite3.connect(path).close()
    with pytest.raises(NoGradebook, match=r"no gradebook: the database is empty; none yet"):
        check_gradebook(sqlite_at, "none yet")
    assert path.stat().st_size == 0


def test_a_file_that_is_no_database_is_another_error(sqlite_at, tmp_path):
    (tmp_path / "autograder" / "gradebook.db").write_text("not a database\n" * 100, "utf-8")
    with pytest.raises(CourseError, match=r"cannot read the gradebook: .*check that the file is nbgrader's") as err:
        check_gradebook(sqlite_at, "none yet")
    assert not isinstance(err.value, NoGradebook)
