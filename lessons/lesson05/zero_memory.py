"""图 5-3: per-GPU static memory of ZeRO-0..3, split into parameters / gradients / optimizer states.

Every number in the figure comes from the lesson's reference solution, ``zero_memory_per_gpu`` in
``solutions/lesson05.py`` (figures.py passes in this project's), so the chart and the code students check
against can never disagree. Drawn with course.figures.render: CJK labels, no pyplot state, stable PNG bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import matplotlib
from matplotlib.figure import Figure

from course.errors import CourseError, Location
from course.figures.render import agg_figure, find_cjk_font, render_png
from course.fileio import write_atomic

MemoryFn = Callable[..., float]

GB = 1e9  # the lesson converts bytes to GB with 10^9
ADAM_K = 12  # BF16 mixed precision + AdamW: 4 (FP32 master) + 4 (m) + 4 (v) bytes per parameter
STAGES = (0, 1, 2, 3)
GRADS_SHARDED_FROM = 2  # ZeRO-2 is the first stage that shards gradients
PARAMS_SHARDED_FROM = 3  # ZeRO-3 is the first stage that shards parameters
SHARDED_BY_STAGE = (
    "nothing",
    "optimizer states",
    "optimizer states and gradients",
    "optimizer states, gradients and parameters",
)

STAGE_LABELS = ("ZeRO-0\n朴素 DP", "ZeRO-1\n分片优化器状态", "ZeRO-2\n+ 分片梯度", "ZeRO-3\n+ 分片参数（FSDP）")
# (legend label, StageMemory field, colour), bottom of the stack first
COMPONENTS = (
    ("参数（BF16）", "params", "#4C72B0"),
    ("梯度（BF16）", "grads", "#DD8452"),
    ("优化器状态（FP32 主权重 + m + v）", "optimizer", "#55A868"),
)


@dataclass(frozen=True)
class StageMemory:
    """Bytes per GPU that one ZeRO stage keeps resident, by component, plus the solution's own total."""

    stage: int
    params: float
    grads: float
    optimizer: float
    total: float


def _full_replicas(memory_fn: MemoryFn, num_params: float) -> tuple[float, float]:
    """Bytes of one full copy of parameters and of gradients, isolated by what ZeRO-2 and ZeRO-3 start sharding.

    With k=0 the optimizer term vanishes. Going ZeRO-1 -> ZeRO-2 only shards gradients, so the drop is
    grads * (1 - 1/N); ZeRO-2 -> ZeRO-3 only shards parameters. Any N > 1 reveals them; N = 2 is used.
    """
    probe = 2
    no_opt = {stage: memory_fn(num_params, probe, stage, k=0) for stage in (1, 2, 3)}
    unshard = probe / (probe - 1)
    return (no_opt[2] - no_opt[3]) * unshard, (no_opt[1] - no_opt[2]) * unshard


def _check_sum(memory_fn: MemoryFn, entry: StageMemory, dp: int) -> None:
    """Refuse to plot a split whose parts do not add up to the solution's total for that stage."""
    parts = entry.params + entry.grads + entry.optimizer
    if math.isclose(parts, entry.total, rel_tol=1e-9):
        return
    code = getattr(memory_fn, "__code__", None)
    where = Location(Path(code.co_filename), code.co_firstlineno) if code else None
    raise CourseError(
        f"zero_memory_per_gpu(stage={entry.stage}, dp={dp}) returns {entry.total:.6g} bytes, but parameters "
        f"{entry.params:.6g} + gradients {entry.grads:.6g} + optimizer states {entry.optimizer:.6g} = {parts:.6g}; "
        f"ZeRO-{entry.stage} should shard {SHARDED_BY_STAGE[entry.stage]} across the {dp} ranks",
        where,
    )


def zero_memory_components(memory_fn: MemoryFn, num_params: float, dp: int) -> tuple[StageMemory, ...]:
    """Split each stage's per-GPU bytes by component using only the solution's zero_memory_per_gpu."""
    full_params, full_grads = _full_replicas(memory_fn, num_params)
    stages = []
    for stage in STAGES:
        total = memory_fn(num_params, dp, stage, k=ADAM_K)
        entry = StageMemory(
            stage=stage,
            params=full_params / dp if stage >= PARAMS_SHARDED_FROM else full_params,
            grads=full_grads / dp if stage >= GRADS_SHARDED_FROM else full_grads,
            optimizer=total - memory_fn(num_params, dp, stage, k=0),
            total=total,
        )
        _check_sum(memory_fn, entry, dp)
        stages.append(entry)
    return tuple(stages)


def _gb(value: float) -> str:
    """Format GB for a label: 112, 38.5, 26.25, 1.75 (no banker's rounding of 26.25 to 26.2)."""
    return f"{value:.4g}"


def _draw_bars(ax, stages: tuple[StageMemory, ...]) -> None:
    """Stack the three components per stage and write each segment's and each bar's size."""
    xs = range(len(stages))
    bottoms = [0.0] * len(stages)
    tallest = max(entry.total for entry in stages) / GB
    for label, field, colour in COMPONENTS:
        heights = [getattr(entry, field) / GB for entry in stages]
        ax.bar(xs, heights, bottom=bottoms, width=0.62, color=colour, edgecolor="white", label=label)
        for x, bottom, height in zip(xs, bottoms, heights):
            if height > 0.06 * tallest:
                ax.text(x, bottom + height / 2, _gb(height), ha="center", va="center", color="white", fontsize=10)
        bottoms = [bottom + height for bottom, height in zip(bottoms, heights)]
    for x, entry in zip(xs, stages):
        ax.annotate(
            f"{_gb(entry.total / GB)} GB",
            (x, entry.total / GB),
            xytext=(0, 4),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=12,
            fontweight="bold",
        )


def zero_memory_figure(stages: tuple[StageMemory, ...], *, num_params: float, dp: int, font: str) -> Figure:
    """Lay out 图 5-3 on an Agg canvas (no pyplot, so no global figure state)."""
    with matplotlib.rc_context({"font.family": [font], "mathtext.fontset": "dejavusans"}):
        fig = agg_figure(figsize=(8, 5.2), dpi=150, layout="constrained")
        ax = fig.add_subplot()
        _draw_bars(ax, stages)
        ax.set_xticks(range(len(stages)), STAGE_LABELS[: len(stages)], fontsize=11)
        ax.set_ylabel("显存（GB）", fontsize=12)
        ax.set_ylim(0, max(entry.total for entry in stages) / GB * 1.12)
        ax.set_title(f"ZeRO 各阶段单卡静态显存（{num_params / 1e9:g}B 模型，$N_d$ = {dp}）", fontsize=14)
        ax.spines[["top", "right"]].set_visible(False)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles[::-1], labels[::-1], frameon=False, fontsize=11)
        fig.supxlabel(
            f"BF16 混合精度 + AdamW（k = {ADAM_K}），不含 FP32 梯度累积与激活；1 GB = $10^9$ 字节",
            fontsize=9,
            color="#555555",
        )
    return fig


def draw_zero_memory(out_path: Path, memory_fn: MemoryFn, *, num_params: float = 7e9, dp: int = 8) -> Path:
    """Draw 图 5-3 to out_path (PNG) from the reference solution's memory formula MEMORY_FN."""
    stages = zero_memory_components(memory_fn, num_params, dp)
    fig = zero_memory_figure(stages, num_params=num_params, dp=dp, font=find_cjk_font())
    return write_atomic(Path(out_path), render_png(fig))
