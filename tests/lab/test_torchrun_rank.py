"""`torchrun --nproc-per-node=2 -m course lab --torchrun` on gloo writes the same report, every ratio as
`course lab`'s."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("torch")

from course.cli import main  # noqa: E402
from course.errors import CourseError  # noqa: E402
from course.lab.torchrun_rank import torchrun_env  # noqa: E402
from tests.machine_guard import own_temporary_folder  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def torchrun_report(tmp_path_factory) -> dict:
    """The report rank 0 writes when torchrun starts two CPU ranks (c10d rendezvous on a free local port)."""
    out = tmp_path_factory.mktemp("torchrun") / "zero_measured.json"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node=2",
        "-m",
        "course",
        "lab",
        "--torchrun",
        "--out",
        str(out),
    ]
    # torchrun keeps its logs in a temporary folder (torchelastic_*) it does not remove
    done = subprocess.run(command, env=own_temporary_folder(out.parent), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.count(f"wrote {out}") == 1  # rank 0 alone reports
    from course.lab.report_file import read_report

    return read_report(out)


def test_torchrun_at_two_ranks_writes_a_report_with_every_check_passing(torchrun_report):
    assert torchrun_report["ok"], [c for c in torchrun_report["checks"] if not c["ok"]]
    assert (torchrun_report["launcher"], torchrun_report["backend"]) == ("torchrun", "gloo")
    manual = [r for r in torchrun_report["rows"] if r["implementation"] == "manual"]
    assert sorted((r["model"], r["stage"]) for r in manual) == [(m, s) for m in ("main", "padded") for s in range(4)]
    for row in manual:
        assert row["ranks"] == 2 and len(row["memory_bytes"]["per_rank"]) == 2
        assert f"{row['memory_bytes']['ratio']:.3f}" == f"{row['comm_elements']['ratio']:.3f}" == "1.000"
    assert all(f["identical"] for f in torchrun_report["final_parameters"])


def test_torchrun_measures_what_the_own_launcher_measures(torchrun_report, lab_report):
    def measured(report):
        return {
            (r["model"], r["label"]): (r["memory_bytes"]["per_rank"], r["comm_elements"]["per_rank"])
            for r in report["rows"]
            if r["ranks"] == 2
        }

    assert measured(torchrun_report) == measured(lab_report)
    assert [f["sha256"] for f in torchrun_report["final_parameters"]] == [
        f["sha256"] for f in lab_report["final_parameters"] if f["ranks"] == 2
    ]


def test_without_torchrun_variables_the_error_says_how_to_start_it():
    with pytest.raises(CourseError, match=r"RANK, WORLD_SIZE.* not set; .*torchrun --standalone --nproc-per-node=N"):
        torchrun_env({"LOCAL_RANK": "0"})


def test_ranks_option_is_refused_under_torchrun(capsys):
    assert main(["lab", "--torchrun", "--ranks", "2"]) == 2
    assert "under torchrun the number of ranks is torchrun's --nproc-per-node" in capsys.readouterr().err
