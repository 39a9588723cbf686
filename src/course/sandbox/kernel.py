"""The runner's kernel engine: every code cell run with nbclient in a Jupyter kernel, as nbgrader autograde does.

One frame per executed cell, the kernel's outputs capped per cell while they arrive. It imports nbformat and
nbclient only when it runs (inside the sandbox).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

# Relative imports: inside the sandbox this package is course_sandbox (see course.sandbox.loader).
from .confinement import reap_orphans
from .frames import (
    KERNEL_LOG_TAIL,
    TIMEOUT_ENAME,
    OutputBudget,
    dead_kernel_error,
    output_size,
    runs,
    send,
    timeout_error,
)


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
        extra_arguments=[f"--IPKernelApp.exec_lines={line}" for line in config["kernel_exec_lines"]],
    )


def unshown_error(reply: dict, outputs: list) -> dict | None:
    """The error a cell's execute reply reports when the cell displayed none (its traceback display was
    suppressed): nbgrader's Execute records it the same way, so such a test cell still fails."""
    if reply.get("status") != "error" or any(o.get("output_type") == "error" for o in outputs):
        return None
    return {
        "output_type": "error",
        "ename": reply.get("ename", "Error"),
        "evalue": reply.get("evalue", ""),
        "traceback": list(reply.get("traceback", [])),
    }


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
    with open(config["kernel_log"], "wb") as log, client.setup_kernel(stdin=subprocess.DEVNULL, stdout=log, stderr=log):
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
                send(
                    channel,
                    {
                        "event": "kernel-died",
                        "index": index,
                        "exit_code": kernel.returncode,
                        "log_tail": _tail(config["kernel_log"]),
                    },
                )
                return
            content = (replies.get(index) or {}).get("content", {})
            timed_out = content.get("ename") == TIMEOUT_ENAME
            send(
                channel,
                _cell_frame(
                    index,
                    cell,
                    timeout_error(config["cell_timeout_s"])
                    if timed_out
                    else unshown_error(content, cell.get("outputs", [])),
                ),
            )
        send(channel, {"event": "finished"})
