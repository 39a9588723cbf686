"""The runner's shell engine: the cells run in a forked child (course.sandbox.shell), relayed as frames.

Who can forge what here. The student's code runs in the child, which must report its outputs, so it
necessarily holds a write end: a private pipe to the runner (never the frame pipe, which the child closes
right after the fork). That pipe is the child's to abuse, and the relay treats it as untrusted: it accepts
only well-formed messages, outputs of the cell it is waiting for and the end of exactly that cell, in notebook
order; it numbers the cells itself, applies the output budget itself, and anything else is dropped. The
grading process, in turn, takes cell sources and metadata from its own copy of the notebook, never from
frames. So a student who writes messages into that pipe can at worst change their own cells' outputs (which
their code can print anyway), and the score does not rest on outputs: the out-of-process re-check
(course.grading.recheck) calls the student's functions again in a fresh sandbox and compares there.
"""

from __future__ import annotations

import codecs
import gc
import importlib
import json
import os
import selectors
import signal
import sys
import traceback
import types

# Relative imports: inside the sandbox this package is course_sandbox (see course.sandbox.loader).
from .confinement import apply_limits, die_with_parent
from .frames import (
    FRAME_SLACK,
    KERNEL_LOG_TAIL,
    FrameReader,
    OutputBudget,
    dead_kernel_error,
    runs,
    send,
    timeout_error,
    truncation_note,
)

ACK = b"\x06"  # the runner's answer to each message of the shell child
STREAM_READ = 1 << 20
DRAIN_READS = 64  # reads per drain of a pipe, so that a process that never stops writing cannot hold us
REAP_INTERVAL_S = 0.05


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


def _shell_child(
    shell: types.ModuleType, config: dict, cells: list[tuple[int, str]], channel: int, pipes: dict[str, tuple[int, int]]
) -> None:
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
        shell.serve(
            cells,
            report_fd=pipes["report"][1],
            ack_fd=pipes["ack"][0],
            cell_timeout_s=config["cell_timeout_s"],
            max_message_bytes=config["max_output_bytes"] + FRAME_SLACK,
        )
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
    shell = importlib.import_module(".shell", __package__)  # once, before the fork,
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
