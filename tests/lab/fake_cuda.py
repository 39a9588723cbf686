"""A machine with GPUs, simulated on a CPU-only torch: what the lab's CUDA handling is tested against.

install(gpus, log) replaces torch's CUDA queries in this process with a stand-in driver that behaves like
the real one where the lab can go wrong: the first query initialises CUDA in the calling process, a
process forked after that fails every CUDA call with "CUDA error: initialization error", and
CUDA_VISIBLE_DEVICES="" hides every device. Each query is appended to `log` as one JSON line (pid,
process name, call, devices visible), so a test can see which process touched CUDA. Loaded through
sitecustomize.py, it is in every Python process the lab starts: the lab itself, its probes and its ranks.
"""

from __future__ import annotations

import json
import multiprocessing
import os

import torch


class FakeDriver:
    """Per-process CUDA state as the real driver keeps it: who initialised it, and how many devices it sees."""

    def __init__(self, gpus: int, log: str):
        self.gpus = gpus
        self.log = log
        self.initialised_in: int | None = None

    def visible(self) -> int:
        """Devices left after CUDA_VISIBLE_DEVICES, as the driver reads it when it initialises."""
        listed = os.environ.get("CUDA_VISIBLE_DEVICES")
        if listed is None:
            return self.gpus
        return min(self.gpus, len([d for d in listed.split(",") if d.strip()]))

    def query(self, call: str) -> int:
        """Initialise CUDA here (or fail as a fork of an initialised process does) and return the device count."""
        pid = os.getpid()
        record = {"pid": pid, "process": multiprocessing.current_process().name, "call": call}
        if self.initialised_in not in (None, pid):
            self._write({**record, "error": "initialization error"})
            raise RuntimeError(
                f"CUDA error: initialization error (simulated: process {self.initialised_in} initialised CUDA, "
                f"then forked process {pid})"
            )
        self.initialised_in = pid
        count = self.visible()
        self._write({**record, "visible": count})
        return count

    def _write(self, record: dict) -> None:
        """Append one line; O_APPEND keeps lines from several processes whole."""
        with open(self.log, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def install(gpus: int, log: str) -> FakeDriver:
    """Make this process's torch believe it was built with CUDA and runs on a machine with `gpus` GPUs."""
    driver = FakeDriver(gpus, log)
    torch.backends.cuda.is_built = lambda: True
    torch.cuda.is_available = lambda: driver.query("is_available") > 0
    torch.cuda.device_count = lambda: driver.query("device_count")
    torch.cuda.init = lambda: driver.query("init") and None
    torch.cuda.is_initialized = lambda: driver.initialised_in == os.getpid()
    torch.cuda.is_current_stream_capturing = lambda: driver.query("is_current_stream_capturing") < 0
    if hasattr(torch, "accelerator"):  # torch >= 2.6: torch.optim asks here before every step

        def current_accelerator(check_available: bool = False):
            return torch.device("cuda") if not check_available or driver.query("accelerator") > 0 else None

        torch.accelerator.current_accelerator = current_accelerator
        torch.accelerator.is_available = lambda: driver.query("accelerator.is_available") > 0
        torch.accelerator.device_count = lambda: driver.query("accelerator.device_count")
    return driver


def sitecustomize_text(tests_dir: str, gpus: int, log: str) -> str:
    """A sitecustomize.py that installs the stand-in in every Python process started with it on PYTHONPATH."""
    return (
        "import sys\n"
        f"sys.path.insert(0, {tests_dir!r})\n"
        "import fake_cuda\n"
        f"fake_cuda.install(gpus={gpus}, log={log!r})\n"
    )
