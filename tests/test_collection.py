"""How pytest collects the suite: every test module (it silently skips folders such as `build/`, norecursedirs), and
the files marked `long` first, so that pytest-xdist starts them first."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.collection_order import COLLECTED_FILES

TESTS = Path(__file__).parent


@pytest.fixture
def collected_files(request) -> list[str]:
    """The test files in the order this run collected them (each once), when it collected the whole suite."""
    config = request.config
    asked = {(config.invocation_params.dir / arg.split("::")[0]).resolve() for arg in config.args}
    if not asked <= {TESTS, TESTS.parent}:
        pytest.skip(f"this run collects {sorted(map(str, asked))}, not the whole suite")
    files = [str(path.relative_to(TESTS.parent)) for path in config.stash[COLLECTED_FILES] if path.is_relative_to(TESTS)]
    assert files, "nothing collected"
    return files


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
