"""One real `course lab` run (N = 2 and 4, gloo on CPU) and one tiny decoder measurement, shared by the lab's tests:
made once per test run (tests/once_per_run.py), whichever pytest-xdist worker the lab's files go to; never change
them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.once_per_run import once_per_run


@pytest.fixture(scope="session")
def lab_report_path(tmp_path_factory) -> Path:
    """assets/lab/zero_measured.json as `course lab` writes it, in a temporary folder."""
    pytest.importorskip("torch")
    from course.lab.run_lab import run_lab

    name = "zero_measured.json"
    return once_per_run(tmp_path_factory, "lab-report", lambda folder: run_lab(out=folder / name, ranks=(2, 4))) / name


@pytest.fixture(scope="session")
def lab_report(lab_report_path: Path) -> dict:
    """The report of that run, read back through the lesson's reader."""
    from course.lab.report_file import read_report

    return read_report(lab_report_path)


@pytest.fixture(scope="session")
def tiny_record_path(tmp_path_factory) -> Path:
    """What the one-GPU measurement writes for the tiny decoder on CPU at sequence lengths 16 and 32."""
    pytest.importorskip("torch")
    from course.lab.decoder_memory import main

    argv = [
        "--preset",
        "tiny",
        "--device",
        "cpu",
        "--seq-lens",
        "16",
        "32",
        "--batch",
        "2",
        "--steps",
        "2",
    ]

    def measure(folder: Path) -> None:
        assert main([*argv, "--out", str(folder / "gpu_memory.json")]) == 0

    return once_per_run(tmp_path_factory, "decoder-record", measure) / "gpu_memory.json"


@pytest.fixture(scope="session")
def tiny_record(tiny_record_path: Path) -> dict:
    """That measurement, read back through the lesson's reader."""
    from course.lab.gpu_memory_file import read_record

    return read_record(tiny_record_path)
