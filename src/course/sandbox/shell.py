"""The kernel-less IPython shell that runs a student's code cells inside the grading sandbox.

The runner's shell engine (course.sandbox.relay) imports this module once (which imports IPython), forks, and
calls serve() in the child; the child then runs every code cell with an InteractiveShell, in process, and
reports what each cell showed to the runner over a private pipe. It imports only the standard library and
IPython (plus ipykernel's cell-name compiler, loaded on its own so that jupyter_client is never imported).

What the child sends, one JSON line per message, numbered from 0 in "seq", each acknowledged by one byte from
the runner before the next (the runner applies and acknowledges only the next number, so stray lines written
into the pipe are dropped):

- {"event": "ready"} once the shell exists;
- {"event": "output", "output": {...}, "display_id": str | None}: a display_data, execute_result or error output;
- {"event": "update", "display_id": str, "output": {...}}: new data for an earlier display with that id;
- {"event": "clear", "wait": bool}: the cell's clear_output();
- {"event": "oversized"}: in place of an output whose message would pass the size limit;
- {"event": "done", "index": i, "timed_out": bool}: cell i has finished (timed_out: it ran for its whole time
  limit, so the limit interrupted it, or would have but for the cell's own handling of SIGALRM).

Streams are not messages: the child's stdout and stderr (file descriptors 1 and 2, so subprocesses and C code
are caught too) are pipes the runner reads. Every message flushes them first and waits for its acknowledgement,
so the runner has all text printed before a message when it reads the message, and none printed after it.

The shell behaves like ipykernel's where a notebook can tell: the same cell file names (so tracebacks and
SyntaxError messages match), input() and getpass() refused the way a kernel without stdin refuses them, the
kernel's environment variables for subprocesses, the working directory on sys.path after the standard
library, exit() ending it after its cell as it ends a kernel (the next cell then fails with the dead-kernel
error), and obj? showing nothing (a kernel's pager payload is not kept in a notebook). It is not a
ZMQInteractiveShell, though: code that looks for a kernel (ipywidgets, tqdm.auto) finds none.

A cell's time limit is a SIGALRM timer in the child, armed only while the cell runs, whose handler is the
interpreter's own default_int_handler: when it rings, the cell gets a KeyboardInterrupt with the traceback a
kernel interrupted by nbclient shows. A cell that blocks, ignores or takes over SIGALRM (its own handler,
signal.alarm()) defeats that timer; the grading process then kills the whole sandbox from outside once the
cell is a grace period past its limit.
"""

import builtins
import getpass
import importlib.util
import json
import numbers
import os
import signal
import sys
import threading
import time
from base64 import b64encode
from collections.abc import Mapping
from pathlib import Path

from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.error import StdinNotImplementedError
from IPython.core.interactiveshell import InteractiveShell
from traitlets import Any, Type
from traitlets.config import Config

# What ipykernel's shell puts in the environment (ZMQInteractiveShell.init_environment), for subprocesses.
KERNEL_ENVIRONMENT = {
    "TERM": "xterm-color",
    "CLICOLOR": "1",
    "FORCE_COLOR": "1",
    "CLICOLOR_FORCE": "1",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
}
# The errors a kernel started without stdin (nbclient's default, and nbgrader's) raises.
NO_INPUT = "raw_input was called, but this frontend does not support input requests."
NO_GETPASS = "getpass was called, but this frontend does not support input requests."


def _json_value(value: object) -> object:
    """What a display value that JSON cannot hold becomes, as ipykernel's json_clean makes it."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return b64encode(value).decode("ascii")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return str(value)


def _text(value: object) -> str:
    """str(VALUE), or a placeholder when the student's __str__ itself fails."""
    try:
        return str(value)
    except Exception:
        return f"<unprintable {type(value).__name__} object>"


