"""The program that runs inside the grading sandbox, next to the student's code.

`course grade` passes this file's source to `python -I -c` (the sandbox cannot import the course package) with
a JSON config as the only argument. It writes its results as JSON lines ("frames") to the stdout pipe it was
started with; everything the student's code prints goes elsewhere. Three modes:

- shell (the default engine): run every code cell in an IPython InteractiveShell in a forked child process,
  without a kernel (see sandbox_shell), one frame per executed cell;
- kernel: run every code cell with nbclient in a Jupyter kernel, one frame per executed cell, the kernel's
  outputs capped per cell while they arrive;
- python: exec a piece of answer code with INPUT bound to a JSON value and send back its OUTPUT as JSON.

In both notebook modes errors do not stop the run (like nbgrader autograde), and the cell frames carry the
same nbformat outputs. The runner is the sandbox's pid 1 and makes itself non-dumpable before anything of the
submission runs, so same-uid code can neither signal it, ptrace it, nor open its file descriptors through
/proc: the student's code never holds the frame pipe.

Who can forge what in the shell engine. The student's code runs in the child, which must report its outputs,
so it necessarily holds a write end: a private pipe to this runner (never the frame pipe, which the child
closes right after the fork). That pipe is the child's to abuse, and the runner treats it as untrusted: it
accepts only well-formed messages, outputs of the cell it is waiting for and the end of exactly that cell,
in notebook order; it numbers the cells itself, applies the output budget itself, and anything else is
dropped. The grading process, in turn, takes cell sources and metadata from its own copy of the notebook,
never from frames. So a student who writes messages into that pipe can at worst change their own cells'
outputs (which their code can print anyway), and the score does not rest on outputs: the out-of-process
re-check (course.grading.recheck) calls the student's functions again in a fresh sandbox and compares there.

It imports only the standard library, plus nbformat and nbclient (kernel) or IPython (shell). The grading
process also imports this module for the helpers it shares (the output budget, frame reading, the frame
names), so both sides cap outputs and read frames the same way.
"""

from __future__ import annotations

import codecs
import gc
import json
import os
import resource
import selectors
import signal
import subprocess
import sys
import traceback
import types

TIMEOUT_ENAME = "CellTimeoutError"
DEAD_KERNEL_ENAME = "DeadKernelError"
RUNNER_NOTE_BYTES = 4096  # the runner's own notes (timeout, dead kernel) stay even when a cell's budget is spent
TRUNCATED_MARK = "[course sandbox: output truncated"
KERNEL_LOG_TAIL = 4096
FRAME_SLACK = 64 * 1024  # a frame may exceed the per-cell output budget by this much (its JSON envelope)
ACK = b"\x06"  # the runner's answer to each message of the shell child
STREAM_READ = 1 << 20
DRAIN_READS = 64  # reads per drain of a pipe, so that a process that never stops writing cannot hold us
REAP_INTERVAL_S = 0.05


def output_size(output: dict) -> int:
    """Bytes an output takes in a frame (ASCII JSON, so every side counts it the same)."""
    return len(json.dumps(output))


def truncation_note(max_bytes: int) -> dict:
    """The stream output that replaces whatever a cell printed past its budget."""
    text = f"\n{TRUNCATED_MARK}: this cell printed more than {max_bytes} bytes; the rest was dropped]\n"
    return {"output_type": "stream", "name": "stderr", "text": text}


