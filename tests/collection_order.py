"""The order pytest runs the suite in: the files marked `long` first, recorded for tests/test_collection.py."""

from __future__ import annotations

import pytest

# The test files in collection order, each once, before -m/-k deselect any.
COLLECTED_FILES = pytest.StashKey[list]()


def long_files_first(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put the files marked `long` first (order otherwise kept): pytest-xdist hands files out in this order, so a
    file of minutes no longer starts last and keeps one worker busy while the others are done."""
    long_files = {item.path for item in items if item.get_closest_marker("long")}
    items.sort(key=lambda item: item.path not in long_files)
    config.stash[COLLECTED_FILES] = list(dict.fromkeys(item.path for item in items))
