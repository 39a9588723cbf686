"""Memory is limited per submission as a whole where a memory cgroup can be had; the run says which limit applied."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import nbformat
import pytest

from course.sandbox.cgroup import memory_group
from course.sandbox.limits import Limits
from course.sandbox.notebook import execute_notebook_sandboxed

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.waits]

MiB = 2**20
# Four children of 200 MiB each, alive at once: each is well inside a 400 MiB per-process limit, together not.
FORKED_CHILDREN = """
import os, signal, time
pids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = bytearray(200 * 2**20)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(3)
        os._exit(0)
    pids.append(pid)
killed = sum(os.waitpid(p, 0)[1] & 0x7f == signal.SIGKILL for p in pids)
print('killed', killed)
"""


def run(limits: Limits):
    """The forking notebook run in the sandbox."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FORKED_CHILDREN)])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fork.ipynb"
        nbformat.write(nb, path)
        return execute_notebook_sandboxed(path, workdir=Path(tmp) / "work", limits=limits)


def cgroup_available() -> bool:
    """Whether this machine gives the sandbox a memory cgroup (root with a memory controller)."""
    made = memory_group(64 * MiB)
    if made is None:
        return False
    made[1].rmdir()
    return True


@pytest.mark.skipif(os.geteuid() != 0 or not cgroup_available(), reason="needs root and a memory cgroup controller")
def test_forked_children_cannot_multiply_the_memory_limit():
    result = run(Limits(memory_bytes=400 * MiB, cell_timeout_s=20, submission_timeout_s=60))
    assert "whole submission" in result.memory_limit and "cgroup" in result.memory_limit
    text = "".join(o.get("text", "") for o in result.executed.cells[0].outputs) if result.executed else ""
    assert result.status == "oom" or ("killed" in text and "killed 0" not in text), (result.status, text)


def test_the_run_says_which_memory_limit_applied():
    result = run(Limits(memory_bytes=2048 * MiB, cell_timeout_s=20, submission_timeout_s=60))
    assert result.status == "ok"
    assert "killed 0" in result.executed.cells[0].outputs[0]["text"]  # 800 MiB in all fits in 2 GiB
    assert result.memory_limit.startswith("2048 MiB")
    assert ("whole submission" in result.memory_limit) == (os.geteuid() == 0 and cgroup_available())
