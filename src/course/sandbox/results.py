"""What a sandboxed notebook run comes to: the runner's frames, validated and re-capped, as a SandboxRun.

Everything that comes back is still the submission's data: outputs must be schema-valid and are re-capped,
files must stay inside the working directory and within the scratch size, and cell sources and metadata always
come from this process's own copy of the notebook, never from frames.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import nbformat
from nbformat.validator import isvalid

from course.sandbox.frames import TIMEOUT_ENAME, TRUNCATED_MARK, OutputBudget, runs
from course.sandbox.launch import Collected, exit_status
from course.sandbox.limits import Limits, mib

Status = Literal["ok", "timeout", "crashed", "oom", "invalid", "error"]


@dataclass(frozen=True)
class Incident:
    """Something that happened to one cell, by its index in the notebook."""

    cell_index: int
    kind: str  # cell-timeout | memory | output-truncated | stopped | not-run
    message: str


@dataclass(frozen=True)
class SandboxRun:
    """The outcome of one sandboxed notebook run.

    status: ok (every code cell ran, some may show errors), timeout (the submission's wall clock ran out, or a
    cell would not stop at its limit), crashed (the kernel or the runner died), oom (same, out of memory),
    invalid (the submission is not a readable notebook), error (the sandbox itself failed before any student
    code ran: not the student's fault).
    executed: the notebook with outputs of the cells that ran (None for invalid/error).
    timings: seconds measured here: startup (sandbox and runner), kernel_start (the kernel, or the shell engine's
    IPython shell, until it can run cells), execute (the cells), total.
    engine: the engine that ran it; engine_reason: why that one (empty when it was simply asked for).
    memory_limit: which memory limit applied, in words (one cgroup for the whole submission, or per process).
    files: the files the notebook wrote in its working directory (relative path → bytes; within scratch_bytes).
    """

    executed: nbformat.NotebookNode | None
    status: Status
    reason: str
    seconds: float
    timings: dict[str, float]
    incidents: tuple[Incident, ...] = ()
    engine: str = "shell"
    engine_reason: str = ""
    memory_limit: str = ""
    files: dict[str, bytes] = field(default_factory=dict)


def _valid_outputs(outputs: Any, budget: OutputBudget) -> list[dict] | None:
    """OUTPUTS if it is a list of schema-valid outputs, re-capped; None when it is not even that."""
    if not isinstance(outputs, list):
        return None
    kept = []
    for output in outputs:
        if not isinstance(output, dict) or not isvalid(output, ref="output", version=4, version_minor=5):
            return None
        kept.extend(budget.admit(output))
    return kept


def _fill_cells(nb: nbformat.NotebookNode, frames: Sequence[dict], max_output_bytes: int) -> set[int]:
    """Copy outputs from valid cell frames into NB's code cells; return the indices that ran."""
    ran: set[int] = set()
    for frame in frames:
        index = frame.get("index")
        if frame.get("event") != "cell" or not isinstance(index, int) or index in ran:
            continue
        if not 0 <= index < len(nb.cells) or nb.cells[index].cell_type != "code":
            continue
        outputs = _valid_outputs(frame.get("outputs"), OutputBudget(max_output_bytes))
        count = frame.get("execution_count")
        if outputs is None or not (count is None or (isinstance(count, int) and count >= 0)):
            continue
        nb.cells[index].outputs = [nbformat.from_dict(o) for o in outputs]
        nb.cells[index].execution_count = count
        ran.add(index)
    return ran


def _cell_incidents(nb: nbformat.NotebookNode, ran: set[int], limits: Limits) -> list[Incident]:
    """Time-limit stops, memory errors and truncated output, read from the cells that ran."""
    incidents = []
    for index in sorted(ran):
        for output in nb.cells[index].outputs:
            if output.output_type == "error" and output.ename == TIMEOUT_ENAME:
                incidents.append(Incident(index, "cell-timeout", output.evalue))
            elif output.output_type == "error" and output.ename == "MemoryError":
                message = f"the cell ran out of memory (limit {mib(limits.memory_bytes)})"
                incidents.append(Incident(index, "memory", message))
            elif output.output_type == "stream" and TRUNCATED_MARK in output.text:
                incidents.append(Incident(index, "output-truncated", output.text.strip()))
    return incidents


def _code_cells(nb: nbformat.NotebookNode, skip_tag: str) -> list[int]:
    """Indices of the code cells the runner executes (non-empty source, not tagged SKIP_TAG)."""
    return [i for i, c in enumerate(nb.cells) if runs(c, skip_tag)]


def _written_files(frames: Sequence[dict], max_bytes: int) -> dict[str, bytes]:
    """The files the runner sent back, put together from their chunks; bad names and anything past MAX_BYTES dropped."""
    files: dict[str, bytearray] = {}
    total = 0
    for frame in frames:
        path, offset, data = frame.get("path"), frame.get("offset"), frame.get("data")
        if frame.get("event") != "file" or not isinstance(path, str) or not isinstance(data, str):
            continue
        parts = Path(path).parts
        if not parts or Path(path).is_absolute() or ".." in parts or path != str(Path(*parts)):
            continue
        try:
            chunk = base64.b64decode(data, validate=True)
        except ValueError:
            continue
        if offset != len(files.get(path, b"")) or total + len(chunk) > max_bytes:
            continue
        files.setdefault(path, bytearray()).extend(chunk)
        total += len(chunk)
    return {path: bytes(data) for path, data in files.items()}


def _cell_label(nb: nbformat.NotebookNode, index: int | None) -> str:
    """How a reason names a cell: its nbgrader grade_id, else its cell id, else its position."""
    if index is None:
        return "the notebook"
    cell = nb.cells[index]
    name = cell.metadata.get("nbgrader", {}).get("grade_id") or cell.get("id")
    return f"cell {name}" if name else f"cell #{index}"


def _memory_evidence(text: str) -> bool:
    """True when a dying process's last words say it ran out of memory."""
    return any(s in text for s in ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory"))


def _outcome(run: Collected, events: dict[str, dict], where: str, limits: Limits) -> tuple[Status, str]:
    """Status and reason of a notebook run from how the runner ended; WHERE names the cell it stopped in."""
    if "finished" in events:
        return "ok", "every code cell ran"
    if "started" not in events:
        detail = events.get("runner-error", {}).get("detail") or run.stderr
        if run.timed_out:
            return "error", f"the kernel did not start within {limits.submission_timeout_s} s"
        return "error", f"the sandbox failed before the notebook ran: {str(detail).strip()[-500:]}"
    if run.timed_out:
        limit = limits.submission_timeout_s
        return "timeout", f"the notebook ran past the {limit} s limit per submission (stopped in {where})"
    if run.stalled:
        limit = limits.cell_timeout_s
        return "timeout", f"{where} ran past the {limit} s limit per cell and could not be interrupted"
    if run.flooded:
        return "crashed", f"the sandbox sent more data than allowed (stopped in {where})"
    if run.oom_killed:
        return "oom", f"the submission ran out of memory in {where} (limit {run.memory_limit})"
    if "kernel-died" in events:
        died = events["kernel-died"]
        if _memory_evidence(str(died.get("log_tail", ""))):
            return "oom", f"the kernel ran out of memory in {where} (limit {mib(limits.memory_bytes)})"
        code = died.get("exit_code")
        status = exit_status(code) if isinstance(code, int) else "?"
        return "crashed", f"the kernel stopped while running {where} (exit status {status})"
    if "runner-error" in events:
        detail = str(events["runner-error"].get("detail", "")).strip() or "?"
        if _memory_evidence(detail):
            return "oom", f"the grading runner ran out of memory in {where}"
        return "crashed", f"the grading runner failed in {where}: {detail.splitlines()[-1][:300]}"
    if _memory_evidence(run.stderr):
        return "oom", f"the grading runner ran out of memory in {where}"
    return "crashed", (
        f"the grading runner was stopped while {where} ran (exit status {exit_status(run.returncode)}): "
        "the submission's code killed or starved the process that runs it"
    )


def _timings(run: Collected, events: dict[str, float]) -> dict[str, float]:
    """Seconds spent starting the sandbox, starting the kernel and executing cells, measured here."""
    start = run.started_at
    hello = events.get("hello")
    started = events.get("started")
    end = events.get("finished", start + run.seconds)
    timings = {"total": round(run.seconds, 3)}
    if hello is not None:
        timings["startup"] = round(hello - start, 3)
    if hello is not None and started is not None:
        timings["kernel_start"] = round(started - hello, 3)
    if started is not None:
        timings["execute"] = round(end - started, 3)
    return timings


def assemble(nb: nbformat.NotebookNode, run: Collected, limits: Limits, skip_tag: str) -> SandboxRun:
    """Build the SandboxRun from the cleared notebook and the frames the runner sent."""
    frames = [f for _, f in run.frames]
    first_event = {}
    arrival: dict[str, float] = {}
    for at, frame in run.frames:
        first_event.setdefault(frame["event"], frame)
        arrival.setdefault(frame["event"], at)
    ran = _fill_cells(nb, frames, limits.max_output_bytes)
    code = _code_cells(nb, skip_tag)
    pending = [i for i in code if i not in ran]
    died = first_event.get("kernel-died", {}).get("index")
    stopped_at = died if isinstance(died, int) and died in code else (pending[0] if pending else None)
    status, reason = _outcome(run, first_event, _cell_label(nb, stopped_at), limits)
    incidents = _cell_incidents(nb, ran, limits)
    if status != "ok":
        if stopped_at is not None:
            incidents.append(Incident(stopped_at, "stopped", reason))
        incidents += [Incident(i, "not-run", f"not run: {reason}") for i in pending if i != stopped_at]
    executed = nb if status != "error" else None
    if executed is not None:
        nbformat.validate(executed)
    return SandboxRun(
        executed,
        status,
        reason,
        round(run.seconds, 3),
        _timings(run, arrival),
        tuple(incidents),
        memory_limit=run.memory_limit,
        files=_written_files(frames, limits.scratch_bytes),
    )
