"""The lab section's figure, summary and tables come from the lab's report and the GPU measurement, in Chinese,
without torch."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import pytest

from course.errors import CourseError
from course.lab.lesson_view import gpu_memory_table, measured_summary, measured_table, plot_measured_vs_formula, verdict


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
        measured_summary(path)


@pytest.mark.torch
def test_table_has_one_line_per_row_with_the_measured_ratios(lab_report_path, lab_report):
    table = measured_table(lab_report_path)
    lines = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(lines) == 1 + len(lab_report["rows"])
    assert table._repr_markdown_() == str(table)
    keep = next(line for line in lines if "reshard_after_forward=False" in line and line.startswith("| 4 "))
    assert "| 197,760 |" in keep and "| 0.667 |" in keep and keep.endswith("| ≠（原因见下） |")
    notes = table.split("\n\n", 1)[1]  # what the rows point to: each differing PyTorch row's cause, under the table
    assert "FSDP2 reshard_after_forward=False（N=4）：通信是公式的 0.667 倍" in notes
    assert all(line.endswith("| ✓ 与公式一致 |") for line in lines if "手写" in line)
    padded = [r for r in lab_report["rows"] if r["model"] == "padded" and r["stage"] == 0]
    for row in padded:
        assert f"共补 {row['psi_padded'] - row['psi']} 个元素" in table
    assert "内存实测值与把 Ψ 换成 Ψ_pad 的公式逐字节相等，按记录计算的通信量也与 Ψ_pad 公式一致" in notes
    assert table.count("逐位相同") == len(lab_report["final_parameters"])


def test_counts_round_halves_up_as_a_reader_does():
    """A formula value of 213,329.25 elements prints as 213,329.3, not as Python's round-half-even 213,329.2."""
    from course.lab.lesson_view import _n

    assert f"{213329.25:,.1f}" == "213,329.2"
    assert _n(213329.25) == "213,329.3" and _n(2.25) == "2.3" and _n(197760) == "197,760" and _n(0.75) == "0.8"


@pytest.mark.torch
def test_summary_is_one_n_with_one_sentence_per_deviation(lab_report_path, lab_report):
    summary = measured_summary(lab_report_path)
    rows = [line for line in summary.splitlines() if line.startswith("| ") and "---" not in line][1:]
    largest = max(r["ranks"] for r in lab_report["rows"])
    main = [r for r in lab_report["rows"] if r["ranks"] == largest and r["model"] == "main"]
    assert len(rows) == len(main) == 7
    assert "| 手写 ZeRO-2 | ZeRO-2 | 5.50Ψ | 5.50Ψ | 1.50Ψ | 1.50Ψ | ✓ 与公式一致 |" in rows
    assert "| 手写 ZeRO-3 | ZeRO-3 | 4.00Ψ | 4.00Ψ | 2.25Ψ | 2.25Ψ | ✓ 与公式一致 |" in rows
    deviating = [r for r in main if verdict(r) != "✓ 与公式一致"]
    assert {r["implementation"] for r in deviating} == {"fsdp2_no_reshard", "zero_redundancy_optimizer"}
    sentences = [line for line in summary.splitlines() if line.startswith("- **")]
    assert len(sentences) == 3  # FSDP2 no-reshard traffic; ZeroRedundancyOptimizer traffic and memory
    assert any("0.667 倍" in s and "反向不再 all-gather" in s for s in sentences)
    assert any("1.500 倍" in s and "broadcast" in s for s in sentences)
    zero = next(r for r in deviating if r["implementation"] == "zero_redundancy_optimizer")
    assert any("、".join(f"{s['optimizer']:,}" for s in zero["memory_bytes"]["per_rank"]) in s for s in sentences)


@pytest.mark.torch
def test_traffic_is_labelled_computed_and_only_memory_measured(lab_report_path):
    """Traffic comes from recorded collectives and the ring formulas, so no column, bar or title calls it 实测."""
    headers = [
        next(line for line in str(text).splitlines() if line.startswith("| "))
        for text in (measured_table(lab_report_path), measured_summary(lab_report_path))
    ]
    for header in headers:
        cells = [c.strip() for c in header.strip("|").split("|")]
        traffic = [c for c in cells if "通信" in c and "公式" not in c]
        assert traffic and all("按记录计算" in c and "实测" not in c for c in traffic), header
        assert any("状态内存" in c and "实测" in c for c in cells), header  # gloo ranks keep their state in host memory
    fig = plot_measured_vs_formula(lab_report_path)
    memory_ax, comm_ax = fig.axes
    assert {b.get_label().split()[0] for b in memory_ax.containers if b.get_label().endswith(("=2", "=4"))} == {"实测"}
    assert {b.get_label().split()[0] for b in comm_ax.containers if b.get_label().endswith(("=2", "=4"))} == {
        "按记录计算"
    }
    assert "通信按记录的集合通信计算" in fig._suptitle.get_text()


