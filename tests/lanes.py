"""How `make test` hands test files to its pytest-xdist workers: one worker per core for the busy files, and one more
for the files that mostly wait.

Some files spend most of their time waiting: for a time-out they test, a server or a kernel to start (each marked
`waits`, as measured: test_grade_readable, for one, used 9 CPU-s in 31 s). With one worker per core, a core sits idle
while its worker waits, and when two such files ran side by side both did (about 115 idle CPU-s in a 2-core run). So
`make test` starts one worker more than there are cores (Makefile, TEST_WORKERS), and while a waiting file is left
this scheduler lets no more busy files run at once than there are cores: a worker that frees up takes the next busy
file while fewer are running, else the next waiting one. Once no waiting file is left, every worker takes the next
busy file: the run's last minutes are short files, each of which waits a little (a server, a subprocess, a kernel),
and with one worker per core every such wait left a core idle (about 25 idle CPU-s after the waiting files ran out, at
about 320 s); with the third worker beside them, the cores stay busy until the last few seconds.
Files keep their collection order within each kind (tests/collection_order.py: longest first).

Side by side on one commit, built checkout, 2 cores: 482 s with it (busy 923 CPU-s, idle 35) against 524 s with two
workers and xdist's own file scheduling (busy 931, idle 110). Letting every worker take busy files once the waiting
ones ran out, back to back on one checkout (2026-12-07): 489 s (busy 955, idle 18) against 508 s (busy 966, idle 46).

The scheduler runs in pytest-xdist's controller, which does not collect: it reads whether a file waits from the file
itself (the marker in its text), and tests/test_lanes.py checks that this reading agrees with the marker as pytest
sees it.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from xdist.scheduler import LoadFileScheduling

ROOT = Path(__file__).resolve().parents[1]
WAITS = re.compile(r"\bpytest\.mark\.waits\b")


@cache
def waiting_file(path: str) -> bool:
    """Whether the test file at PATH (relative to the project, as xdist names it) is marked `waits`."""
    file = ROOT / path
    return file.is_file() and bool(WAITS.search(file.read_text("utf-8")))


class WaitingLane(LoadFileScheduling):
    """pytest-xdist's file scheduling, with at most BUSY files not marked `waits` running at once while a waiting
    file is left."""

    def __init__(self, config, log=None, *, busy: int):
        super().__init__(config, log)
        self.busy = busy

    def running(self, node) -> str | None:
        """The file NODE is running (its first file with tests left), or None."""
        return next((scope for scope, unit in self.assigned_work.get(node, {}).items() if not all(unit.values())), None)

    def mark_test_complete(self, node, item_index: int, duration: float = 0) -> None:
        """Record the test as done; then any worker may take a file (one file ending frees a busy slot for all)."""
        nodeid = self.registered_collections[node][item_index]
        self.assigned_work[node][self._split_scope(nodeid)][nodeid] = True
        for each in self.nodes:
            self._reschedule(each)

    def next_file(self, waits: bool) -> str | None:
        """The first file in the queue that waits (or is busy, for WAITS False)."""
        return next((scope for scope in self.workqueue if waiting_file(scope) == waits), None)

    def _reschedule(self, node) -> None:
        """Give NODE its next file once it is on the last test of its own (an xdist worker holds that test back
        until it knows what comes next), or stop it when the queue is empty."""
        if node.shutting_down:
            return
        if not self.workqueue:
            node.shutdown()
            return
        if self._pending_of(self.assigned_work[node]) > 1:
            return
        busy_elsewhere = sum(
            1 for other in self.nodes if other is not node and (f := self.running(other)) and not waiting_file(f)
        )
        busy, waiting = self.next_file(False), self.next_file(True)
        chosen = busy if busy and (busy_elsewhere < self.busy or not waiting) else waiting
        unit = self.workqueue.pop(chosen)
        self.assigned_work[node][chosen] = unit
        collection = self.registered_collections[node]
        node.send_runtest_some([collection.index(nodeid) for nodeid, done in unit.items() if not done])

    def schedule(self) -> None:
        """Once every worker has collected: queue the files in collection order and start each worker."""
        assert self.collection_is_completed
        if self.collection is None:
            if not self._check_nodes_have_same_collection():
                self.log("**Different tests collected, aborting run**")
                return
            self.collection = list(next(iter(self.registered_collections.values())))
            for nodeid in self.collection:
                self.workqueue.setdefault(self._split_scope(nodeid), {})[nodeid] = False
        for node in self.nodes:
            self._reschedule(node)
