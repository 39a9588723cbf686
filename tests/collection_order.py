"""The order pytest runs the suite in: the files marked `long` first, longest first, recorded for
tests/test_collection.py.

pytest-xdist hands whole files to its workers in this order (`make test` passes --no-loadscope-reorder: by default
it would hand out the files with the most tests first, and a file of one long test would start last). Handing out
the longest files first, each to whichever worker is free, keeps the workers ending together.

One exception at the start: the course build (tests/conftest.py's `built_site`) is made by the first worker that asks
for it, under the project's lock, while the others wait for that lock (`released` waits too: it draws the lesson's
figures under the same lock). So when the longest file waits for the build, the files the other workers start with
are the longest that do not: on a fresh clone a worker would otherwise sit idle for the whole build.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# The test files in collection order, each once, before -m/-k deselect any.
COLLECTED_FILES = pytest.StashKey[list]()
# The files with a test that waits for the course build (asks for one of WAITS, itself or through another fixture).
WAITING_FILES = pytest.StashKey[set]()
WAITS = ("built_site", "released")  # the fixtures that take the project's lock, which the first build holds


def declared_seconds(item: pytest.Item) -> float:
    """How long the item's file takes, as its `long(seconds)` marker says (0 for a file not marked long)."""
    marker = item.get_closest_marker("long")
    return float(marker.args[0]) if marker and marker.args else 0.0


def long_files_first(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put the files marked `long` first, the longest first (other files keep their order), the files the other
    workers start with not waiting for the build the first one makes."""
    seconds = {item.path: declared_seconds(item) for item in items}
    waiting = {item.path for item in items if set(WAITS) & set(getattr(item, "fixturenames", ()))}
    order = sorted(dict.fromkeys(item.path for item in items), key=lambda path: -seconds[path])
    order = starts_apart(order, waiting, workers(config))
    position = {path: i for i, path in enumerate(order)}
    items.sort(key=lambda item: position[item.path])
    config.stash[COLLECTED_FILES] = order
    config.stash[WAITING_FILES] = waiting


def starts_apart(order: list[Path], waiting: set[Path], workers: int) -> list[Path]:
    """ORDER with, when its first file waits for the build, the longest files that do not wait moved up to be the
    next WORKERS - 1 (the others keep their order)."""
    if not order or order[0] not in waiting:
        return order
    first = [path for path in order[1:] if path not in waiting][: workers - 1]
    return [order[0], *first, *(path for path in order[1:] if path not in first)]


def workers(config: pytest.Config) -> int:
    """How many pytest-xdist workers share the run (1 without xdist); each worker collects the same order."""
    return int(getattr(config, "workerinput", {}).get("workercount", 1))


def collected_whole_suite(config: pytest.Config) -> bool:
    """Whether this run collected every test module (it was asked for the tests folder or the project, not for
    some files), so that COLLECTED_FILES holds the whole suite."""
    asked = {(config.invocation_params.dir / arg.split("::")[0]).resolve() for arg in config.args}
    return asked <= {TESTS, TESTS.parent}
