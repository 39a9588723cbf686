"""The 实测 table, notes and figure come from the lab's report, render in Chinese, and need no torch."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pytest

from course.errors import CourseError
from course.lab.lesson_view import measured_table, plot_measured_vs_formula, reference_notes


def test_reading_the_view_does_not_import_torch():
    code = "import sys, course.lab.lesson_view; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_missing_report_says_how_to_make_it(tmp_path):
    with pytest.raises(CourseError, match=r"zero_measured\.json: no lab measurements here; run `course lab`"):
        measured_table(tmp_path / "zero_measured.json")


def test_broken_json_names_the_line(tmp_path):
    path = tmp_path / "zero_measured.json"
    path.write_text('{\n"schema": \n', "utf-8")
    with pytest.raises(CourseError, match=r"zero_measured\.json, line 3: not valid JSON"):
        measured_table(path)


def test_wrong_shape_names_the_field(tmp_path):
    path = tmp_path / "zero_measured.json"
    path.write_text(json.dumps({"schema": "course/lab/zero-measured/v1"}), "utf-8")
    with pytest.raises(CourseError, match=r"at top level: 'torch' is a required property"):
        reference_notes(path)


@pytest.mark.torch
def test_table_has_one_line_per_row_with_the_measured_ratios(lab_report_path, lab_report):
    table = measured_table(lab_report_path)
    lines = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(lines) == 1 + len(lab_report["rows"])
    assert table._repr_markdown_() == str(table)
    keep = next(line for line in lines if "reshard_after_forward=False" in line and line.startswith("| 4 "))
    assert "| 197,760 |" in keep and "| 0.667 |" in keep
    padded = [r for r in lab_report["rows"] if r["model"] == "padded" and r["stage"] == 0]
    for row in padded:
        assert f"共补 {row['psi_padded'] - row['psi']} 个元素" in table
    assert table.count("逐位相同") == len(lab_report["final_parameters"])


@pytest.mark.torch
def test_reference_notes_quote_the_measurements(lab_report_path, lab_report):
    notes = reference_notes(lab_report_path)
    assert notes.count("\n- ") + notes.startswith("- ") == 3
    zero = [r for r in lab_report["rows"] if r["implementation"] == "zero_redundancy_optimizer" and r["ranks"] == 4][0]
    assert "、".join(f"{s['optimizer']:,}" for s in zero["memory_bytes"]["per_rank"]) in notes
    assert "1.500（N = 2、4 相同）" in notes and "0.667（N = 2、4 相同）" in notes


@pytest.mark.torch
def test_figure_draws_measured_bars_over_psi_without_missing_glyphs(lab_report_path, lab_report):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = plot_measured_vs_formula(lab_report_path)
        png = fig._repr_png_()
    assert png.startswith(b"\x89PNG") and not [w for w in caught if "missing from font" in str(w.message)]
    memory_ax, comm_ax = fig.axes
    zero0_n2 = next(r for r in lab_report["rows"] if r["label"] == "ZeRO-0" and r["ranks"] == 2 and r["model"] == "main")
    assert memory_ax.patches[0].get_height() == zero0_n2["memory_bytes"]["measured"] / zero0_n2["psi"] == 16
    assert comm_ax.patches[0].get_height() == zero0_n2["comm_elements"]["measured"] / zero0_n2["psi"]
    assert "每卡状态显存" in memory_ax.get_ylabel() and "ZeRO-3\n手写" in [t.get_text() for t in memory_ax.get_xticklabels()]
