"""The order pytest runs the suite in: the files marked `long` first, longest first, recorded for
tests/test_collection.py.

pytest-xdist hands whole files to its workers in this order (`make test` passes --no-loadscope-reorder: by default
it would hand out the files with the most tests first, and a file of one long test would start last). Handing out
the longest files first, each to whichever worker is free, keeps the workers ending together.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# The test files in collection order, each once, before -m/-k deselect any.
COLLECTED_FILES = pytest.StashKey[list]()


def declared_seconds(item: pytest.Item) -> float:
    """How long the item's file takes, as its `long(seconds)` marker says (0 for a file not marked long)."""
    marker = item.get_closest_marker("long")
    return float(marker.args[0]) if marker and marker.args else 0.0


def long_files_first(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put the files marked `long` first, the longest first (other files keep their order)."""
    seconds = {item.path: declared_seconds(item) for item in items}
    items.sort(key=lambda item: -seconds[item.path])
    config.stash[COLLECTED_FILES] = list(dict.fromkeys(item.path for item in items))


def collected_whole_suite(config: pytest.Config) -> bool:
    """Whether this run collected every test module (it was asked for the tests folder or the project, not for
    some files), so that COLLECTED_FILES holds the whole suite."""
    asked = {(config.invocation_params.dir / arg.split("::")[0]).resolve() for arg in config.args}
    return asked <= {TESTS, TESTS.parent}