class Reporter:
    """Sends messages to the runner: flushes the streams first, waits for the acknowledgement after."""

    def __init__(self, report_fd: int, ack_fd: int, max_message_bytes: int):
        self.report_fd = report_fd
        self.ack_fd = ack_fd
        self.max_message_bytes = max_message_bytes
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.seq = 0
        self.streams = (sys.stdout, sys.stderr)

    def _encode(self, message: dict) -> bytes:
        """The message as a numbered JSON line, or the oversized stand-in when it would be too long."""
        data = (json.dumps({**message, "seq": self.seq}, default=_json_value) + "\n").encode("ascii")
        if len(data) > self.max_message_bytes:
            data = (json.dumps({"event": "oversized", "seq": self.seq}) + "\n").encode("ascii")
        self.seq += 1
        return data

    def _flush_streams(self) -> None:
        """Push out what the cell printed, so that it arrives before the message (a closed stream is skipped)."""
        for stream in self.streams:
            try:
                stream.flush()
            except (OSError, ValueError):
                pass

    def send(self, message: dict) -> None:
        """Send one message; a process the student forked from the shell sends nothing."""
        if os.getpid() != self.pid:
            return
        # Holding the cell's alarm until the acknowledgement is in keeps messages and acknowledgements paired.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        try:
            with self.lock:
                data = self._encode(message)
                self._flush_streams()
                while data:
                    data = data[os.write(self.report_fd, data) :]
                if not os.read(self.ack_fd, 1):
                    raise OSError("the grading runner stopped answering")
        except OSError:
            os._exit(70)  # the channel is gone (the student closed it): nothing more can be reported
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


class CellDisplayHook(DisplayHook):
    """sys.displayhook for cells: a cell's value becomes an execute_result output."""

    def start_displayhook(self) -> None:
        """Begin a result with no data yet."""
        super().start_displayhook()
        self.result: dict | None = None

    def write_output_prompt(self) -> None:
        """No "Out[n]:" text: the execution count goes with the result."""

    def write_format_data(self, format_dict: dict, md_dict: dict | None = None) -> None:
        """Keep the formatted value as the cell's result."""
        self.result = {
            "output_type": "execute_result",
            "execution_count": self.prompt_count,
            "data": format_dict,
            "metadata": md_dict or {},
        }

    def finish_displayhook(self) -> None:
        """Send the result, if the formatters produced any data."""
        self._is_active = False
        if self.result is not None and self.result["data"]:
            self.shell.reporter.send({"event": "output", "output": self.result, "display_id": None})
        self.result = None


class CellDisplayPublisher(DisplayPublisher):
    """display() and clear_output() for cells: display_data outputs, updates by display id, clearing."""

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs) -> None:
        """Send a display_data output (or an update of an earlier one with the same display id)."""
        self._validate_data(data, metadata)
        output = {"output_type": "display_data", "data": data, "metadata": metadata or {}}
        display_id = (transient or {}).get("display_id")
        event = "update" if update else "output"
        self.shell.reporter.send({"event": event, "output": output, "display_id": display_id})

    def clear_output(self, wait: bool = False) -> None:
        """Clear the cell's outputs now, or (WAIT) just before its next output."""
        self.shell.reporter.send({"event": "clear", "wait": bool(wait)})


