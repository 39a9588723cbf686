"""The program that runs inside the grading sandbox, next to the student's kernel.

`course grade` passes this file's source to `python -I -c` (the sandbox cannot import the course package) with
a JSON config as the only argument. It writes its results as JSON lines ("frames") to the stdout pipe it was
started with; everything the student's code prints goes elsewhere. Two modes:

- notebook: run every code cell with nbclient (errors do not stop the run, like nbgrader autograde), one
  frame per executed cell, the kernel's outputs capped per cell while they arrive;
- python: exec a piece of answer code with INPUT bound to a JSON value and send back its OUTPUT as JSON.

It imports only the standard library, nbformat and nbclient. The grading process also imports this module
for the helpers it shares (the output budget, the frame names), so both sides cap outputs the same way.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import traceback

TIMEOUT_ENAME = "CellTimeoutError"
DEAD_KERNEL_ENAME = "DeadKernelError"
RUNNER_NOTE_BYTES = 4096  # the runner's own notes (timeout, dead kernel) stay even when a cell's budget is spent
TRUNCATED_MARK = "[course sandbox: output truncated"
KERNEL_LOG_TAIL = 4096


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


def send(channel: int, frame: dict) -> None:
    """Write one frame (a JSON line) to the result channel."""
    data = (json.dumps(frame) + "\n").encode("ascii")
    while data:
        data = data[os.write(channel, data):]


def hide_from_kernel() -> None:
    """Make this process non-dumpable: same-uid code (the kernel) can then neither ptrace it nor open its fds."""
    import ctypes

    pr_set_dumpable = 4
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_dumpable, 0, 0, 0, 0)


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

    timeout_error = {
        "ename": TIMEOUT_ENAME,
        "evalue": f"the cell ran longer than {config['cell_timeout_s']} s (the limit per cell) and was stopped",
        "traceback": [],
    }
    return CappedClient(
        nb,
        timeout=config["cell_timeout_s"],
        interrupt_on_timeout=True,
        error_on_timeout=timeout_error,
        allow_errors=True,
        kernel_name="python3",
        startup_timeout=config["startup_timeout_s"],
        shutdown_kernel="immediate",
        resources={"metadata": {"path": config["cwd"]}},
    ), timeout_error


def _cell_frame(index: int, cell, extra_output: dict | None = None) -> dict:
    """The frame that reports one executed code cell."""
    outputs = list(cell.get("outputs", []))
    if extra_output is not None:
        outputs.append(extra_output)
    return {"event": "cell", "index": index, "execution_count": cell.get("execution_count"), "outputs": outputs}


def run_notebook(config: dict, channel: int) -> None:
    """Execute every code cell of the notebook, sending a frame after each one."""
    # jsonschema (via nbformat) would import this optional URI checker, whose grammar takes ~1 s to build;
    # reading a notebook never needs it, and every submission would pay for it.
    sys.modules.setdefault("rfc3987_syntax", None)
    import nbformat
    from nbclient.exceptions import DeadKernelError

    send(channel, {"event": "hello"})
    nb = nbformat.read(config["notebook"], as_version=4)
    client, timeout_error = _make_client(nb, config)
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
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            try:
                client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
            except DeadKernelError:
                kernel.poll()
                died = {"ename": DEAD_KERNEL_ENAME, "evalue": "the kernel stopped while running this cell",
                        "traceback": [], "output_type": "error"}
                send(channel, _cell_frame(index, cell, died))
                send(channel, {"event": "kernel-died", "index": index, "exit_code": kernel.returncode,
                               "log_tail": _tail(config["kernel_log"])})
                return
            content = (replies.get(index) or {}).get("content", {})
            timed_out = content.get("ename") == TIMEOUT_ENAME
            send(channel, _cell_frame(index, cell, dict(timeout_error, output_type="error") if timed_out else None))
        send(channel, {"event": "finished"})


def run_python(config: dict, channel: int) -> None:
    """Exec answer code with INPUT bound; send back the JSON of what it left in OUTPUT."""
    request = json.loads(sys.stdin.buffer.read(config["max_input_bytes"] + 1))
    sys.stdin = open(os.devnull)
    namespace = {"__name__": "__main__", "INPUT": request["input"]}
    exec(compile(request["code"], "<answer>", "exec"), namespace)
    send(channel, {"event": "result", "output": namespace.get("OUTPUT")})


def main(argv: list[str]) -> int:
    """Set the limits, keep the result channel private, run the requested mode."""
    config = json.loads(argv[1])
    channel = os.dup(1)  # not inherited: dup() gives a close-on-exec descriptor
    os.dup2(2, 1)  # anything printed from here on, by us or the student's code, goes to stderr
    hide_from_kernel()
    apply_limits(config["limits"])
    try:
        (run_notebook if config["mode"] == "notebook" else run_python)(config, channel)
    except BaseException:
        send(channel, {"event": "runner-error", "detail": traceback.format_exc()[-KERNEL_LOG_TAIL:]})
        return 1
    return 0


if __name__ == "__main__":
    status = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # no waiting for threads or atexit hooks the student's code may have left behind
