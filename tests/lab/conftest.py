"""One real `course lab` run (N = 2 and 4, gloo on CPU) and one tiny decoder measurement, shared by the lab's tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def lab_report_path(tmp_path_factory) -> Path:
    """assets/lab/zero_measured.json as `course lab` writes it, in a temporary folder."""
    pytest.importorskip("torch")
    from course.lab.run_lab import run_lab

    out = tmp_path_factory.mktemp("lab") / "zero_measured.json"
    run_lab(out=out, ranks=(2, 4))
    return out


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

    out = tmp_path_factory.mktemp("decoder") / "gpu_memory.json"
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
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    return out


@pytest.fixture(scope="session")
def tiny_record(tiny_record_path: Path) -> dict:
    """That measurement, read back through the lesson's reader."""
    from course.lab.gpu_memory_file import read_record

    return read_record(tiny_record_path)
