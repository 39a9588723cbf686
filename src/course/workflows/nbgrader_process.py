"""Stock nbgrader commands run by the course tool, each a process of its own forked from one with nbgrader loaded.

Every nbgrader command the tool runs (a release, feedback, an export) is a fresh process, as `python -m nbgrader`
would be: it reads its config files anew, sees only the environment and working folder it is given, ends as an
interpreter ends (exit handlers, its exit status) and leaves its output. Starting a Python that imports nbgrader,
nbconvert and SQLAlchemy costs about 1.5 s of CPU; so the first command of a process starts a server (`serve`: a
Python that imports nbgrader's command line once, as course.nbgrader_hooks.speedups.nbgrader_main does, and keeps
that code out of the garbage collector's passes, as speedups.freeze_imports does), and each command is a child the
server forks, past those imports: a few hundredths of a second of start-up instead. The server ends when the process
that started it does (its stdin closes); one that died or was interrupted mid-command is replaced by a new one.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

SERVE = "from course.workflows.nbgrader_process import serve; serve()"
_lock = threading.Lock()  # one command at a time per server
_server: tuple[int, subprocess.Popen] | None = None  # (the process it serves, the server)


def run_forked(cwd: Path, args: Sequence[str], env: Mapping[str, str]) -> subprocess.CompletedProcess:
    """`python -m nbgrader ARGS` in CWD with exactly ENV (stdin empty), its output captured as text."""
    global _server
    with _lock, tempfile.TemporaryDirectory(prefix="course-nbgrader-") as scratch:
        out, err = Path(scratch) / "stdout", Path(scratch) / "stderr"
        request = {"cwd": str(cwd), "args": list(args), "env": dict(env), "out": str(out), "err": str(err)}
        if _server is None or _server[0] != os.getpid() or _server[1].poll() is not None:  # a fork has its own
            command = [sys.executable, "-c", SERVE]
            _server = os.getpid(), subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
            atexit.register(stop, *_server)
        server, child = _server[1], None
        try:
            server.stdin.write(json.dumps(request).encode() + b"\n")
            server.stdin.flush()
            child = answer(server, "pid")
            code = answer(server, "exit")
        except BaseException:  # interrupted mid-command (as subprocess.run, the command is killed), or no server
            if child is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGKILL)
            server.kill()
            server.wait()
            _server = None
            raise
        return subprocess.CompletedProcess(["nbgrader", *args], code, decoded(out), decoded(err))


def answer(server: subprocess.Popen, key: str) -> int:
    """The server's next answer (KEY of its JSON line); a server that ended without one is an error."""
    line = server.stdout.readline()
    if not line:
        raise RuntimeError(f"the nbgrader command server ended before answering (exit {server.wait()}; see its stderr)")
    return json.loads(line)[key]


def stop(owner: int, server: subprocess.Popen) -> None:
    """End SERVER when OWNER, the process that started it, ends: its stdin closes, it finishes, it is waited for."""
    if os.getpid() == owner:
        with contextlib.suppress(OSError):
            server.stdin.close()
        server.wait()


def decoded(path: Path) -> str:
    """What the command wrote to PATH, as subprocess.run(text=True) reads it."""
    return path.read_bytes().decode(errors="replace").replace("\r\n", "\n") if path.exists() else ""


def serve() -> None:
    """The server: nbgrader's command line imported once, then per request line on stdin a forked child runs the
    command (ending this function in the child only) while the server answers its pid, waits, answers its status."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the command and the caller, never the server
    from course import skip_unused_iri_checker

    skip_unused_iri_checker()  # before nbformat is imported, as nbgrader_main does
    from course.nbgrader_hooks.speedups import ask_alembic_once, freeze_imports

    ask_alembic_once()
    import nbgrader.apps.nbgraderapp  # noqa: F401 (what every command imports first)

    freeze_imports()  # the loaded code stays out of the children's collector passes and their exit's

    requests, replies = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    for line in requests:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            requests.close()
            replies.close()
            signal.signal(signal.SIGINT, signal.default_int_handler)
            return become_command(request)
        replies.write(json.dumps({"pid": pid}).encode() + b"\n")
        replies.flush()
        _, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
        replies.flush()
    sys.exit(0)


def become_command(request: dict) -> None:
    """In the forked child: the working folder, environment, argv, streams and sys.path a `python -c` of the
    command would have, then nbgrader's main; its SystemExit ends this interpreter as it ends that one."""
    from course.nbgrader_hooks.speedups import nbgrader_main

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    for fd, path in ((1, request["out"]), (2, request["err"])):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = open(0, encoding="utf-8", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)  # line by line
    sys.argv = ["-c", *request["args"]]  # sys.path starts with "" already: the server is a `python -c` too
    nbgrader_main()
