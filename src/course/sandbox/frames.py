"""What the runner and the grading process both speak: frames (JSON lines) and their names, the output budget.

The runner writes its results as frames to the pipe it was started with; the grading process reads them with
the same FrameReader and re-caps every cell's outputs with the same OutputBudget, so both sides cap outputs and
read frames the same way. Only the standard library: it runs inside the sandbox too (see course.sandbox.loader).
"""

from __future__ import annotations

import json
import os

TIMEOUT_ENAME = "CellTimeoutError"
DEAD_KERNEL_ENAME = "DeadKernelError"
RUNNER_NOTE_BYTES = 4096  # the runner's own notes (timeout, dead kernel) stay even when a cell's budget is spent
TRUNCATED_MARK = "[course sandbox: output truncated"
KERNEL_LOG_TAIL = 4096
FRAME_SLACK = 64 * 1024  # a frame may exceed the per-cell output budget by this much (its JSON envelope)


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
    return {
        "output_type": "error",
        "ename": DEAD_KERNEL_ENAME,
        "evalue": "the kernel stopped while running this cell",
        "traceback": [],
    }


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
        data = data[os.write(channel, data) :]


def runs(cell: dict, skip_tag: str) -> bool:
    """True for a code cell that is executed: some source, and not tagged SKIP_TAG (nbclient's skip_cells_with_tag)."""
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else source
    tags = cell.get("metadata", {}).get("tags", [])
    return cell.get("cell_type") == "code" and bool(source.strip()) and not (skip_tag and skip_tag in tags)
