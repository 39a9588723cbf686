"""How the runner keeps the submission's code away from itself and inside its limits, from within the sandbox.

The runner is the sandbox's pid 1 and makes itself non-dumpable before anything of the submission runs, so
same-uid code can neither signal it, ptrace it, nor open its file descriptors through /proc.
"""

from __future__ import annotations

import os
import resource
import signal


def _prctl(option: int, value: int) -> None:
    """prctl(2) on this process."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def hide_from_student_code() -> None:
    """Make this process non-dumpable: same-uid code (kernel, shell child) can neither ptrace it nor open its fds."""
    _prctl(4, 0)  # PR_SET_DUMPABLE


def die_with_parent() -> None:
    """Have Linux kill this process when the runner dies (outside a pid namespace nothing else would)."""
    _prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def reap_orphans(keep: set[int]) -> None:
    """As the sandbox's pid 1, collect exited orphans (never the kernel, which nbclient waits for itself)."""
    import threading
    import time

    def loop() -> None:
        while True:
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
            except ChildProcessError:
                time.sleep(0.2)
                continue
            if info is None or info.si_pid in keep:
                time.sleep(0.1)
                continue
            try:
                os.waitpid(info.si_pid, 0)
            except ChildProcessError:
                pass

    threading.Thread(target=loop, name="reaper", daemon=True).start()


def apply_limits(limits: dict[str, int]) -> None:
    """Set this process's rlimits (children inherit them): address space, tasks, file size, no core dumps."""
    for name, value in limits.items():
        resource.setrlimit(getattr(resource, name), (value, value))