def test_a_deviation_without_an_explanation_is_an_error(tmp_path):
    """A PyTorch row that stops matching its formula must not be shown as if it were explained."""
    import course.lab.lesson_view as view

    row = {
        "implementation": "fsdp2_reshard",
        "label": "FSDP2",
        "ranks": 2,
        "tolerance": None,
        "ok": True,
        "memory_bytes": {"ratio": 1.2, "held_after_forward": [0], "per_rank": []},
        "comm_elements": {"ratio": 1.0},
    }
    with pytest.raises(CourseError, match="differs from its formula and the lesson has no explanation"):
        view._deviations(row)


@pytest.mark.torch
def test_figure_draws_measured_bars_over_psi_without_missing_glyphs(lab_report_path, lab_report):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig = plot_measured_vs_formula(lab_report_path)
        png = fig._repr_png_()
    assert png.startswith(b"\x89PNG") and not [w for w in caught if "missing from font" in str(w.message)]
    memory_ax, comm_ax = fig.axes
    zero0_n2 = next(
        r for r in lab_report["rows"] if r["label"] == "ZeRO-0" and r["ranks"] == 2 and r["model"] == "main"
    )
    assert memory_ax.patches[0].get_width() == zero0_n2["memory_bytes"]["measured"] / zero0_n2["psi"] == 16
    assert comm_ax.patches[0].get_width() == zero0_n2["comm_elements"]["measured"] / zero0_n2["psi"]
    assert "每个 rank 的状态内存" in memory_ax.get_xlabel() and "ZeRO-3 手写" in [
        t.get_text() for t in memory_ax.get_yticklabels()
    ]
    # drawn for a phone: shown 358 px wide (390 px less the page's margins), every label is at least 10 px high
    shown = 358 / (fig.get_figwidth() * fig.dpi)
    labels = [t for ax in fig.axes for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text()]
    assert labels and min(t.get_fontsize() * fig.dpi / 72 * shown for t in labels) >= 10
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert {"N=2", "N=4", "前向后额外持有（完整 BF16 参数）", "教材公式（对照阶段）"} <= set(legend)
    alt = repr(fig)  # Jupyter's text/plain: the page's and the notebooks' alt text
    assert alt.startswith("条形图") and "Figure" not in alt and "都落在黑线上" in alt and "0.667" in alt


def _rows(table: str) -> list[list[str]]:
    """The cells of every Markdown table row (header and separator lines included)."""
    return [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines() if line.startswith("|")]


@pytest.mark.torch
def test_gpu_table_on_a_cpu_record_shows_counted_bytes_and_no_allocator(tiny_record_path, tiny_record):
    table = gpu_memory_table(tiny_record_path)
    rows = {r[0]: r for r in _rows(table)}
    psi = tiny_record["model"]["psi"]
    assert rows["参数"][1:4] == ["BF16", "2Ψ", f"{2 * psi / 2**30:.2f}"]
    assert [rows[name][5] for name in ("参数", "梯度", "合计（模型状态）")] == ["1.0000"] * 3
    assert rows["优化器状态（master 权重 + Adam m、v）"][1:3] == ["FP32", "12Ψ"]
    assert {rows[name][6] for name in ("参数", "梯度")} == {"—"}  # a CPU has no caching allocator to read
    assert [r[0] for r in _rows(table) if r[0].isdigit()] == ["16", "32"]
    assert f"Ψ = {psi:,}" in table and "CPU（无 CUDA 分配器" in table
    assert (
        f"torch {tiny_record['provenance']['torch']}" in table
        and "`python -m course.lab.decoder_memory --preset tiny" in table
    )


@pytest.mark.torch
def test_gpu_table_labels_the_gpu_driver_and_allocator_growth(tmp_path, tiny_record):
    record = json.loads(json.dumps(tiny_record))
    record["provenance"].update(
        device="cuda",
        gpu="NVIDIA H200",
        gpu_memory_bytes=150_000_000_000,
        driver="570.1",
        cuda="13.0",
        date="2026-12-01T01:00:00+00:00",
    )
    optimizer = record["static"]["optimizer"]
    optimizer.update(allocator_bytes=optimizer["formula_bytes"] + 512, allocator_ratio=1.00001)
    long = record["activations"][1]
    long.update(activation_bytes=3 * 2**30, activation_bytes_per_token_per_layer=2048.0)
    path = tmp_path / "gpu_memory.json"
    path.write_text(json.dumps(record), "utf-8")
    table = gpu_memory_table(path)
    rows = {r[0]: r for r in _rows(table)}
    assert rows["优化器状态（master 权重 + Adam m、v）"][7] == "1.0000"
    assert rows["32"][3:5] == ["3.00", "2.0"]
    assert "测于 NVIDIA H200（140 GiB），驱动 570.1，CUDA 13.0" in table and "2026-12-01" in table


