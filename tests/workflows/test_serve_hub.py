"""`course hub` for an instructor working as root (issue 34, finding 10): a checkout under a folder other accounts
cannot enter (/root) stopped the hub with one folder at a time; now every such folder is named in one `chmod o+x`
line, and `course hub --open-folders` applies exactly that. Checked as root and as an ordinary account, on a tree
the tests make (a home of root's with a checkout and a Python in it): no folder outside it changes mode."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from course.errors import CourseError
from course.workflows.serve_hub import check_hub, closed_folders, closed_on_the_way, open_folders, python_folders
from tests.open_view import in_open_view


@pytest.fixture
def project():
    """(project root, course root, the Python's folders) of a checkout and a Python inside a folder only its owner may
    enter, as /root is (in a folder of its own under /tmp: pytest's own temporary folders are closed to other accounts
    too)."""
    if os.geteuid() != 0:
        pytest.fail("the hub's checks are made as root (it starts each account's server as that account)")
    base = Path(tempfile.mkdtemp(prefix="course-hub-folders-"))
    base.chmod(0o755)
    home = base / "home-of-root"
    project = home / "course"
    (project / "src").mkdir(parents=True)
    (project / "node_modules" / ".bin").mkdir(parents=True)
    (project / "node_modules" / ".bin" / "configurable-http-proxy").touch()
    python = home / ".pyenv" / "versions" / "3.11" / "bin"
    python.mkdir(parents=True)
    course_root = project / "autograder"
    course_root.mkdir()
    (course_root / "nbgrader_config.py").touch()
    home.chmod(0o700)
    (project / "roster.yml").write_text(
        "version: 1\ninstructors: [daemon]\ngraders: [bin]\nstudents: [sys]\ngrading_account: root\n", "utf-8"
    )
    yield project, course_root, (python,)
    shutil.rmtree(base)


def test_the_closed_folders_are_named_in_one_line_with_the_option_that_opens_them(project):
    root, course_root, python = project
    with pytest.raises(CourseError) as error:
        check_hub(root, course_root, root / "roster.yml", "a-long-password", python)
    assert f"run `chmod o+x {root.parent}`" in str(error.value) and "`course hub --open-folders`" in str(error.value)


def test_open_folders_lets_others_pass_through_and_nothing_more(project):
    root, course_root, python = project
    assert open_folders(root, course_root, python) == [root.parent]
    assert root.parent.stat().st_mode & 0o777 == 0o701  # enter, not list or read
    assert closed_folders(root, course_root, python) == []
    check_hub(root, course_root, root / "roster.yml", "a-long-password", python)  # nothing left to stop the hub


@pytest.mark.slow
def test_an_ordinary_account_reaches_the_project_once_opened_and_cannot_start_the_hub(project):
    root, course_root, python = project
    reach_this_python = closed_on_the_way(python_folders())  # seen open by the account only: modes stay as they are
    name = f"ch{uuid.uuid4().hex[:8]}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", name], check=True)
    try:

        def as_user(*argv: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                in_open_view(["runuser", "-u", name, "--", *argv], reach_this_python), capture_output=True, text=True
            )

        assert as_user("test", "-d", str(root / "src")).returncode != 0  # the wall a student's server hit
        open_folders(root, course_root, python)
        assert as_user("test", "-d", str(root / "src")).returncode == 0
        assert as_user("ls", str(root.parent)).returncode != 0  # passing through is not listing
        hub = as_user(str(Path(sys.executable).parent / "course"), "hub", "--root", str(root))
        assert hub.returncode == 2 and "which needs root; run `course hub` as root" in hub.stderr
    finally:
        subprocess.run(["userdel", name], check=False)
