"""How pytest collects the suite: every test module (it silently skips folders such as `build/`, norecursedirs), and
the files marked `long` first, so that pytest-xdist starts them first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent


@pytest.fixture(scope="module")
def collected_files() -> list[str]:
    """The test files in the order `pytest --collect-only` lists their tests (each file once)."""
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(TESTS)],
                         capture_output=True, text=True, cwd=TESTS.parent)
    files = [line.split("::")[0] for line in run.stdout.splitlines() if "::" in line]
    assert files, f"nothing collected\n{run.stdout[-2000:]}{run.stderr[-2000:]}"
    return list(dict.fromkeys(files))


def test_every_test_module_is_collected(collected_files):
    """A test_*.py that pytest never collects would pass unseen; list them all and compare."""
    on_disk = {str(p.relative_to(TESTS.parent)) for p in TESTS.rglob("test_*.py")}
    assert on_disk, "no test modules found"
    missing = sorted(on_disk - set(collected_files))
    assert not missing, f"test modules pytest does not collect: {missing}"


def test_long_files_are_collected_first(collected_files):
    """Every file whose module is marked `long` comes before every other file, so no worker starts one last."""
    marked = [f for f in collected_files if any(line.startswith("pytestmark") and "pytest.mark.long" in line
                                                for line in (TESTS.parent / f).read_text(encoding="utf-8").splitlines())]
    assert len(marked) >= 5, marked
    assert collected_files[:len(marked)] == marked, collected_files[:len(marked) + 3]
