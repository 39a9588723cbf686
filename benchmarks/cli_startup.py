"""How long the `course` command takes before it does anything, side by side with a bare Python start.

Runs each command several times in fresh processes and prints the median wall time of `python -c pass`,
`course --help` and a no-op `course build` (the site is built first, so the measured build has nothing to do),
with each command's ratio to the bare start. The targets: --help under 0.3 s, no-op build under 1 s.

    .venv/bin/python benchmarks/cli_startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COURSE = [sys.executable, "-m", "course"]


def median_wall(cmd: list[str], repeat: int) -> float:
    """Median wall-clock seconds of REPEAT fresh runs of CMD (each must succeed)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Print the three medians and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    subprocess.run([*COURSE, "build"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    rows = [
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("course --help", [*COURSE, "--help"]),
        ("course build (no-op)", [*COURSE, "build"]),
    ]
    base = None
    for label, cmd in rows:
        wall = median_wall(cmd, args.repeat)
        base = base or wall
        print(f"{label:<22} {wall:6.3f} s   {wall / base:5.1f}× python -c pass")


if __name__ == "__main__":
    main()