def _kernel_compiler() -> type:
    """ipykernel's XCachingCompiler, which names cells as a kernel does, loaded without importing ipykernel."""
    package = importlib.util.find_spec("ipykernel")
    path = Path(package.submodule_search_locations[0]) / "compiler.py"
    spec = importlib.util.spec_from_file_location("course_sandbox_kernel_compiler", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.XCachingCompiler


class ErrorRecord(Mapping):
    """An error as IPython keeps it in its history (ename, evalue, traceback), its traceback formatted on first use.

    IPython 9 formats every error a second time for history_manager.exceptions, which only %notebook reads; a
    kernel pays that for each failing cell, the sandbox only when the student's code looks.
    """

    def __init__(self, shell: InteractiveShell, exception: BaseException, args: tuple, kwargs: dict):
        self.record = {"ename": type(exception).__name__, "evalue": str(exception)}
        self.make = lambda: InteractiveShell._format_exception_for_storage(shell, exception, *args, **kwargs)

    def __getitem__(self, key: str):
        if key == "traceback" and key not in self.record:
            self.record = self.make()
        return self.record[key]

    def __iter__(self):
        return iter(("ename", "evalue", "traceback"))

    def __len__(self) -> int:
        return 3


class CellShell(InteractiveShell):
    """An InteractiveShell whose displays, results and errors become notebook outputs sent to the runner."""

    displayhook_class = Type(CellDisplayHook)
    display_pub_class = Type(CellDisplayPublisher)
    compiler_class = Type(_kernel_compiler())
    reporter = Any()

    def enable_gui(self, gui: str | None = None) -> None:
        """%matplotlib inline needs no event loop; the sandbox has no display for any other."""
        if gui not in (None, "inline"):
            raise NotImplementedError(f"the grading sandbox has no display for the {gui} event loop")

    def ask_exit(self) -> None:
        """exit() and quit(): the shell stops after this cell (serve() checks exit_now)."""
        self.exit_now = True

    def _format_exception_for_storage(self, exception, *args, **kwargs) -> ErrorRecord:
        """The error's record for IPython's history, formatted only if something reads it."""
        return ErrorRecord(self, exception, args, kwargs)

    def _showtraceback(self, etype, evalue, stb) -> None:
        """An error output with the fields nbgrader reads: exception class name, str(exception), traceback."""
        error = {
            "output_type": "error",
            "ename": etype.__name__,
            "evalue": _text(evalue),
            "traceback": [_text(line) for line in stb],
        }
        self.error_shown = True
        self.reporter.send({"event": "output", "output": error, "display_id": None})


def _arm(seconds: float) -> None:
    """Start a cell's time limit: when it rings, the cell's code gets a KeyboardInterrupt (no handler frame)."""
    signal.signal(signal.SIGALRM, signal.default_int_handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def _disarm() -> None:
    """Stop the time limit once the cell has ended (a ring that is already on its way is ignored)."""
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, signal.SIG_IGN)


def _run_limited(shell: CellShell, source: str, seconds: float) -> None:
    """Run one cell under its time limit."""
    shell.error_shown = False
    _arm(seconds)
    result = None
    try:
        result = shell.run_cell(source, store_history=True)
    except (KeyboardInterrupt, SystemExit):  # raised outside the cell's own code, e.g. in a post-run hook
        shell.showtraceback()
    _disarm()
    error = result and (result.error_in_exec or result.error_before_exec)
    if error is not None and not shell.error_shown:  # traceback display suppressed: record it as a kernel's reply would
        shell.reporter.send(
            {
                "event": "output",
                "display_id": None,
                "output": {
                    "output_type": "error",
                    "ename": type(error).__name__,
                    "evalue": str(error),
                    "traceback": [],
                },
            }
        )


def _no_input(prompt: str = "") -> str:
    """input() in a notebook being graded: there is nobody to answer."""
    raise StdinNotImplementedError(NO_INPUT)


def _no_getpass(prompt: str = "Password: ", stream=None) -> str:
    """getpass() in a notebook being graded: there is nobody to answer."""
    raise StdinNotImplementedError(NO_GETPASS)


def _no_pager(shell: CellShell, data: object, start: int = 0, screen_lines: int = 0) -> None:
    """obj? and %page: a kernel sends the text to the frontend's pager, which nbclient does not keep."""


def _add_working_directory_to_path() -> None:
    """Put '' on sys.path before site-packages, where IPython's kernel app puts it."""
    if "" in sys.path:
        return
    packages = [i for i, p in enumerate(sys.path) if Path(p).name in ("site-packages", "dist-packages")]
    sys.path.insert(packages[0] if packages else len(sys.path), "")


def _make_shell(reporter: Reporter) -> CellShell:
    """The shell, set up like a kernel's: no input, kernel environment, no history database."""
    os.environ.update(KERNEL_ENVIRONMENT)
    _add_working_directory_to_path()
    sys.argv = sys.argv[:1]
    builtins.input = _no_input
    getpass.getpass = _no_getpass
    sys.stdout.reconfigure(line_buffering=True, errors="backslashreplace")
    sys.stderr.reconfigure(line_buffering=True, errors="backslashreplace")
    config = Config()
    config.HistoryManager.enabled = False  # In/Out/_i stay; only the sqlite file (and its thread) go
    shell = CellShell.instance(config=config, reporter=reporter)
    shell.set_hook("show_in_pager", _no_pager, 99)
    return shell


def serve(
    cells: list[tuple[int, str]], *, report_fd: int, ack_fd: int, cell_timeout_s: float, max_message_bytes: int
) -> None:
    """Run CELLS ((notebook index, source) in order) one after the other, reporting each one's end."""
    reporter = Reporter(report_fd, ack_fd, max_message_bytes)
    shell = _make_shell(reporter)
    reporter.send({"event": "ready"})
    for index, source in cells:
        began = time.monotonic()
        try:
            _run_limited(shell, source, cell_timeout_s)
        except KeyboardInterrupt:  # the limit rang between the cell's end and the disarm; it rings only once
            _disarm()
        if os.getpid() != reporter.pid:
            os._exit(0)  # a process the student forked inside the cell: its copy of the notebook ends here
        timed_out = time.monotonic() - began >= cell_timeout_s
        reporter.send({"event": "done", "index": index, "timed_out": timed_out})
        if shell.exit_now:
            return  # exit() or quit() in the cell: a kernel shuts down right after it, and so does the shell
