"""What the lesson's lab section (扩展（选读）) shows from assets/lab/zero_measured.json (a figure, a summary, the note
comparing FSDP2 with the ZeRO-3 formulas, the full table) and from a committed one-GPU measurement (gpu_memory_table,
with its provenance).

The section teaches in that order: the figure, then a compact table (one N, one line per stage or PyTorch
implementation, in units of Ψ) with one sentence per deviation saying its cause, the FSDP note (fsdp_refinement,
whose between-steps sentence follows the report's between-steps snapshot), and last the full table for readers
who want every measured row, with the same causes under it. Everything is read from the lab's report, so the lesson
never states a number the lab did not produce (memory is counted from live tensors; traffic is computed from the
recorded collectives with the ring formulas, and the text says so). Tables are Markdown strings that also display as
Markdown in Jupyter; the figure is a matplotlib Figure (no pyplot state) that displays as PNG and whose text form is
its alt text.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from pathlib import Path

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from course.errors import CourseError
from course.figures.render import find_cjk_font, render_png
from course.lab.gpu_memory_file import read_record
from course.lab.report_file import read_report

IMPLEMENTATIONS = ("manual", "fsdp2_reshard", "fsdp2_no_reshard", "zero_redundancy_optimizer")
SHORT_LABELS = {
    "fsdp2_reshard": "FSDP2 重分片",
    "fsdp2_no_reshard": "FSDP2 不重分片",
    "zero_redundancy_optimizer": "ZeroRedundancyOptimizer",
}
# The figure is drawn for a phone: one column (the two panels stacked), FIGURE_INCHES wide, its text FIGURE_PT.
# Shown 358 px wide (a 390 px screen less the page's margins), a label of 11 pt on a 5.2 in figure is
# 11 / 72 × 358 / 5.2 ≈ 10.5 px high; wider screens show it larger (at most its natural size, 780 px).
FIGURE_INCHES = (5.2, 8.6)
FIGURE_PT = 11
BAR_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52")


def memory_word(report: dict) -> str:
    """What a rank's state lives in: 显存 for NCCL ranks on GPUs, 内存 for gloo ranks on the CPU."""
    return "显存" if report["backend"] == "nccl" else "内存"


class MarkdownText(str):
    """A str that Jupyter (and Quarto) render as Markdown rather than as a quoted string."""

    def _repr_markdown_(self) -> str:
        return str(self)


