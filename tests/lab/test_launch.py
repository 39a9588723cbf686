"""Ranks that fail or hang end the run with a clear error instead of hanging it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402

from course.errors import CourseError  # noqa: E402
from course.lab.launch import Backend, choose_backend, gpu_count, run_ranks  # noqa: E402

from . import fake_cuda  # noqa: E402

pytestmark = pytest.mark.torch


def _rank_and_pid(*, device, offset):
    """Each rank reports who it is."""
    return dist.get_rank() + offset, dist.get_world_size(), os.getpid()


def _rank_one_raises(*, device):
    """Rank 1 fails; rank 0 would wait forever in the barrier without the process-group timeout."""
    if dist.get_rank() == 1:
        raise RuntimeError("rank one broke on purpose")
    dist.barrier()


def _rank_one_hangs(*, device):
    """Rank 1 never reports."""
    if dist.get_rank() == 1:
        time.sleep(60)
    return "done"


def test_results_come_back_in_rank_order_from_separate_processes():
    results = run_ranks(_rank_and_pid, world=3, payload={"offset": 10}, timeout=60)
    assert [r[:2] for r in results] == [(10, 3), (11, 3), (12, 3)]
    assert len({r[2] for r in results} | {os.getpid()}) == 4


def test_failing_rank_reports_its_traceback():
    started = time.monotonic()
    expected = r"lab rank\(s\) (0, )?1 of 2 failed:(.|\n)*--- rank 1 ---\nTraceback(.|\n)*rank one broke on purpose"
    with pytest.raises(CourseError, match=expected):
        run_ranks(_rank_one_raises, world=2, payload={}, timeout=60, pg_timeout=30)
    assert time.monotonic() - started < 20


def test_silent_rank_hits_the_deadline_and_is_stopped():
    started = time.monotonic()
    with pytest.raises(CourseError, match=r"lab ranks \[1\] did not report within 3 s"):
        run_ranks(_rank_one_hangs, world=2, payload={}, timeout=3, pg_timeout=10)
    assert time.monotonic() - started < 15


def test_one_rank_is_refused():
    with pytest.raises(CourseError, match="at least 2 ranks"):
        run_ranks(_rank_and_pid, world=1, payload={"offset": 0}, backend=Backend("gloo", "cpu"))


def _join_fails_until_marked(rank, *args):
    """Stand-in for joining the group: fails (and leaves a mark) the first time, joins for real afterwards."""
    from course.lab import launch

    marker = os.environ["COURSE_LAB_TEST_MARKER"]
    if not os.path.exists(marker):
        open(marker, "w").close()
        raise RuntimeError("Gloo connectFullMesh failed (simulated)")
    return launch.REAL_JOIN(rank, *args)


def test_group_that_cannot_form_is_started_again(monkeypatch, tmp_path):
    from course.lab import launch

    marker = tmp_path / "first-attempt-failed"
    monkeypatch.setenv("COURSE_LAB_TEST_MARKER", str(marker))
    monkeypatch.setattr(launch, "REAL_JOIN", launch._join_group, raising=False)
    monkeypatch.setattr(launch, "_join_group", _join_fails_until_marked)
    assert [r[:2] for r in run_ranks(_rank_and_pid, world=2, payload={"offset": 0}, timeout=60)] == [(0, 2), (1, 2)]
    assert marker.exists()


def test_group_that_never_forms_gives_up(monkeypatch):
    from course.lab import launch

    def never(rank, *args):
        raise RuntimeError("Gloo connectFullMesh failed (simulated)")

    monkeypatch.setattr(launch, "_join_group", never)
    with pytest.raises(
        CourseError, match=r"could not join the process group(.|\n)*connectFullMesh failed \(simulated\)"
    ):
        run_ranks(_rank_and_pid, world=2, payload={"offset": 0}, timeout=60, attempts=2)


def _machine_with_gpus(tmp_path: Path, gpus: int) -> tuple[dict, Path]:
    """Environment under which every Python process believes it has `gpus` GPUs; the log of CUDA queries."""
    log, site = tmp_path / "cuda-queries.jsonl", tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        fake_cuda.sitecustomize_text(str(Path(fake_cuda.__file__).parent), gpus, str(log))
    )
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return env, log


def test_cpu_ranks_on_a_one_gpu_machine_run_and_never_touch_cuda(tmp_path):
    env, log = _machine_with_gpus(tmp_path, gpus=1)
    out = tmp_path / "zero_measured.json"
    lab = subprocess.Popen(
        [sys.executable, "-m", "course", "lab", "--ranks", "2", "--out", str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stdout, stderr = lab.communicate(timeout=600)
    assert lab.returncode == 0, stdout[-2000:] + stderr[-4000:]
    queries = [json.loads(line) for line in log.read_text("utf-8").splitlines()]
    assert [q for q in queries if q["pid"] == lab.pid] == []  # the process that forks the ranks never asked CUDA
    probes = [q for q in queries if q["process"] == "MainProcess"]
    assert probes and {q.get("visible") for q in probes} == {1}  # the GPU was found, by a child process
    in_ranks = [q for q in queries if q["process"].startswith("course-lab-rank")]
    assert in_ranks and {q.get("visible") for q in in_ranks} == {0}  # torch.optim asked; the ranks saw no GPU
    report = json.loads(out.read_text("utf-8"))
    assert report["ok"] and report["backend"] == "gloo"


def test_gpus_are_counted_in_another_process(tmp_path, monkeypatch):
    import torch

    env, log = _machine_with_gpus(tmp_path, gpus=4)
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(torch.backends.cuda, "is_built", lambda: True)
    assert gpu_count() == 4
    askers = {json.loads(line)["pid"] for line in log.read_text("utf-8").splitlines()}
    assert askers and os.getpid() not in askers
    assert choose_backend(4) == Backend("nccl", "cuda") and choose_backend(8) == Backend("gloo", "cpu")


def test_a_cpu_only_torch_is_not_probed(monkeypatch):
    import torch

    if torch.backends.cuda.is_built():
        pytest.skip("this torch is built with CUDA")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("probed a CPU-only torch"))
    assert gpu_count() == 0
