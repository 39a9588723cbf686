"""A pytest run of its own over a folder of probe test files, for the tests of the suite's shared fixtures (one
PostgreSQL server per run, one Chromium per process): the probes import this repository's tests/ and src/, read no
configuration of the project's and keep their temporary files beside the folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_probes(probes: Path, files: dict[str, str], *pytest_args: str) -> subprocess.CompletedProcess:
    """Write FILES (name -> text, a conftest.py among them) into PROBES and run this Python's pytest on them with
    PYTEST_ARGS (e.g. `-n 2` or `-p no:xdist`)."""
    probes.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (probes / name).write_text(text, "utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'src'}",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    command = [sys.executable, "-m", "pytest", "-q", *pytest_args, "-p", "no:cacheprovider", "--rootdir", str(probes)]
    command += ["-c", os.devnull, f"--basetemp={probes.parent / 'base'}", str(probes)]
    return subprocess.run(command, cwd=probes, env=env, capture_output=True, text=True, timeout=600)
