"""The program that runs inside the grading sandbox, next to the student's code.

`course grade` starts it through course.sandbox.loader (`python -I -c`: the sandbox cannot import the course
package) with a JSON config as the only argument. It writes its results as JSON lines ("frames",
course.sandbox.frames) to the stdout pipe it was started with; everything the student's code prints goes
elsewhere. Three modes:

- shell (the default engine): run every code cell in an IPython InteractiveShell in a forked child process,
  without a kernel (course.sandbox.relay, course.sandbox.shell), one frame per executed cell;
- kernel: run every code cell with nbclient in a Jupyter kernel, one frame per executed cell, the kernel's
  outputs capped per cell while they arrive (course.sandbox.kernel);
- python: exec a piece of answer code with INPUT bound to a JSON value and send back its OUTPUT as JSON.

In both notebook modes errors do not stop the run (like nbgrader autograde), and the cell frames carry the
same nbformat outputs. The runner is the sandbox's pid 1 and makes itself non-dumpable before anything of the
submission runs (course.sandbox.confinement), so the student's code never holds the frame pipe; who can forge
what in the shell engine is said in course.sandbox.relay.

It imports only the standard library, plus nbformat and nbclient (kernel) or IPython (shell).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback

# Relative imports: inside the sandbox this package is course_sandbox (see course.sandbox.loader).
from .confinement import apply_limits, hide_from_student_code
from .frames import KERNEL_LOG_TAIL, send
from .kernel import run_kernel
from .relay import run_shell


def run_python(config: dict, channel: int) -> None:
    """Exec answer code with INPUT bound; send back the JSON of what it left in OUTPUT."""
    request = json.loads(sys.stdin.buffer.read(config["max_input_bytes"] + 1))
    sys.stdin = open(os.devnull)
    namespace = {"__name__": "__main__", "INPUT": request["input"]}
    exec(compile(request["code"], "<answer>", "exec"), namespace)
    send(channel, {"event": "result", "output": namespace.get("OUTPUT")})


def _written_files(root: str, inputs: set[str]) -> list[tuple[str, str]]:
    """(relative path, path) of the regular files under ROOT, outside the top-level names in INPUTS."""
    found = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        if rel == ".":
            dirs[:] = [d for d in dirs if d not in inputs]
            files = [f for f in files if f not in inputs]
        for name in files:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                found.append((os.path.normpath(os.path.join(rel, name)), path))
    return sorted(found)


def send_written_files(config: dict, channel: int) -> None:
    """Send the files the notebook wrote in its working directory, in chunks, once nothing of it runs any more.

    As the sandbox's pid 1 the runner first kills every other process in it (kill(-1) spares pid 1), so no
    leftover process of the student's changes a file while it is read.
    """
    if os.getpid() == 1:
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
    import base64

    chunk = config["file_chunk_bytes"]
    for rel, path in _written_files(config["cwd"], set(config.get("inputs", []))):
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        for start in range(0, max(len(data), 1), chunk):
            send(
                channel,
                {
                    "event": "file",
                    "path": rel,
                    "offset": start,
                    "data": base64.b64encode(data[start : start + chunk]).decode("ascii"),
                },
            )


def main(argv: list[str]) -> int:
    """Set the limits, keep the result channel private, run the requested mode."""
    config = json.loads(argv[1])
    channel = os.dup(1)  # not inherited: dup() gives a close-on-exec descriptor
    os.dup2(2, 1)  # anything printed from here on, by us or the student's code, goes to stderr
    hide_from_student_code()
    apply_limits(config["limits"])
    try:
        {"shell": run_shell, "kernel": run_kernel, "python": run_python}[config["mode"]](config, channel)
    except BaseException:
        send(channel, {"event": "runner-error", "detail": traceback.format_exc()[-KERNEL_LOG_TAIL:]})
        return 1
    finally:
        if config.get("keep_files"):
            send_written_files(config, channel)
    return 0
