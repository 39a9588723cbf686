"""How pytest collects the suite: every test module (it silently skips folders such as `build/`, norecursedirs), and
the files marked `long` first, so that pytest-xdist starts them first."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.collection_order import COLLECTED_FILES, WAITING_FILES, collected_whole_suite, starts_apart, workers

TESTS = Path(__file__).parent


@pytest.fixture
def collected_files(request) -> list[str]:
    """The test files in the order this run collected them (each once), when it collected the whole suite."""
    config = request.config
    if not collected_whole_suite(config):
        pytest.skip(f"this run collects {config.args}, not the whole suite")
    files = [
        str(path.relative_to(TESTS.parent)) for path in config.stash[COLLECTED_FILES] if path.is_relative_to(TESTS)
    ]
    assert files, "nothing collected"
    return files


def test_every_test_module_is_collected(collected_files):
    """A test_*.py that pytest never collects would pass unseen; list them all and compare."""
    on_disk = {str(p.relative_to(TESTS.parent)) for p in TESTS.rglob("test_*.py")}
    assert on_disk, "no test modules found"
    missing = sorted(on_disk - set(collected_files))
    assert not missing, f"test modules pytest does not collect: {missing}"


def declared_seconds(test_file: str) -> float | None:
    """The seconds its module's `pytest.mark.long(seconds)` declares; None for a file not marked long."""
    source = (TESTS.parent / test_file).read_text(encoding="utf-8")
    for node in ast.parse(source).body:  # the module's `pytestmark = …`, on one line or several
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            found = re.search(r"pytest\.mark\.long\((\d+(?:\.\d+)?)\)", ast.get_source_segment(source, node))
            if found:
                return float(found[1])
    return None


def test_long_files_are_collected_first_the_longest_first(collected_files, request):
    """Every file whose module is marked `long` comes before every other file, longest first, so no worker starts
    one last; when the longest waits for the course build, the other workers start on the longest that do not."""
    marked = [f for f in collected_files if declared_seconds(f) is not None]
    assert len(marked) >= 5, marked
    assert collected_files[: len(marked)] == marked, collected_files[: len(marked) + 3]
    waiting = {str(path.relative_to(TESTS.parent)) for path in request.config.stash[WAITING_FILES]}
    moved = []
    if marked[0] in waiting:
        not_waiting = sorted((f for f in marked if f not in waiting), key=lambda f: -declared_seconds(f))
        moved = marked[1 : workers(request.config)]
        assert moved == not_waiting[: len(moved)], moved
    rest = [f for f in marked if f not in moved]
    seconds = [declared_seconds(f) for f in rest]
    assert seconds == sorted(seconds, reverse=True), list(zip(rest, seconds))


def test_the_workers_other_than_the_builders_start_on_files_that_do_not_wait_for_the_build():
    """The files first handed out: the first (it starts the build), then for each other worker the longest file that
    does not wait for it; the rest in their order. A first file that does not wait, or one worker, changes nothing."""
    a, b, c, d, e = (Path(f"test_{name}.py") for name in "abcde")
    assert starts_apart([a, b, c, d, e], {a, b, d}, workers=3) == [a, c, e, b, d]
    assert starts_apart([a, b, c, d, e], {a, b, d}, workers=2) == [a, c, b, d, e]
    assert starts_apart([a, b, c], {a, b, c}, workers=2) == [a, b, c]  # nothing that does not wait
    assert starts_apart([c, a, b], {a, b}, workers=2) == [c, a, b]
    assert starts_apart([a, b, c], {a, b}, workers=1) == [a, b, c]


def test_make_test_hands_the_files_out_in_collection_order():
    """pytest-xdist's loadfile hands out the files with the most tests first unless told not to; then a file of one
    test that takes minutes (the added-lesson test) starts last and one worker runs alone for minutes."""
    recipe = (TESTS.parent / "Makefile").read_text("utf-8").split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "--dist loadfile" in recipe and "--no-loadscope-reorder" in recipe, recipe
