"""Run a piece of a student's answer code in a fresh sandbox: the out-of-process re-check calls their functions so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from course.sandbox.frames import FRAME_SLACK
from course.sandbox.launch import exit_status, run_sandboxed
from course.sandbox.limits import Limits, mib


class PythonRun(NamedTuple):
    """Outcome of run_python_sandboxed: exit status (None when stopped at the time limit), OUTPUT, stderr."""

    returncode: int | None
    stdout_json: Any
    stderr: str


def run_python_sandboxed(
    code: str, *, workdir: Path, limits: Limits, input_json: Any, unsafe: bool = False
) -> PythonRun:
    """Exec CODE in a fresh sandboxed Python with INPUT bound to INPUT_JSON; return the JSON of its OUTPUT.

    CODE must leave a JSON-serialisable value in the global OUTPUT; what it prints goes to stderr. The run
    stops at limits.cell_timeout_s (returncode None then). Files in WORKDIR are visible read-only.
    """
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True, mode=0o700)
    request = json.dumps({"code": code, "input": input_json}).encode("utf-8")
    frame_limit = limits.max_output_bytes + FRAME_SLACK
    run = run_sandboxed(
        {"mode": "python", "max_input_bytes": len(request)},
        workdir=workdir,
        limits=limits,
        unsafe=unsafe,
        runner_as=limits.memory_bytes,
        wall_clock_s=limits.cell_timeout_s,
        frame_limit=frame_limit,
        total_limit=2 * frame_limit,
        stdin=request,
    )
    result = next((f for _, f in run.frames if f["event"] == "result"), None)
    failure = next((f for _, f in run.frames if f["event"] == "runner-error"), None)
    notes = []
    if failure is not None:
        notes.append(str(failure.get("detail", "")))
    if run.timed_out:
        notes.append(f"[course sandbox] stopped after {limits.cell_timeout_s} s (the time limit)")
    elif result is None and failure is None:
        notes.append(
            f"[course sandbox] no OUTPUT came back (exit status {exit_status(run.returncode)}; "
            f"an OUTPUT larger than {mib(frame_limit)} is dropped)"
        )
    stderr = "\n".join([run.stderr[-limits.max_output_bytes :], *notes]).strip()
    return PythonRun(exit_status(run.returncode), result.get("output") if result else None, stderr)
