"""The Jupyter kernel's side of the output budget: a cell's outputs far past it are dropped before they are sent.

The runner holds each cell to its budget as outputs arrive (kernel.CappedClient), but a cell that prints hundreds
of MB would still push every byte through the kernel protocol, and on a busy machine the runner reads slower than
the kernel writes: the unread messages pile up in both processes until the submission's memory limit ends the run.
So the kernel itself stops sending a cell's text and displays once they are past the budget. What it counts is
never more than the runner counts (a character takes at least one byte of JSON), so everything it drops the runner
would have dropped too, and the notebook comes out the same. This is a courtesy, not a limit: the student's code
can undo it, and then meets the memory limit instead.

This file runs inside the student's kernel (IPKernelApp.exec_lines, see startup_line), so only the standard library.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def install(shell, max_bytes: int) -> None:
    """Cap what each cell of SHELL sends on stdout, stderr and display at a little past MAX_BYTES."""
    used = [0]

    def restart(*_args, **_kwargs) -> None:
        """A new cell, or a cleared output: the runner starts a new budget too."""
        used[0] = 0

    def capped(write):
        def capped_write(text: str) -> int:
            room = max_bytes + 1 - used[0]
            if room > 0:
                write(text[:room])
                used[0] += min(room, len(text))
            return len(text)

        capped_write.uncapped = write
        return capped_write

    def wrap_streams() -> None:
        """Put the cap outermost for this cell: IPython's run_cell wraps write to keep all of it in its history."""
        restart()
        unwrap_streams()
        for stream in (sys.stdout, sys.stderr):
            stream.write = capped(stream.write)

    def unwrap_streams() -> None:
        for stream in (sys.stdout, sys.stderr):
            stream.write = getattr(stream.write, "uncapped", stream.write)

    publish, clear = shell.display_pub.publish, shell.display_pub.clear_output

    def capped_publish(data, *args, **kwargs) -> None:
        if kwargs.get("update"):  # an update replaces an output the runner already counted
            publish(data, *args, **kwargs)
        elif used[0] <= max_bytes:
            used[0] += len(json.dumps(data, default=str))
            publish(data, *args, **kwargs)

    def capped_clear(*args, **kwargs) -> None:
        restart()
        clear(*args, **kwargs)

    shell.display_pub.publish, shell.display_pub.clear_output = capped_publish, capped_clear
    shell.events.register("pre_execute", wrap_streams)
    shell.events.register("post_execute", unwrap_streams)


def startup_line(max_bytes: int) -> str:
    """The kernel's exec_lines entry that runs this file in a namespace of its own and installs the cap."""
    source = Path(__file__).read_text(encoding="utf-8") + f"\ninstall(shell, {int(max_bytes)})\n"
    return f"exec({source!r}, {{'__name__': 'course_kernel_output', 'shell': get_ipython()}})"