class LabFigure(Figure):
    """A Figure that renders itself as PNG in Jupyter, with the CJK font it was built with.

    Its repr is ALT, a sentence saying what the figure shows: Jupyter stores it as the output's text/plain,
    which the page and the notebooks use as the image's alt text.
    """

    def __init__(self, *args, rc: dict, alt: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.rc = rc
        self.alt = alt
        FigureCanvasAgg(self)

    def __repr__(self) -> str:
        return self.alt

    def png(self) -> bytes:
        """PNG bytes; a glyph missing from the font is an error, not a tofu box in the lesson."""
        with matplotlib.rc_context(self.rc):
            return render_png(self)

    def _repr_png_(self) -> bytes:
        return self.png()


def _n(x: float) -> str:
    """A count with thousands separators; non-integers to one decimal, halves rounded up as a reader rounds them."""
    if float(x).is_integer():
        return f"{x:,.0f}"
    return f"{Decimal(float(x)).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP):,}"


def _ordered(report: dict) -> list[dict]:
    """Rows grouped by N, then hand-written stages (main, padded) before the PyTorch references."""
    models = list(report["models"])
    return sorted(
        report["rows"],
        key=lambda r: (r["ranks"], IMPLEMENTATIONS.index(r["implementation"]), models.index(r["model"]), r["stage"]),
    )


def _model_cell(row: dict) -> str:
    """Ψ of the row's model, with Ψ_pad when the flat buffers needed padding."""
    if row["psi_padded"] != row["psi"] and row["implementation"] == "manual":
        return f"Ψ={_n(row['psi'])}（填充后 {_n(row['psi_padded'])}）"
    return f"Ψ={_n(row['psi'])}"


def _memory_cell(row: dict) -> str:
    """Measured state bytes of the fullest rank, plus the emptiest rank when ranks differ."""
    mem = row["memory_bytes"]
    if mem["min_rank"] != mem["measured"]:
        return f"{_n(mem['measured'])}（最少的 rank {_n(mem['min_rank'])}）"
    return _n(mem["measured"])


def matches_formula(row: dict, key: str) -> bool:
    """Whether a measured quantity equals its textbook formula (up to the row's stated padding tolerance)."""
    return abs(row[key]["ratio"] - 1) <= (row["tolerance"] or 0) + 1e-9


def verdict(row: dict) -> str:
    """✓ only where memory and traffic match the formula; a passing PyTorch row that differs points to its reasons."""
    if not row["ok"]:
        return "✗ 检查未通过"
    if matches_formula(row, "memory_bytes") and matches_formula(row, "comm_elements"):
        return "✓ 与公式一致"
    return "≠（原因见下）"


def _table_line(row: dict) -> str:
    """One Markdown table row."""
    mem, comm = row["memory_bytes"], row["comm_elements"]
    impl = f"手写 {row['label']}" if row["implementation"] == "manual" else row["label"]
    held = max(mem["held_after_forward"])
    status = verdict(row)
    cells = [
        str(row["ranks"]),
        _model_cell(row),
        impl,
        f"ZeRO-{row['stage']}",
        _memory_cell(row),
        _n(mem["formula"]),
        f"{mem['ratio']:.3f}",
        _n(held),
        _n(comm["measured"]),
        _n(comm["formula"]),
        f"{comm['ratio']:.3f}",
        status,
    ]
    return "| " + " | ".join(cells) + " |"


def _footnotes(report: dict) -> list[str]:
    """How the numbers were taken, why PyTorch rows differ, the padding tolerance, the final-parameter comparison."""
    first = report["warmup"] + 1
    measured_steps = f"第 {first}–{report['steps']} 步" if report["steps"] > first else f"第 {first} 步"
    memory = memory_word(report)
    notes = [
        f"测量：每个 rank 的{memory} = 存活的参数、梯度、优化器状态张量底层存储的 numel "
        f"× 元素字节数（{sample_point(report, 'after_backward')}采样，"
        f"不含激活与 Adam 的 step 计数标量）；“前向后额外持有”是{sample_point(report, 'after_forward')}仍存活的完整参数"
        "副本。"
        "通信不是在网络上测得的：在 c10d 算子层记录每次集合通信及其张量大小，"
        "再按环形算法公式折算为每个 rank 接收的元素数——"
        "all-reduce 记 2(N−1)/N·n，all-gather、reduce-scatter 记 "
        "(N−1)/N·n，broadcast 非源 rank 记 n、源 rank 记 0（n 为完整张量大小）。"
        f"跳过前 {report['warmup']} 步预热，取{measured_steps}，各步完全相同。",
    ]
    notes += [
        f"{row['label']}（N={row['ranks']}）：{said}" for row in _ordered(report) for said in _deviations(row, memory)
    ]
    manual = [r for r in report["rows"] if r["implementation"] == "manual" and r["stage"] == 0]
    padded = [r for r in manual if r["psi_padded"] != r["psi"]]
    for row in padded:
        extra = row["psi_padded"] - row["psi"]
        notes.append(
            f"填充（N={row['ranks']}）：每层的扁平缓冲区补齐到 N 的倍数，共补 "
            f"{extra} 个元素（Ψ_pad = {_n(row['psi_padded'])}）。"
            "内存实测值与把 Ψ 换成 Ψ_pad 的公式逐字节相等，按记录计算的通信量也与 Ψ_pad 公式一致；"
            f"相对教材公式的比值为 Ψ_pad/Ψ = {row['memory_bytes']['ratio']:.6f}，"
            f"容差上限 L(N−1)/Ψ = {row['tolerance']:.6f}（每层最多补 N−1 个元素）。"
        )
    for final in report["final_parameters"]:
        verdict = "逐位相同" if final["identical"] else "不相同（检查未通过）"
        psi = _n(report["models"][final["model"]]["psi"])
        notes.append(f"N={final['ranks']}、Ψ={psi}：手写 ZeRO-0/1/2/3 训练后的 FP32 master 权重与 BF16 参数{verdict}。")
    notes.append(
        f"环境：torch {report['torch']}，{report['backend']} "
        "后端（墙钟时间见 `course lab` 的输出；页面只放可复现的测量）。"
    )
    return notes


def measured_table(path: Path | str) -> MarkdownText:
    """The full 实测 table (Markdown) with one line per measured row, followed by how it was measured."""
    report = read_report(Path(path))
    header = (
        f"| N | 模型 | 实现 | 对照公式 | 每个 rank 的状态{memory_word(report)} "
        "实测 (B) | 公式 (B) | 比值 | 前向后额外持有 (B) "
        "| 每步每个 rank 的通信 按记录计算（元素） | 公式（元素） | 比值 | 检查 |"
    )
    lines = [header, "|" + "---|" * 12]
    lines += [_table_line(row) for row in _ordered(report)]
    lines.append("")
    lines += [f"- {note}" for note in _footnotes(report)]
    return MarkdownText("\n".join(lines) + "\n")


def _rows_by(report: dict, implementation: str, stage: int | None = None) -> dict[int, dict]:
    """Rows of one implementation on the first (unpadded) model, keyed by N."""
    main = next(iter(report["models"]))
    return {
        r["ranks"]: r
        for r in report["rows"]
        if r["implementation"] == implementation and r["model"] == main and (stage is None or r["stage"] == stage)
    }


def _per_n(rows: dict[int, dict], text) -> str:
    """A per-N phrase: said once when every N gives the same text, else listed per N."""
    texts = {n: text(rows[n]) for n in sorted(rows)}
    if len(set(texts.values())) == 1:
        return f"{next(iter(texts.values()))}（N = {'、'.join(map(str, texts))} 相同）"
    return "；".join(f"N={n}：{t}" for n, t in texts.items())


def _psi(x: float, psi: int) -> str:
    """A per-rank quantity in units of Ψ, two decimals."""
    return f"{x / psi:.2f}Ψ"


def _deviations(row: dict, memory: str = "内存") -> list[str]:
    """One sentence per quantity of ROW that differs from its formula, with the cause (PyTorch rows only);
    MEMORY is what the ranks' state lives in (memory_word)."""
    mem, comm, n = row["memory_bytes"], row["comm_elements"], row["ranks"]
    said = []
    impl = row["implementation"]
    if impl == "fsdp2_no_reshard" and not matches_formula(row, "comm_elements"):
        said.append(
            f"通信是公式的 {comm['ratio']:.3f} 倍：参数从前向结束一直留到反向用完，反向不再 all-gather，"
            f"少掉一个 (N−1)/N·Ψ；代价是这段时间每个 rank 多持有完整 BF16 参数 2Ψ（实测 "
            f"{_n(max(mem['held_after_forward']))} B）。"
        )
    if impl == "zero_redundancy_optimizer" and not matches_formula(row, "comm_elements"):
        low, high, mean = _comm_ratio_range(row)
        received = "、".join(_n(x) for x in _broadcast_received(row))
        said.append(
            f"通信是公式的 {low:.3f}–{high:.3f} 倍（各 rank 平均 {mean:.3f} "
            "倍）：梯度仍由 DDP 整体 all-reduce（每个 rank 2(N−1)/N·Ψ），"
            "更新后再由持有者 broadcast 参数，每个 rank "
            f"收到自己不持有的那部分（N={n} 时各 rank {received} 个元素），"
            "而不是 reduce-scatter + all-gather；优化器状态分得不均，各 rank 的通信也就不等。"
        )
    if impl == "zero_redundancy_optimizer" and not matches_formula(row, "memory_bytes"):
        shares = "、".join(_n(s["optimizer"]) for s in mem["per_rank"])
        said.append(
            f"{memory}是公式的 {mem['ratio']:.3f} 倍：模型是 "
            "FP32，每个 rank 常驻 FP32 参数 4Ψ 与 DDP 梯度桶 4Ψ"
            "（实验设了 `gradient_as_bucket_view=True`，梯度就是桶的视图；"
            "默认设置下梯度与桶各占一份，还要多 4Ψ），"
            "而不是公式假设的 BF16 参数与梯度；Adam 状态按整个参数张量分给各 "
            f"rank，并不均等（N={n} 时各 rank {shares} B，"
            "表中取最满的 rank）。"
        )
    if (
        impl != "manual"
        and not said
        and not (matches_formula(row, "memory_bytes") and matches_formula(row, "comm_elements"))
    ):
        raise CourseError(
            f"row {row['label']} (N={n}) differs from its formula and the lesson has no explanation "
            "for it; add one to course.lab.lesson_view",
            None,
        )
    return said


def _comm_ratio_range(row: dict) -> tuple[float, float, float]:
    """Smallest, largest and mean per-rank traffic over the row's formula (ranks differ when shards are unequal)."""
    per_rank = [Fraction(x) / Fraction(row["comm_elements"]["formula"]) for x in row["comm_elements"]["per_rank"]]
    return float(min(per_rank)), float(max(per_rank)), float(sum(per_rank) / len(per_rank))


def _broadcast_received(row: dict) -> list[float]:
    """Elements each rank received by broadcast in one step (the per-rank traffic less its other collectives)."""
    traffic, kinds = row["comm_elements"]["per_rank"], row["comm_elements"]["by_collective"]
    others = sum(e["traffic"] for kind, e in kinds.items() if kind != "broadcast")  # the same on every rank
    return [t - others for t in traffic]


# The report's sample points (course.lab.measure_steps.SAMPLE_POINTS) as the lesson names them.
SAMPLE_POINT_TEXT = {
    "after_forward": "前向结束时",
    "after_backward": "反向结束、优化器更新前",
    "between_steps": "优化器更新与 zero_grad 之后、下一步前向之前",
}


def sample_point(report: dict, key: str) -> str:
    """Where the lab took a snapshot, in the lesson's words; a sample point the lesson cannot name is an error."""
    if key not in report["sample_points"] or key not in SAMPLE_POINT_TEXT:
        raise CourseError(
            f"the lab's report has no sample point {key!r} the lesson can name "
            f"(report: {sorted(report['sample_points'])}); update course.lab.lesson_view",
            None,
        )
    return SAMPLE_POINT_TEXT[key]


def _over_n(bytes_: float, psi: int, world: int) -> str:
    """Bytes per rank as a multiple of Ψ/N: '12Ψ/N', or two decimals when not whole."""
    k = Fraction(bytes_) * world / psi
    return f"{k.numerator}Ψ/N" if k.denominator == 1 else f"{float(k):.2f}Ψ/N"


def _times_psi(x: float, psi: int) -> str:
    """A per-rank quantity as a multiple of Ψ: '2Ψ', or two decimals when not whole."""
    k = Fraction(x) / psi
    return f"{k.numerator}Ψ" if k.denominator == 1 else f"{float(k):.2f}Ψ"


def between_steps_phrase(report: dict, row: dict) -> str:
    """What ROW keeps from one step to the next, derived from the between-steps snapshot and its gradient count."""
    mem, n, psi = row["memory_bytes"], row["ranks"], row["psi"]
    kept = mem["between_steps"]
    said = (
        f"步与步之间（{sample_point(report, 'between_steps')}）每个 rank 的状态为 {_over_n(kept['measured'], psi, n)}"
    )
    if not any(kept["gradient_tensors"]):
        dropped = mem["measured"] - kept["measured"]
        return (
            said + f"：训练循环每步更新后调用 `zero_grad()`，梯度被置为 None（实测各 rank 留下的梯度张量为 0 个），"
            f"少了 {_over_n(dropped, psi, n)} 的梯度分片，到下一步反向时才重新分配"
        )
    if kept["measured"] == mem["measured"]:
        return said + "，与反向结束时相同：梯度在步与步之间保留"
    return said + f"，梯度保留（各 rank {'、'.join(map(str, kept['gradient_tensors']))} 个梯度张量）"


def _row(report: dict, implementation: str) -> dict:
    """The row of one implementation on the main model at the largest N."""
    n = max(r["ranks"] for r in report["rows"])
    main = next(iter(report["models"]))
    return next(
        r for r in report["rows"] if r["implementation"] == implementation and r["ranks"] == n and r["model"] == main
    )


def fsdp_refinement(path: Path | str) -> MarkdownText:
    """The callout comparing FSDP2 with the ZeRO-3 formulas: every number and the between-steps phrase read from the
    lab's report."""
    report = read_report(Path(path))
    fsdp, keep, zero = (
        _row(report, name) for name in ("fsdp2_reshard", "fsdp2_no_reshard", "zero_redundancy_optimizer")
    )
    n, psi = fsdp["ranks"], fsdp["psi"]
    state = fsdp["memory_bytes"]["per_rank"][0]
    low, high, mean = _comm_ratio_range(zero)
    text = (
        f"实验（N = {n}）表明，“FSDP 就是 ZeRO-3”只在总量上成立：FSDP2 在 "
        "`reshard_after_forward=True` 时每步每个 rank 的通信按记录的集合通信计算为 "
        f"{_times_psi(fsdp['comm_elements']['measured'], psi)}，与 ZeRO-3 公式 "
        f"$3\\frac{{N-1}}{{N}}\\Psi$ 之比为 {fsdp['comm_elements']['ratio']:.3f}；"
        f"{sample_point(report, 'after_backward')}每个 rank 的状态为 "
        f"{_over_n(fsdp['memory_bytes']['measured'], psi, n)}，"
        f"与 ZeRO-3 公式之比为 {fsdp['memory_bytes']['ratio']:.3f}。"
        "但构成与教材不同：FSDP2 不常驻 BF16 参数和梯度，而是保存 FP32 参数分片"
        f"（兼作 master 权重）{_over_n(state['parameters'], psi, n)}、"
        f"FP32 梯度分片 {_over_n(state['gradients'], psi, n)} 与 Adam 的 "
        f"$m$、$v$ 共 {_over_n(state['optimizer'], psi, n)}，BF16 参数只在 "
        f"all-gather 时临时生成。{between_steps_phrase(report, fsdp)}。"
        f"\n\n把 `reshard_after_forward` 设为 False 后，{sample_point(report, 'after_backward')}的状态仍是 "
        f"{_over_n(keep['memory_bytes']['measured'], psi, n)}，但从前向结束到反向结束每个 rank 多持有完整的 BF16 参数 "
        f"{_times_psi(max(keep['memory_bytes']['held_after_forward']), psi)}，"
        "反向不再 all-gather，通信降为 ZeRO-3 公式的 "
        f"{keep['comm_elements']['ratio']:.3f} 倍，一步之内更像 "
        "ZeRO-2。所以更准确的说法是：FSDP 默认按 ZeRO-3 全分片，并可用 "
        "`reshard_after_forward` 在 ZeRO-3 与 ZeRO-2 之间用显存换通信。"
        "同样，PyTorch 的 ZeroRedundancyOptimizer 虽只分片优化器状态，"
        "却用 all-reduce 加 broadcast，且按整个参数张量分配优化器状态，"
        "各 rank 并不均等；每个 rank 收到的是自己不持有的参数，"
        f"通信是 ZeRO-1 公式的 {low:.3f}–{high:.3f} 倍（各 rank 平均 {mean:.3f} 倍）。"
    )
    return MarkdownText(text + "\n")


def measured_summary(path: Path | str) -> MarkdownText:
    """The compact 实测 table for the largest N (stage × memory × traffic, in Ψ) and one sentence per deviation."""
    report = read_report(Path(path))
    main = next(iter(report["models"]))
    n = max(r["ranks"] for r in report["rows"])
    rows = [r for r in _ordered(report) if r["ranks"] == n and r["model"] == main]
    memory = memory_word(report)
    lines = [
        f"N = {n}、Ψ = {_n(report['models'][main]['psi'])} 时每个 rank 的量，单位 Ψ（{memory}按字节、通信按元素）：",
        "",
        f"| 实现 | 对照公式 | 状态{memory} 实测 | 公式 | 每步通信 按记录计算 | 公式 | 结论 |",
        "|---|---|---|---|---|---|---|",
    ]
    notes = []
    for row in rows:
        mem, comm, psi = row["memory_bytes"], row["comm_elements"], row["psi"]
        impl = f"手写 {row['label']}" if row["implementation"] == "manual" else row["label"]
        lines.append(
            f"| {impl} | ZeRO-{row['stage']} | {_psi(mem['measured'], psi)} | {_psi(mem['formula'], psi)} "
            f"| {_psi(comm['measured'], psi)} | {_psi(comm['formula'], psi)} | {verdict(row)} |"
        )
        notes += [f"**{row['label']}**：{s}" for s in _deviations(row, memory)]
    identical = all(f["identical"] for f in report["final_parameters"])
    notes.append(
        "手写 ZeRO-0/1/2/3 训练结束时参数"
        + ("逐位相同：分片只改变状态放在哪里、要通信多少，不改变计算结果。" if identical else "并不相同，检查未通过。")
    )
    return MarkdownText("\n".join(lines) + "\n\n" + "\n".join(f"- {s}" for s in notes) + "\n")


def _figure_groups(report: dict) -> list[tuple[str, dict[int, dict]]]:
    """(x label, rows by N) for ZeRO-0..3 and each reference, on the unpadded model."""
    groups = [(f"ZeRO-{s} 手写", _rows_by(report, "manual", s)) for s in range(4)]
    groups += [(SHORT_LABELS[name], _rows_by(report, name)) for name in IMPLEMENTATIONS[1:]]
    return [(label, rows) for label, rows in groups if rows]


# How each panel's numbers were obtained: memory is counted from live tensors, traffic computed from the
# recorded collectives with the ring formulas (nothing is timed or read off a wire).
SOURCE = {"memory_bytes": "实测", "comm_elements": "按记录计算"}


def _draw_panel(ax, groups, worlds: list[int], key: str, xlabel: str) -> None:
    """Horizontal bars of measured per-rank values (in units of Ψ) per N, one row of bars per implementation (its
    name on one line beside them), with the formula as a black tick across each bar."""
    height = 0.8 / len(worlds)
    for j, world in enumerate(worlds):
        ys = [i for i, (_, rows) in enumerate(groups) if world in rows]
        rows = [groups[i][1][world] for i in ys]
        centres = [y + (j - (len(worlds) - 1) / 2) * height for y in ys]
        measured = [r[key]["measured"] / r["psi"] for r in rows]
        formula = [r[key]["formula"] / r["psi"] for r in rows]
        colour = BAR_COLOURS[j % len(BAR_COLOURS)]
        ax.barh(centres, measured, height * 0.92, color=colour, label=f"{SOURCE[key]} N={world}")
        if key == "memory_bytes":
            held = [max(r[key]["held_after_forward"]) / r["psi"] for r in rows]
            ax.barh(
                centres,
                held,
                height * 0.92,
                left=measured,
                color="white",
                edgecolor=colour,
                hatch="//",
                label="前向后额外持有（完整 BF16 参数）" if j == 0 else None,
            )
        ax.vlines(
            formula,
            [c - height / 2 for c in centres],
            [c + height / 2 for c in centres],
            colors="black",
            linewidth=2,
            label="教材公式（对照阶段）" if j == 0 else None,
        )
    manual = sum(1 for label, _ in groups if "手写" in label)
    ax.axhline(manual - 0.5, color="#999999", linewidth=0.8, linestyle="--")
    ax.set_yticks(range(len(groups)), [label for label, _ in groups])
    ax.invert_yaxis()  # the first implementation on top
    ax.tick_params(labelsize=FIGURE_PT)
    ax.set_xlabel(xlabel, fontsize=FIGURE_PT)
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)


