"""docs/instructors.md's two ways of handing out and collecting the assignment, run command by command as written:
nbgrader's exchange without a hub (release, fetch, submit, collect, grade, feedback, fetch_feedback) and a file
handed in (`course hand-in`), on a fresh course repository. Each student's commands run in their own home folder
with `--student=ID` added, standing in for their own account."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.assignment.make_submissions import OUT
from tests.conftest import ROOT

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.long(40)]

SECTION = "## Handing out and collecting the assignment"
STUDENTS = {"2026001": "reference", "2026002": "swapped-comm-volumes"}
HAND_IN = "2026005"


def blocks() -> list[list[str]]:
    """The section's bash blocks, each as its command lines (comments dropped)."""
    text = (ROOT / "docs" / "instructors.md").read_text("utf-8")
    section = text[text.index(SECTION) :]
    section = section[: section.index("\n## ", len(SECTION))]
    return [
        [line.split(" #")[0].strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]
        for block in re.findall(r"```bash\n(.*?)```", section, re.S)
    ]


def run(line: str, cwd: Path, env: dict, student: str | None = None) -> subprocess.CompletedProcess:
    """One documented command line, in bash, as the instructor or STUDENT runs it."""
    command = f"{line} --student={shlex.quote(student)}" if student else line
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done


def test_the_documented_exchange_and_hand_in_paths_run_as_written(released, tmp_path):
    release, student_side, instructor, student_feedback, hand_in = blocks()
    project = tmp_path / "course"
    shutil.copytree(released.parent / "lessons", project / "lessons")
    (project / "pyproject.toml").write_text('[project]\nname = "course"\n\n[tool.course]\n', "utf-8")
    root = project / "autograder"
    shutil.copytree(released, root, ignore=shutil.ignore_patterns("release", "release-history", "gradebook.db"))
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "EXCHANGE": str(root / "exchange"),
        "HOME": str(tmp_path / "instructor"),
    }
    for line in release:
        run(line, root, env)
    assert (root / "exchange").stat().st_mode & 0o777 == 0o777
    homes = {}
    for student, sample in STUDENTS.items():
        homes[student] = home = tmp_path / "home" / student
        home.mkdir(parents=True)
        own = {**env, "HOME": str(home)}
        fetch, submit = student_side
        run(fetch, home, own, student)
        shutil.copyfile(OUT / f"{sample}.ipynb", home / "lesson05" / "lesson05.ipynb")  # their work
        run(submit, home, own, student)
    (tmp_path / "instructor" / "Downloads").mkdir(parents=True)
    shutil.copyfile(OUT / "reference.ipynb", tmp_path / "instructor" / "Downloads" / "lesson05.ipynb")
    [take_in] = hand_in
    said = run(take_in, root, env).stdout
    assert (
        f"course hand-in: lesson05.ipynb → autograder/submitted/{HAND_IN}/lesson05/, received 2026-12-01 09:00:00 UTC"
        in said
    )
    outputs = [run(line, root, env).stdout for line in instructor]
    assert sorted(p.name for p in (root / "submitted").iterdir()) == sorted([*STUDENTS, HAND_IN])
    assert f"course feedback on lesson05: 2 of 3 student(s) through the exchange: {', '.join(STUDENTS)}" in outputs[-1]
    assert (
        f"course feedback on lesson05: {HAND_IN} handed in files (no exchange submission): hand back "
        f"feedback/{HAND_IN}/lesson05/lesson05.html"
    ) in outputs[-1]
    for student, home in homes.items():
        [fetch_feedback] = student_feedback
        run(fetch_feedback, home, {**env, "HOME": str(home)}, student)
        assert [p.name for p in (home / "lesson05" / "feedback").glob("*/*.html")] == ["lesson05.html"]
