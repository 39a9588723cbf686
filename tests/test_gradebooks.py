"""tests/gradebooks.py: under pytest-xdist the workers of a run share one PostgreSQL server, started by the first
worker that needs it and stopped, its folder removed, by the last one to finish."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.probe_run import run_probes

pytestmark = pytest.mark.slow

PROBE = """
import json, os, time


def test_{n}(postgres_server):
    url = postgres_server.new_gradebook()
    with open({seen!r}, "a") as f:
        f.write(json.dumps([os.environ["PYTEST_XDIST_WORKER"], str(postgres_server.dir), url]) + "\\n")
    time.sleep(1)  # both workers get a test
"""


def test_the_workers_of_a_run_share_one_server_and_the_last_one_stops_it(tmp_path):
    probes, seen = tmp_path / "probes", tmp_path / "seen.jsonl"
    files = {f"test_probe_{n}.py": PROBE.format(n=n, seen=str(seen)) for n in range(4)}
    files["conftest.py"] = "from tests.gradebooks import postgres_server  # noqa: F401\n"
    run = run_probes(probes, files, "-n", "2")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    rows = [json.loads(line) for line in seen.read_text("utf-8").splitlines()]
    assert len(rows) == 4 and {worker for worker, _, _ in rows} == {"gw0", "gw1"}
    assert len({folder for _, folder, _ in rows}) == 1  # one server for both workers
    assert len({url for _, _, url in rows}) == 4  # a database of its own per test
    assert not Path(rows[0][1]).exists()  # stopped and removed by the last worker
