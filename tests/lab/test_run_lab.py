"""A real `course lab` run: every hand-written ratio is 1 (or Ψ_pad/Ψ within tolerance), references as explained."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

pytest.importorskip("torch")

from course.cli import main  # noqa: E402
from course.errors import CourseError  # noqa: E402
from course.lab.formulas import padding_bound  # noqa: E402
from course.lab.run_lab import MAIN, PADDED, check_options  # noqa: E402

pytestmark = pytest.mark.torch


def _rows(report, implementation, model="main"):
    return [r for r in report["rows"] if r["implementation"] == implementation and r["model"] == model]


def _row(report, implementation, ranks):
    (row,) = [r for r in _rows(report, implementation) if r["ranks"] == ranks]
    return row


def test_every_check_passes(lab_report):
    assert lab_report["ok"], [c for c in lab_report["checks"] if not c["ok"]]
    assert {r["ranks"] for r in lab_report["rows"]} == {2, 4}


def test_unpadded_stages_match_the_lesson_exactly(lab_report):
    rows = _rows(lab_report, "manual")
    assert sorted((r["ranks"], r["stage"]) for r in rows) == [(n, s) for n in (2, 4) for s in range(4)]
    for row in rows:
        assert row["psi"] == row["psi_padded"] == MAIN.psi
        assert row["memory_bytes"]["measured"] == row["memory_bytes"]["formula"]
        assert row["comm_elements"]["measured"] == row["comm_elements"]["formula"]


def test_padded_stages_sit_psi_pad_over_psi_above_the_lesson(lab_report):
    for row in _rows(lab_report, "manual", "padded"):
        excess = row["psi_padded"] / row["psi"]
        assert row["psi_padded"] > row["psi"] == PADDED.psi
        assert row["memory_bytes"]["ratio"] == pytest.approx(excess, rel=1e-12)
        assert row["comm_elements"]["ratio"] == pytest.approx(excess, rel=1e-12)
        assert excess - 1 <= row["tolerance"] == pytest.approx(float(padding_bound(PADDED.layer_numels, row["ranks"])))


def test_zero_3_all_gathers_twice_and_zero_2_once(lab_report):
    by_stage = {(r["ranks"], r["stage"]): r["comm_elements"]["by_collective"] for r in _rows(lab_report, "manual")}
    for n in (2, 4):
        assert set(by_stage[(n, 0)]) == {"all_reduce"}
        assert by_stage[(n, 3)]["all_gather"]["numel"] == 2 * by_stage[(n, 2)]["all_gather"]["numel"] == 2 * MAIN.psi


def test_final_parameters_identical_across_stages(lab_report):
    finals = lab_report["final_parameters"]
    assert len(finals) == 4 and all(f["identical"] for f in finals)
    assert len({f["sha256"]["ZeRO-0"] for f in finals}) == 4  # different N and models train differently


def test_pytorch_references_are_present_and_differ_as_explained(lab_report):
    psi = MAIN.psi
    for n in (2, 4):
        reshard, keep = _row(lab_report, "fsdp2_reshard", n), _row(lab_report, "fsdp2_no_reshard", n)
        zero = _row(lab_report, "zero_redundancy_optimizer", n)
        assert reshard["memory_bytes"]["measured"] == keep["memory_bytes"]["measured"] == 16 * psi // n
        assert reshard["memory_bytes"]["per_rank"][0]["gradients"] == 4 * psi // n  # FP32 gradient shards
        assert max(keep["memory_bytes"]["held_after_forward"]) == 2 * psi
        assert keep["comm_elements"]["ratio"] == pytest.approx(2 / 3)
        optimizer = [s["optimizer"] for s in zero["memory_bytes"]["per_rank"]]
        assert sum(optimizer) == 8 * psi and len(set(optimizer)) > 1
        # Each rank receives by broadcast the parameters it does not own (Adam keeps 8 bytes per owned element):
        # unequal per rank, 1.5 × the ZeRO-1 formula only on average over the ranks.
        ring = Fraction(n - 1, n)
        assert zero["comm_elements"]["per_rank"] == [2 * ring * psi + psi - o // 8 for o in optimizer]
        assert sum(zero["comm_elements"]["per_rank"]) == pytest.approx(1.5 * n * zero["comm_elements"]["formula"])
        assert zero["comm_elements"]["ratio"] == pytest.approx(
            max(zero["comm_elements"]["per_rank"]) / (2 * ring * psi)
        )
        # Between steps FSDP2 has dropped its gradients (zero_grad): FP32 shard + m + v = 12Ψ/N, no gradient tensor.
        for row in (reshard, keep):
            assert row["memory_bytes"]["between_steps"]["per_rank"] == [12 * psi // n] * n
            assert row["memory_bytes"]["between_steps"]["gradient_tensors"] == [0] * n
        assert zero["memory_bytes"]["between_steps"]["per_rank"] == [8 * psi + o for o in optimizer]


def test_report_file_is_what_was_returned(lab_report_path, lab_report):
    assert json.loads(lab_report_path.read_text("utf-8")) == lab_report


@pytest.mark.parametrize(
    ("ranks", "steps", "warmup", "message"),
    [
        ((3,), 4, 2, "--ranks 3: N must be one of"),
        ((2, 2), 4, 2, "distinct values"),
        ((2,), 2, 2, "need steps > warmup"),
    ],
)
def test_bad_options_are_refused(ranks, steps, warmup, message):
    with pytest.raises(CourseError, match=message):
        check_options(ranks, steps, warmup)


def test_course_lab_command(tmp_path, capsys):
    out = tmp_path / "lab" / "zero_measured.json"
    assert main(["lab", "--ranks", "2", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}" in printed and "all checks passed" in printed
    assert "N=2 padded final parameters of ZeRO-0..3: bit-identical" in printed
    assert json.loads(out.read_text("utf-8"))["ok"] is True


def test_course_lab_exits_non_zero_when_a_check_fails(tmp_path, monkeypatch, lab_report):
    import course.lab.run_lab as run_lab_module

    failing = json.loads(json.dumps(lab_report))
    failing["checks"][0]["ok"] = False
    monkeypatch.setattr(run_lab_module, "run_lab", lambda **_: failing)
    assert main(["lab", "--out", str(tmp_path / "x.json")]) == 1


def test_bad_rank_count_is_a_located_cli_error(capsys):
    assert main(["lab", "--ranks", "3"]) == 2
    assert "--ranks 3: N must be one of (2, 4, 8, 16)" in capsys.readouterr().err


@pytest.mark.slow
def test_eight_ranks_get_the_same_checks(tmp_path):
    from course.lab.run_lab import run_lab

    report = run_lab(out=tmp_path / "zero_measured.json", ranks=(8,))
    assert report["ok"], [c for c in report["checks"] if not c["ok"]]
    manual = [r for r in report["rows"] if r["implementation"] == "manual" and r["model"] == "main"]
    assert [(r["ranks"], r["memory_bytes"]["ratio"], r["comm_elements"]["ratio"]) for r in manual] == [
        (8, 1.0, 1.0)
    ] * 4
    assert all(len(r["memory_bytes"]["per_rank"]) == 8 for r in report["rows"])
