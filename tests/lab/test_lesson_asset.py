"""The lab's measurements as a lesson's declared asset: remade when any lab source changes, refused when a
measurement disagrees with the lesson's formulas."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import course.lab.lesson_asset
from course.errors import CourseError, ToolMissing
from course.lab.lesson_asset import lab_measurements, measure_lab

LAB = Path(course.lab.lesson_asset.__file__).parent


def fake_lab(monkeypatch, checks: list[dict]) -> None:
    """course.lab.run_lab replaced by a run whose report has CHECKS (no torch, no ranks)."""
    monkeypatch.setitem(sys.modules, "course.lab.run_lab", SimpleNamespace(run_lab=lambda out: {"checks": checks}))


def test_the_declared_asset_depends_on_every_lab_source_and_schema():
    spec = lab_measurements("assets/lab/zero_measured.json")
    assert spec.output == "assets/lab/zero_measured.json" and spec.draw is measure_lab
    names = {Path(i).relative_to(LAB).as_posix() for i in spec.inputs}
    assert {"run_lab.py", "zero_stages.py", "lesson_view.py", "schema/zero-measured.v1.json"} <= names
    assert names == {p.relative_to(LAB).as_posix() for p in LAB.rglob("*") if p.suffix in (".py", ".json")}


def test_a_measurement_that_disagrees_with_a_formula_fails_the_build(tmp_path, monkeypatch):
    fake_lab(monkeypatch, [{"ok": True}, {"ok": False}, {"ok": False}])
    with pytest.raises(CourseError, match=r"disagree with the formulas in 2 check\(s\)") as error:
        measure_lab(tmp_path / "zero_measured.json", tmp_path)
    assert error.value.where.path == tmp_path / "zero_measured.json"


def test_agreeing_measurements_give_the_report_path(tmp_path, monkeypatch):
    fake_lab(monkeypatch, [{"ok": True}])
    assert measure_lab(tmp_path / "zero_measured.json", tmp_path) == tmp_path / "zero_measured.json"


def test_without_torch_the_build_says_how_to_install_the_lab(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "course.lab.run_lab", None)  # what a missing torch makes the import do
    with pytest.raises(ToolMissing, match=r"pip install -e '\.\[lab\]'"):
        measure_lab(tmp_path / "zero_measured.json", tmp_path)
