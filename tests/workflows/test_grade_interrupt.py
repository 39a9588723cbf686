"""Ctrl-C during `course grade`: one line saying how far it got and how to resume, exit 130, no traceback from the
workers; the rerun grades only what is left, an interrupted --force run included (issue 34, finding 6).

A real `course grade` process gets a real SIGINT, sent to its process group as a terminal's Ctrl-C is.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.assignment.make_submissions import OUT
from tests.classes import course_with_class

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.long(15)]

CLASS = 6  # Ctrl-C comes after 2 are graded: 4 left, seconds of work, so it always lands mid-batch


@pytest.fixture
def course(released, tmp_path):
    """lesson05 released, with a class of CLASS students who all handed in the reference notebook."""
    return course_with_class(released, tmp_path, {f"s{n:02d}": OUT / "reference.ipynb" for n in range(CLASS)})


def grade(root, capsys) -> subprocess.CompletedProcess:
    """`course grade lesson05` run to the end by the command line's main in this process (no second start-up of
    the course and nbgrader; the interrupted runs are processes of their own): its status and what it printed."""
    from course.cli import main

    capsys.readouterr()
    status = main(["grade", "lesson05", "--autograder", str(root)])
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["course", "grade", "lesson05"], status, out, err)


def interrupt(root, *args: str, after: int = 2) -> tuple[int, str]:
    """Start `course grade lesson05 --jobs 1 ARGS`, press Ctrl-C once AFTER students are graded; (status, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "course", "grade", "lesson05", "--autograder", str(root), "--jobs", "1", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    lines = []
    try:
        while len([line for line in lines if re.match(r"\[#* *\] \d+/", line)]) < after:
            line = proc.stderr.readline()
            assert line, f"course grade ended before {after} students were graded:\n{''.join(lines)}"
            lines.append(line)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the whole foreground process group
        start = time.monotonic()
        rest = proc.stderr.read()
        status = proc.wait(timeout=120)
        print(f"exited {time.monotonic() - start:.1f} s after Ctrl-C")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return status, "".join(lines) + rest


def counts(log: str) -> tuple[int, int]:
    """(graded, skipped) as `course grade` summarises its run."""
    found = re.search(r"graded (\d+) \((\d+) already graded, skipped\)", log)
    return int(found[1]), int(found[2])


def test_ctrl_c_says_where_it_stopped_exits_130_and_the_rerun_resumes(course, capsys):
    status, err = interrupt(course)
    assert status == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    [said] = [line for line in err.splitlines() if "interrupted" in line]
    done = int(
        re.fullmatch(rf"course grade: interrupted after (\d+) of {CLASS}; `course grade lesson05` resumes", said)[1]
    )
    assert 2 <= done < CLASS and err.rstrip().endswith(said)  # the last word, after the progress lines
    rerun = grade(course, capsys)
    assert rerun.returncode == 0, rerun.stderr
    assert counts(rerun.stdout) == (CLASS - done, done)


def test_an_interrupted_force_run_is_finished_by_the_next_run(course, capsys):
    assert grade(course, capsys).returncode == 0
    status, err = interrupt(course, "--force")
    assert status == 130 and "Traceback" not in err, err
    done = int(re.search(r"interrupted after (\d+) of", err)[1])
    assert 2 <= done < CLASS
    rerun = grade(course, capsys)  # without --force: the students the forced run had not reached are graded now
    assert rerun.returncode == 0, rerun.stderr
    assert counts(rerun.stdout) == (CLASS - done, done)
    assert f"graded {CLASS - done} — an interrupted --force run had not regraded them yet" in rerun.stdout
    assert counts(grade(course, capsys).stdout) == (0, CLASS)  # and then it is done


def test_ctrl_c_in_the_first_moment_says_so_too(course):
    proc = subprocess.Popen(
        [sys.executable, "-m", "course", "grade", "lesson05", "--autograder", str(course)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout.readline().startswith("course grade: the nbgrader course root")  # it has started
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert re.search(
        r"^course grade: interrupted (before anyone was graded; `course grade lesson05` starts it again"
        rf"|after 0 of {CLASS}; `course grade lesson05` resumes)$",
        err,
        re.M,
    ), err
