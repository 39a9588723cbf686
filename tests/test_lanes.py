"""`make test`'s scheduling (tests/lanes.py): no more busy files at once than its share while a waiting file is left,
the files that wait beside them, every worker on busy files once none is left, and the controller's reading of the
`waits` marker the same as pytest's."""

from __future__ import annotations

from pathlib import Path

from tests.lanes import WaitingLane, waiting_file

WAITS = ("tests/workflows/test_regrade.py", "tests/workflows/test_grade_readable.py")  # marked waits
BUSY = ("tests/test_lint.py", "tests/test_docs.py", "tests/test_cli.py", "tests/test_config.py")  # not marked


class Config:
    """What pytest-xdist's scheduler reads of the config: three workers."""

    def getvalue(self, name: str):
        return ["3*popen"] if name == "tx" else None


class Worker:
    """A worker as the scheduler sees it: the test indices it was sent, whether it was told to stop."""

    def __init__(self, name: str) -> None:
        self.name, self.sent, self.shutting_down = name, [], False
        self.gateway = type("Gateway", (), {"id": name})()

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent += indices

    def shutdown(self) -> None:
        self.shutting_down = True


def finish(lane: WaitingLane, worker: Worker, collection: list[str], path: str, keep: int = 0) -> None:
    """Worker's tests of PATH reported done, all but the last KEEP."""
    ids = [i for i in worker.sent if collection[i].startswith(path)]
    for index in ids[: len(ids) - keep]:
        lane.mark_test_complete(worker, index)


def files_of(worker: Worker, collection: list[str]) -> list[str]:
    return list(dict.fromkeys(collection[i].split("::")[0] for i in worker.sent))


def test_busy_files_keep_their_share_while_a_waiting_one_is_left_then_every_worker_takes_them():
    collection = [f"{path}::t{n}" for path in (*BUSY, *WAITS) for n in range(2)]
    lane, workers = WaitingLane(Config(), busy=2), [Worker(f"gw{n}") for n in range(3)]
    for worker in workers:
        lane.add_node(worker)
        lane.add_node_collection(worker, collection)
    lane.schedule()
    assert [files_of(w, collection) for w in workers] == [[BUSY[0]], [BUSY[1]], [WAITS[0]]]
    finish(lane, workers[2], collection, WAITS[0], keep=1)  # the busy share is full: the next waiting file
    assert files_of(workers[2], collection) == list(WAITS)
    finish(lane, workers[2], collection, WAITS[0])  # its held-back test, done once the next file came
    finish(lane, workers[1], collection, BUSY[1], keep=1)  # one busy file running elsewhere: the next busy file
    assert files_of(workers[1], collection) == [BUSY[1], BUSY[2]]
    finish(lane, workers[2], collection, WAITS[1], keep=1)  # no waiting file left: a busy one beyond the share
    assert files_of(workers[2], collection) == [*WAITS, BUSY[3]] and not any(w.shutting_down for w in workers)
    finish(lane, workers[0], collection, BUSY[0], keep=1)  # nothing left to take: the worker ends
    assert files_of(workers[0], collection) == [BUSY[0]] and workers[0].shutting_down


def test_the_controller_reads_the_waits_marker_as_pytest_does(request):
    """Every file this run collected (the whole suite under `make test`): marked `waits` for pytest exactly when the
    scheduler's reading of its text says so."""
    root = Path(request.config.rootpath)
    marked = {}
    for item in request.session.items:
        marked.setdefault(item.path, item.get_closest_marker("waits") is not None)
    assert marked and {p for p, m in marked.items() if m} == {
        p for p in marked if waiting_file(p.relative_to(root).as_posix())
    }
    assert all(waiting_file(p) for p in WAITS) and not any(waiting_file(p) for p in BUSY)
