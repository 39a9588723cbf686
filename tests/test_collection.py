"""Every test module of the suite is collected: pytest silently skips folders such as `build/` (norecursedirs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent


def test_every_test_module_is_collected():
    """A test_*.py that pytest never collects would pass unseen; list them all and compare."""
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(TESTS)],
                         capture_output=True, text=True, cwd=TESTS.parent)
    collected = {line.split("::")[0] for line in run.stdout.splitlines() if "::" in line}
    on_disk = {str(p.relative_to(TESTS.parent)) for p in TESTS.rglob("test_*.py")}
    assert on_disk, "no test modules found"
    missing = sorted(on_disk - collected)
    assert not missing, f"test modules pytest does not collect: {missing}\n{run.stdout[-2000:]}{run.stderr[-2000:]}"
