"""fileio.project_lock: two builds of one project (a preview and a `course build`, or two test workers) take turns."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from course.fileio import project_lock

HOLDER = """
import sys, time
from course.fileio import project_lock
with project_lock(sys.argv[1], what="holder"):
    print("held", flush=True)
    time.sleep(1.5)
    print(time.time(), flush=True)
"""


def test_a_second_build_waits_for_the_first_and_says_so(tmp_path, capsys):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    with project_lock(tmp_path, what="course build"):
        got_it = time.time()
    released = float(holder.stdout.readline())
    assert holder.wait(timeout=10) == 0
    assert got_it >= released  # not before the other process let go
    assert "course build: waiting for another build of this project to finish" in capsys.readouterr().out


def test_the_holder_may_take_the_lock_again(tmp_path, capsys):
    """A build draws its figures, which takes the same lock: no deadlock, no waiting."""
    with project_lock(tmp_path, what="course build"):
        with project_lock(tmp_path, what="drawing figures"):
            pass
    assert "waiting" not in capsys.readouterr().out


def test_ctrl_c_landing_right_after_the_rename_leaves_the_new_file_and_stays_a_ctrl_c(tmp_path, monkeypatch):
    """The rename done, an interrupt there has no temporary file left to remove: it ends as the KeyboardInterrupt."""
    import os

    import pytest

    from course.fileio import write_atomic

    real = os.replace

    def replace_then_ctrl_c(src, dst):
        real(src, dst)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", replace_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(tmp_path / "report.json", "{}\n")
    assert (tmp_path / "report.json").read_text("utf-8") == "{}\n" and os.listdir(tmp_path) == ["report.json"]


def test_link_or_copy_puts_one_copy_on_disk_in_place_of_what_was_there(tmp_path):
    from course.fileio import link_or_copy

    src, dst = tmp_path / "src.whl", tmp_path / "out" / "dst.whl"
    dst.parent.mkdir()
    src.write_bytes(b"new")
    dst.write_bytes(b"old")
    link_or_copy(src, dst)
    assert dst.read_bytes() == b"new" and os.path.samefile(src, dst)
    assert sorted(p.name for p in dst.parent.iterdir()) == ["dst.whl"]  # no temporary left