def _alt_text(report: dict, groups, worlds: list[int]) -> str:
    """What the figure shows, in one paragraph, for readers who cannot see it."""
    manual_ok = all(
        matches_formula(r, k)
        for _, rows in groups[:4]
        for r in rows.values()
        for k in ("memory_bytes", "comm_elements")
    )
    off = []
    for _, rows in groups[4:]:
        for key, what in (("memory_bytes", memory_word(report)), ("comm_elements", "通信")):
            bad = {n: r for n, r in sorted(rows.items()) if not matches_formula(r, key)}
            if bad:
                label = next(iter(bad.values()))["label"]
                off.append(f"{label} 的{what}与公式之比 " + _per_n(bad, lambda r: f"{r[key]['ratio']:.3f}"))
    return (
        f"条形图，上为每个 rank 的状态{memory_word(report)}（字节/Ψ），下为每步每个 "
        f"rank 的通信（元素/Ψ），N = {'、'.join(map(str, worlds))} 各一根条，"
        "黑色短线是教材公式。手写 ZeRO-0/1/2/3 的柱顶"
        + ("都落在黑线上" if manual_ok else "并不都落在黑线上")
        + "。"
        + ("。".join(off) if off else "PyTorch 实现也与公式一致")
        + "。"
    )


def plot_measured_vs_formula(path: Path | str) -> LabFigure:
    """Measured vs formula per stage and per PyTorch reference: state bytes and traffic per rank, in units of Ψ."""
    report = read_report(Path(path))
    groups = _figure_groups(report)
    worlds = sorted({n for _, rows in groups for n in rows})
    main = next(iter(report["models"]))
    rc = {"font.family": [find_cjk_font()], "axes.unicode_minus": False}
    with matplotlib.rc_context(rc):
        fig = LabFigure(
            figsize=FIGURE_INCHES, dpi=150, layout="constrained", rc=rc, alt=_alt_text(report, groups, worlds)
        )
        mem_ax, comm_ax = fig.subplots(2, 1)
        _draw_panel(mem_ax, groups, worlds, "memory_bytes", f"每个 rank 的状态{memory_word(report)}（字节 / Ψ）")
        _draw_panel(comm_ax, groups, worlds, "comm_elements", "每步每个 rank 的通信（元素 / Ψ）")
        handles, labels = mem_ax.get_legend_handles_labels()  # one colour per N, shared by both panels
        fig.legend(
            handles,
            [label.removeprefix(f"{SOURCE['memory_bytes']} ") for label in labels],  # "N=2", not "实测 N=2"
            loc="outside lower center",
            ncols=2,
            frameon=False,
            fontsize=FIGURE_PT,
        )
        fig.suptitle(
            f"{memory_word(report)}实测、通信按记录的集合通信计算，对照教材公式\nΨ = "
            f"{_n(report['models'][main]['psi'])} 的 MLP，{report['backend']} 后端\n"
            "黑线为对照阶段的公式；虚线下方为 PyTorch 自带实现\n（重分片即 reshard_after_forward=True）",
            fontsize=FIGURE_PT,
        )
    fig.png()  # fail now, not in the notebook, if a label has a glyph the font lacks
    return fig