def test_gpu_table_without_a_measurement_says_how_to_make_one(tmp_path):
    with pytest.raises(
        CourseError, match=r"gpu_memory\.json: no GPU measurement here; run `python -m course\.lab\.decoder_memory`"
    ):
        gpu_memory_table(tmp_path / "gpu_memory.json")


def _edited_report(lab_report: dict, tmp_path, edit) -> str:
    """The run's report with one FSDP2 row (N = 4) changed by EDIT, written where the lesson's view reads it."""
    import copy

    report = copy.deepcopy(lab_report)
    row = next(
        r for r in report["rows"] if r["implementation"] == "fsdp2_reshard" and r["ranks"] == 4 and r["model"] == "main"
    )
    edit(row)
    path = tmp_path / "zero_measured.json"
    path.write_text(json.dumps(report, ensure_ascii=False), "utf-8")
    return path


@pytest.mark.torch
def test_the_fsdp_note_states_what_the_lab_measured_between_steps(lab_report_path, lab_report, tmp_path):
    """The trainer drops FSDP2's gradients after each step (zero_grad): the report says so and the note follows it."""
    from course.lab.lesson_view import fsdp_refinement

    row = next(
        r
        for r in lab_report["rows"]
        if r["implementation"] == "fsdp2_reshard" and r["ranks"] == 4 and r["model"] == "main"
    )
    psi, n = row["psi"], row["ranks"]
    kept = row["memory_bytes"]["between_steps"]
    assert kept["measured"] * n == 12 * psi and kept["gradient_tensors"] == [0] * n  # FP32 shard + m + v
    assert row["memory_bytes"]["measured"] * n == 16 * psi  # after backward, before the optimizer step
    note = fsdp_refinement(lab_report_path)
    assert "步与步之间（优化器更新与 zero_grad 之后、下一步前向之前）每个 rank 的状态为 12Ψ/N" in note
    assert (
        "梯度被置为 None（实测各 rank 留下的梯度张量为 0 个）" in note and "16Ψ/N，与 ZeRO-3 公式之比为 1.000" in note
    )

    # A trainer that kept its gradients would be described as keeping them: the phrase is read, not typed.
    def keeps_gradients(r):
        r["memory_bytes"]["between_steps"] = {
            "per_rank": [16 * psi // n] * n,
            "measured": 16 * psi // n,
            "gradient_tensors": [3] * n,
        }

    kept_note = fsdp_refinement(_edited_report(lab_report, tmp_path, keeps_gradients))
    assert "每个 rank 的状态为 16Ψ/N，与反向结束时相同：梯度在步与步之间保留" in kept_note and "12Ψ/N" not in kept_note


@pytest.mark.torch
def test_every_number_of_the_fsdp_note_comes_from_the_report(lab_report_path, lab_report, tmp_path):
    from course.lab.lesson_view import fsdp_refinement

    note = fsdp_refinement(lab_report_path)
    zero = next(r for r in lab_report["rows"] if r["implementation"] == "zero_redundancy_optimizer" and r["ranks"] == 4)
    ratios = [x / zero["comm_elements"]["formula"] for x in zero["comm_elements"]["per_rank"]]
    assert f"{min(ratios):.3f}–{max(ratios):.3f} 倍（各 rank 平均 {sum(ratios) / len(ratios):.3f} 倍）" in note
    assert len(set(ratios)) > 1  # unequal shards: ranks receive unequal broadcasts, none averaged away

    def more_traffic(r):
        r["comm_elements"].update(measured=r["comm_elements"]["measured"] * 2, ratio=2.0)

    changed = fsdp_refinement(_edited_report(lab_report, tmp_path, more_traffic))
    assert (
        "每步每个 rank 的通信按记录的集合通信计算为 4.50Ψ，与 ZeRO-3 公式 $3\\frac{N-1}{N}\\Psi$ 之比为 2.000"
        in changed
    )
    assert "2.25Ψ" in note and "2.25Ψ" not in changed


def test_the_ranks_state_is_called_memory_on_gloo_and_gpu_memory_on_nccl():
    """gloo ranks run on the CPU and keep their state in host memory (内存); NCCL ranks keep it on a GPU (显存)."""
    from course.lab.lesson_view import memory_word

    assert memory_word({"backend": "gloo"}) == "内存"
    assert memory_word({"backend": "nccl"}) == "显存"