def _trim_stream(output: dict, room: int) -> dict | None:
    """The stream OUTPUT cut so that it fits in ROOM bytes, or None when nothing of it fits."""
    text = output.get("text")
    if isinstance(text, list):
        text = "".join(text)
    if not isinstance(text, str):
        return None
    head = dict(output, text=text)
    while text and output_size(head) > room:
        text = text[: max(0, len(text) * room // output_size(head) - 1)]
        head = dict(output, text=text)
    return head if text else None


class OutputBudget:
    """Keeps one cell's outputs under max_bytes: the output that crosses it is cut, a note added, the rest dropped."""

    def __init__(self, max_bytes: int, used: int = 0):
        self.max_bytes = max_bytes
        self.used = used
        self.full = False

    def _is_runner_note(self, output: dict) -> bool:
        """True for what the runner itself adds to a cell: the truncation note, a small timeout/dead-kernel error."""
        if output.get("output_type") == "stream":
            return output == truncation_note(self.max_bytes)
        return output.get("ename") in (TIMEOUT_ENAME, DEAD_KERNEL_ENAME) and output_size(output) <= RUNNER_NOTE_BYTES

    def admit(self, output: dict) -> list[dict]:
        """The outputs to keep in place of OUTPUT (itself, a cut-down copy plus the note, or nothing)."""
        if self._is_runner_note(output):
            self.full = self.full or output.get("output_type") == "stream"
            return [output]
        if self.full:
            return []
        size = output_size(output)
        if self.used + size <= self.max_bytes:
            self.used += size
            return [output]
        self.full = True
        head = _trim_stream(output, self.max_bytes - self.used) if output.get("output_type") == "stream" else None
        return [head, truncation_note(self.max_bytes)] if head else [truncation_note(self.max_bytes)]


def timeout_error(cell_timeout_s: int) -> dict:
    """The error output a cell gets when it hits its time limit (the shape of nbgrader's error_on_timeout)."""
    return {
        "output_type": "error",
        "ename": TIMEOUT_ENAME,
        "evalue": f"the cell ran longer than {cell_timeout_s} s (the limit per cell) and was stopped",
        "traceback": [],
    }


def dead_kernel_error() -> dict:
    """The error output of the cell during which the process running the notebook died."""
    return {"output_type": "error", "ename": DEAD_KERNEL_ENAME, "evalue": "the kernel stopped while running this cell",
            "traceback": []}


class FrameReader:
    """Splits a byte stream into JSON-object lines ("frames"), refusing lines over frame_limit and junk."""

    def __init__(self, frame_limit: int):
        self.frame_limit = frame_limit
        self.buffer = bytearray()
        self.skipping = False

    def feed(self, chunk: bytes) -> list[dict | None]:
        """Take more bytes; one entry per completed line: its frame, or None for junk or an overlong line."""
        self.buffer += chunk
        lines: list[dict | None] = []
        while (end := self.buffer.find(b"\n")) >= 0:
            line = bytes(self.buffer[:end])
            del self.buffer[: end + 1]
            lines.append(None if self.skipping else _frame(line))
            self.skipping = False
        if len(self.buffer) > self.frame_limit:
            self.buffer.clear()
            self.skipping = True
        return lines


def _frame(line: bytes) -> dict | None:
    """LINE as a frame if it is a JSON object with an event name."""
    try:
        frame = json.loads(line)
    except ValueError:
        return None
    return frame if isinstance(frame, dict) and isinstance(frame.get("event"), str) else None


def send(channel: int, frame: dict) -> None:
    """Write one frame (a JSON line) to the result channel."""
    data = (json.dumps(frame) + "\n").encode("ascii")
    while data:
        data = data[os.write(channel, data):]


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


def _tail(path: str) -> str:
    """The end of the kernel's own log, where a dying interpreter leaves its last words."""
    try:
        with open(path, "rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - KERNEL_LOG_TAIL))
            return log.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _make_client(nb, config: dict):
    """An nbclient NotebookClient that caps each cell's outputs as messages arrive."""
    from nbclient import NotebookClient

    class CappedClient(NotebookClient):
        """NotebookClient whose output() keeps each cell under the byte budget."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.budgets: dict[int, tuple[OutputBudget, int]] = {}

        def output(self, outs, msg, display_id, cell_index):
            """Record the output as nbclient does, then hold the cell to its budget."""
            out = super().output(outs, msg, display_id, cell_index)
            if out is None or not outs or outs[-1] is not out:
                return out
            budget, seen = self.budgets.get(cell_index, (None, 0))
            if budget is None or len(outs) - 1 < seen:  # first output, or the cell cleared its output since
                budget = OutputBudget(config["max_output_bytes"], sum(output_size(o) for o in outs[:-1]))
            kept = budget.admit(outs.pop())
            outs.extend(kept)
            self.budgets[cell_index] = (budget, len(outs))
            return kept[0] if kept else None

    on_timeout = {k: v for k, v in timeout_error(config["cell_timeout_s"]).items() if k != "output_type"}
    return CappedClient(
        nb,
        timeout=config["cell_timeout_s"],
        interrupt_on_timeout=True,
        error_on_timeout=on_timeout,
        allow_errors=True,
        kernel_name="python3",
        startup_timeout=config["startup_timeout_s"],
        shutdown_kernel="immediate",
        resources={"metadata": {"path": config["cwd"]}},
    )


def unshown_error(reply: dict, outputs: list) -> dict | None:
    """The error a cell's execute reply reports when the cell displayed none (its traceback display was
    suppressed): nbgrader's Execute records it the same way, so such a test cell still fails."""
    if reply.get("status") != "error" or any(o.get("output_type") == "error" for o in outputs):
        return None
    return {"output_type": "error", "ename": reply.get("ename", "Error"), "evalue": reply.get("evalue", ""),
            "traceback": list(reply.get("traceback", []))}


def _cell_frame(index: int, cell, extra_output: dict | None = None) -> dict:
    """The frame that reports one executed code cell."""
    outputs = list(cell.get("outputs", []))
    if extra_output is not None:
        outputs.append(extra_output)
    return {"event": "cell", "index": index, "execution_count": cell.get("execution_count"), "outputs": outputs}


def run_kernel(config: dict, channel: int) -> None:
    """Execute every code cell of the notebook in a Jupyter kernel, sending a frame after each one."""
    # jsonschema (via nbformat) would import this optional URI checker, whose grammar takes ~1 s to build;
    # reading a notebook never needs it, and every submission would pay for it.
    sys.modules.setdefault("rfc3987_syntax", None)
    import nbformat
    from nbclient.exceptions import DeadKernelError

    send(channel, {"event": "hello"})
    nb = nbformat.read(config["notebook"], as_version=4)
    client = _make_client(nb, config)
    replies: dict[int, dict] = {}
    client.on_cell_executed = lambda cell, cell_index, execute_reply: replies.__setitem__(cell_index, execute_reply)
    with open(config["kernel_log"], "wb") as log, client.setup_kernel(
        stdin=subprocess.DEVNULL, stdout=log, stderr=log
    ):
        kernel = client.km.provisioner.process
        if os.getpid() == 1:
            reap_orphans({kernel.pid})
        for name, value in config["kernel_limits"].items():
            resource.prlimit(kernel.pid, getattr(resource, name), (value, value))
        send(channel, {"event": "started"})
        for index, cell in enumerate(nb.cells):
            if not runs(cell, config.get("skip_tag", "")):
                continue
            try:
                client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
            except DeadKernelError:
                kernel.poll()
                send(channel, _cell_frame(index, cell, dead_kernel_error()))
                send(channel, {"event": "kernel-died", "index": index, "exit_code": kernel.returncode,
                               "log_tail": _tail(config["kernel_log"])})
                return
            content = (replies.get(index) or {}).get("content", {})
            timed_out = content.get("ename") == TIMEOUT_ENAME
            send(channel, _cell_frame(index, cell, timeout_error(config["cell_timeout_s"]) if timed_out
                                      else unshown_error(content, cell.get("outputs", []))))
        send(channel, {"event": "finished"})


# ---------------------------------------------------------------- the shell engine


class CellOutputs:
    """One cell's outputs as the shell child reports them, held to the cell's output budget as they arrive."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.clear_on_next = False
        self._reset()

    def _reset(self) -> None:
        """Start over with no outputs (a new cell, or clear_output)."""
        self.outputs: list[dict] = []
        self.budget = OutputBudget(self.max_bytes)
        self.display_ids: dict[str, list[int]] = {}
        self.stream_name: str | None = None
        self.stream_text: list[str] = []
        self.stream_chars = 0

    def _before_output(self) -> None:
        """Carry out a clear_output(wait=True) that waited for this output."""
        if self.clear_on_next:
            self.clear_on_next = False
            self._reset()

    def _admit_stream(self) -> None:
        """Close the stream output being written (consecutive text of one stream is one output)."""
        if self.stream_text:
            stream = {"output_type": "stream", "name": self.stream_name, "text": "".join(self.stream_text)}
            self.outputs.extend(self.budget.admit(stream))
        self.stream_name, self.stream_text, self.stream_chars = None, [], 0

    def add_text(self, name: str, text: str) -> None:
        """Text the cell printed on stream NAME; what is far past the budget is dropped right away."""
        self._before_output()
        if self.stream_name != name:
            self._admit_stream()
            self.stream_name = name
        # Every character takes at least one byte of JSON, so keeping a little more than the room left is
        # enough for the budget to cut the stream at the right place and add its note.
        room = 0 if self.budget.full else self.max_bytes - self.budget.used + 64 - self.stream_chars
        if room > 0 and text:
            self.stream_text.append(text[:room])
            self.stream_chars += min(room, len(text))

    def add(self, output: dict, display_id: str | None) -> None:
        """A display_data, execute_result or error output."""
        self._before_output()
        self._admit_stream()
        kept = self.budget.admit(output)
        if display_id is not None and kept == [output]:
            self.display_ids.setdefault(display_id, []).append(len(self.outputs))
        self.outputs.extend(kept)

    def add_oversized(self) -> None:
        """An output too large to be sent at all: the cell's budget is spent, as by any output past it."""
        self._before_output()
        self._admit_stream()
        if not self.budget.full:
            self.budget.full = True
            self.outputs.append(truncation_note(self.max_bytes))

    def update(self, display_id: str, output: dict) -> None:
        """New data for this cell's displays with DISPLAY_ID (as nbclient applies update_display_data)."""
        for position in self.display_ids.get(display_id, []):
            self.outputs[position] = dict(self.outputs[position], data=output["data"], metadata=output["metadata"])

    def clear(self, wait: bool) -> None:
        """clear_output(): now, or just before the next output."""
        self.clear_on_next = wait
        if not wait:
            self._reset()

    def finish(self, note: dict | None) -> list[dict]:
        """The cell's outputs, NOTE (a runner error) appended, capped once more as a whole."""
        self._admit_stream()
        outputs = self.outputs + ([note] if note else [])
        final = OutputBudget(self.max_bytes)
        return [kept for output in outputs for kept in final.admit(output)]


def _is_str_list(value: object) -> bool:
    """True for a list of strings."""
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _shell_output(value: object) -> dict | None:
    """VALUE as a display_data, execute_result or error output with only the fields nbformat has, else None."""
    if not isinstance(value, dict):
        return None
    kind = value.get("output_type")
    if kind == "error":
        ename, evalue, lines = value.get("ename"), value.get("evalue"), value.get("traceback")
        if isinstance(ename, str) and isinstance(evalue, str) and _is_str_list(lines):
            return {"output_type": kind, "ename": ename, "evalue": evalue, "traceback": lines}
        return None
    if kind not in ("display_data", "execute_result"):
        return None
    if not isinstance(value.get("data"), dict) or not isinstance(value.get("metadata"), dict):
        return None
    output = {"output_type": kind, "data": value["data"], "metadata": value["metadata"]}
    if kind == "execute_result":
        count = value.get("execution_count")
        output["execution_count"] = count if isinstance(count, int) and count >= 0 else None
    return output


class ShellRelay:
    """The runner's side of the shell engine: the child's messages and streams become cell frames, in order."""

    def __init__(self, config: dict, channel: int, cells: list[tuple[int, str]], child: int, pipes: dict[str, int]):
        self.config = config
        self.channel = channel
        self.child = child
        self.expected = [index for index, _ in cells]
        self.reported = 0
        self.next_seq = 0
        self.ready = False
        self.exit_code: int | None = None
        self.cell = CellOutputs(config["max_output_bytes"])
        self.reader = FrameReader(config["max_output_bytes"] + FRAME_SLACK)
        self.report_fd, self.ack_fd = pipes["report"], pipes["ack"]
        decoder = codecs.getincrementaldecoder("utf-8")
        self.streams = {pipes[name]: (name, decoder("replace")) for name in ("stdout", "stderr")}
        self.stderr_tail = bytearray()

    @property
    def finished(self) -> bool:
        """True once every code cell has been reported."""
        return self.ready and self.reported == len(self.expected)

    def run(self) -> None:
        """Relay until every cell is reported or the child is gone; then report how it ended."""
        for fd in (self.report_fd, self.ack_fd, *self.streams):
            os.set_blocking(fd, False)
        with selectors.DefaultSelector() as selector:
            for fd in (self.report_fd, *self.streams):
                selector.register(fd, selectors.EVENT_READ)
            while not self.finished and self.exit_code is None:
                for key, _ in selector.select(timeout=REAP_INTERVAL_S):
                    chunk = self._read(key.fd)
                    if chunk == b"":
                        selector.unregister(key.fd)
                    elif chunk:
                        self._take(key.fd, chunk)
                self._reap()
        if not self.finished:  # the child is gone: all it wrote is in the pipes
            for fd in (self.report_fd, *self.streams):
                self._drain(fd)
        if not self.finished:
            self._report_death()

    @staticmethod
    def _read(fd: int) -> bytes | None:
        """What FD has now: None when nothing, b"" at its end (or when it is unusable)."""
        try:
            return os.read(fd, STREAM_READ)
        except BlockingIOError:
            return None
        except OSError:
            return b""

    def _drain(self, fd: int) -> None:
        """Take what FD holds right now (a bounded number of reads)."""
        for _ in range(DRAIN_READS):
            chunk = self._read(fd)
            if not chunk:
                return
            self._take(fd, chunk)

    def _take(self, fd: int, chunk: bytes) -> None:
        """Apply bytes read from FD: printed text, or messages (each answered once applied)."""
        if fd != self.report_fd:
            self._add_stream(fd, chunk)
            return
        for frame in self.reader.feed(chunk):
            if self.finished:
                return
            if self._in_sequence(frame):
                for stream in self.streams:
                    self._drain(stream)  # text printed before this message belongs before its output
                self._handle(frame)
                self._ack()

    def _in_sequence(self, frame: dict | None) -> bool:
        """True (and count it) when FRAME is the child's next message; stray lines are dropped unanswered."""
        if frame is None or frame.get("seq") != self.next_seq:
            return False
        self.next_seq += 1
        return True

    def _add_stream(self, fd: int, chunk: bytes) -> None:
        """Printed text: it goes to the running cell; the end of stderr is also kept for a crash report."""
        name, decoder = self.streams[fd]
        if name == "stderr":
            self.stderr_tail += chunk
            del self.stderr_tail[:-KERNEL_LOG_TAIL]
        text = decoder.decode(chunk)
        if self.ready and not self.finished:
            self.cell.add_text(name, text)

    def _ack(self) -> None:
        """Let the child go on (never blocking: a child that stopped reading only stops itself)."""
        try:
            os.write(self.ack_fd, ACK)
        except OSError:
            pass

    def _handle(self, frame: dict) -> None:
        """Apply one message of the child; anything malformed, or the end of another cell, is dropped."""
        event = frame.get("event")
        if not self.ready:
            if event == "ready":
                self.ready = True
                send(self.channel, {"event": "started"})
                self._finish_if_done()
            return
        display_id = frame.get("display_id") if isinstance(frame.get("display_id"), str) else None
        if event == "output" and (output := _shell_output(frame.get("output"))):
            self.cell.add(output, display_id)
        elif event == "update" and display_id and (output := _shell_output(frame.get("output"))) and "data" in output:
            self.cell.update(display_id, output)
        elif event == "clear":
            self.cell.clear(frame.get("wait") is True)
        elif event == "oversized":
            self.cell.add_oversized()
        elif event == "done" and frame.get("index") == self.expected[self.reported]:
            note = timeout_error(self.config["cell_timeout_s"]) if frame.get("timed_out") is True else None
            self._send_cell(note)
            self._finish_if_done()

    def _send_cell(self, note: dict | None) -> None:
        """Send the frame of the cell being run; the runner numbers cells itself, as nbclient does."""
        self.reported += 1
        index = self.expected[self.reported - 1]
        frame = {"event": "cell", "index": index, "execution_count": self.reported, "outputs": self.cell.finish(note)}
        send(self.channel, frame)
        self.cell = CellOutputs(self.config["max_output_bytes"])

    def _finish_if_done(self) -> None:
        """Send the end of the run once the last cell is reported."""
        if self.finished:
            send(self.channel, {"event": "finished"})

    def _reap(self) -> None:
        """Collect exited children (as pid 1, also the student's orphans); note the shell child's exit."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.child:
                self.exit_code = os.waitstatus_to_exitcode(status)

    def _report_death(self) -> None:
        """The child died before the last cell ended: that cell gets the dead-kernel error, the run ends."""
        tail = self.stderr_tail.decode("utf-8", "replace")
        if not self.ready:
            raise RuntimeError(f"the notebook shell did not start (exit status {self.exit_code}):\n{tail}")
        index = self.expected[self.reported]
        self._send_cell(dead_kernel_error())
        send(self.channel, {"event": "kernel-died", "index": index, "exit_code": self.exit_code, "log_tail": tail})


def runs(cell: dict, skip_tag: str) -> bool:
    """True for a code cell that is executed: some source, and not tagged SKIP_TAG (nbclient's skip_cells_with_tag)."""
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else source
    tags = cell.get("metadata", {}).get("tags", [])
    return cell.get("cell_type") == "code" and bool(source.strip()) and not (skip_tag and skip_tag in tags)


def _notebook_cells(path: str, skip_tag: str) -> list[tuple[int, str]]:
    """(index, source) of the notebook's executed code cells, read as plain JSON (the grader wrote the file)."""
    with open(path, encoding="utf-8") as handle:
        notebook = json.load(handle)
    cells = []
    for index, cell in enumerate(notebook["cells"]):
        if runs(cell, skip_tag):
            source = cell["source"]
            cells.append((index, "".join(source) if isinstance(source, list) else source))
    return cells


def _load_module(name: str, source: str) -> types.ModuleType:
    """Run SOURCE as module NAME (the sandbox cannot import the course package)."""
    import linecache

    module = types.ModuleType(name)
    sys.modules[name] = module
    filename = f"{name}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)  # for tracebacks
    exec(compile(source, filename, "exec"), module.__dict__)
    return module


def _shell_child(shell: types.ModuleType, config: dict, cells: list[tuple[int, str]], channel: int,
                 pipes: dict[str, tuple[int, int]]) -> None:
    """In the forked child: drop the runner's descriptors, take the stream pipes as fd 1 and 2, run the cells."""
    status = 1
    try:
        os.setsid()  # its own process group, like a kernel: killpg() on the runner's group does not reach it
        die_with_parent()
        for fd in (channel, pipes["report"][0], pipes["ack"][1], pipes["stdout"][0], pipes["stderr"][0]):
            os.close(fd)
        for target, name in ((1, "stdout"), (2, "stderr")):
            os.dup2(pipes[name][1], target)
            os.close(pipes[name][1])
        apply_limits(config["kernel_limits"])
        shell.serve(cells, report_fd=pipes["report"][1], ack_fd=pipes["ack"][0],
                    cell_timeout_s=config["cell_timeout_s"], max_message_bytes=config["max_output_bytes"] + FRAME_SLACK)
        status = 0
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(status)


def _end_child(child: int) -> None:
    """Kill the shell child and its process group (in the sandbox, pid 1 exiting would do it too)."""
    for kill in (os.killpg, os.kill):
        try:
            kill(child, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.waitpid(child, 0)
    except ChildProcessError:
        pass


def run_shell(config: dict, channel: int) -> None:
    """Execute every code cell in an IPython shell in a forked child, relaying a frame after each one."""
    send(channel, {"event": "hello"})
    cells = _notebook_cells(config["notebook"], config.get("skip_tag", ""))
    gc.disable()  # IPython's ~100,000 objects live as long as the sandbox: no collector passes while importing,
    shell = _load_module("course_sandbox_shell", config["shell_source"])  # once, before the fork,
    gc.freeze()  # and none over them later; the garbage the student's code makes is collected as in a kernel
    gc.enable()
    pipes = {name: os.pipe() for name in ("report", "ack", "stdout", "stderr")}
    sys.stdout.flush()
    sys.stderr.flush()
    child = os.fork()
    if child == 0:
        _shell_child(shell, config, cells, channel, pipes)
    ours = {name: pipe[1] if name == "ack" else pipe[0] for name, pipe in pipes.items()}  # the child has the other ends
    for name, pipe in pipes.items():
        os.close(pipe[0] if ours[name] == pipe[1] else pipe[1])
    try:
        ShellRelay(config, channel, cells, child, ours).run()
    finally:
        _end_child(child)


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
            send(channel, {"event": "file", "path": rel, "offset": start,
                           "data": base64.b64encode(data[start:start + chunk]).decode("ascii")})


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


if __name__ == "__main__":
    status = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # no waiting for threads or atexit hooks the student's code may have left behind