STATE_LABELS = {
    "parameters": ("参数", "BF16"),
    "gradients": ("梯度", "BF16"),
    "optimizer": ("优化器状态（master 权重 + Adam m、v）", "FP32"),
    "total": ("合计（模型状态）", ""),
}


def _gib(n: int | None) -> str:
    """Bytes in GiB to two decimals; a dash where the device has no allocator to read."""
    return "—" if n is None else f"{n / 2**30:.2f}"


def _ratio(x: float | None) -> str:
    """A measured/formula ratio to four decimals, or a dash."""
    return "—" if x is None else f"{x:.4f}"


def _provenance_line(record: dict) -> str:
    """Where, when and how the measurement was taken, as the table's caption says it."""
    origin = record["provenance"]
    if origin["device"] == "cuda":
        machine = (
            f"{origin['gpu']}（{origin['gpu_memory_bytes'] / 2**30:.0f} "
            f"GiB），驱动 {origin['driver'] or '未知'}，CUDA {origin['cuda']}"
        )
    else:
        machine = "CPU（无 CUDA 分配器，只有按张量计的字节）"
    return (
        f"测于 {machine}；torch {origin['torch']}，Python {origin['python']}；{origin['date'][:10]}；"
        f"命令 `{origin['command']}`。"
    )


def gpu_memory_table(path: Path | str) -> MarkdownText:
    """The one-GPU measurement: static bytes per state against 2Ψ/2Ψ/12Ψ, activations per sequence length,
    provenance."""
    record = read_record(Path(path))
    model = record["model"]
    lines = [
        f"解码器模型 Ψ = {_n(model['psi'])}（{model['layers']} 层，"
        f"d = {model['d_model']}，词表 {_n(model['vocab'])}），"
        f"每个序列长度训练 {record['steps_per_sequence_length']} 步：",
        "",
        "| 状态 | 精度 | 公式 | 公式 (GiB) | 按张量计 (GiB) | 比值 | 分配器增长 (GiB) | 比值 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, (label, precision) in STATE_LABELS.items():
        row = record["static"][name]
        lines.append(
            f"| {label} | {precision} | {row['formula']} | "
            f"{_gib(row['formula_bytes'])} | {_gib(row['counted_bytes'])} "
            f"| {_ratio(row['counted_ratio'])} | {_gib(row['allocator_bytes'])} "
            f"| {_ratio(row['allocator_ratio'])} |"
        )
    lines += [
        "",
        "| 序列长度 s | 批 b | 为反向保存的激活 (GiB) | 峰值 − 静态 (GiB) | 每 token 每层 (KiB) |",
        "|---|---|---|---|---|",
    ]
    for seq in record["activations"]:
        per = seq["activation_bytes_per_token_per_layer"]
        lines.append(
            f"| {seq['seq_len']} | {seq['batch']} | "
            f"{_gib(seq['saved_for_backward_bytes'])} | {_gib(seq['activation_bytes'])} "
            f"| {'—' if per is None else f'{per / 1024:.1f}'} |"
        )
    lines += ["", f"- {_provenance_line(record)}"]
    return MarkdownText("\n".join(lines) + "\n")
