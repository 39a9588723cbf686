"""图 5-3: per-GPU static memory of ZeRO-0..3, split into parameters / gradients / optimizer states; and the
lesson's worked example of a 70B model on 24 GiB cards (the FSDP unit bound 8Ψ_u, static state, traffic).

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

from .fsdp_practice import (
    FP32_BYTES,
    LLAMA2_70B,
    PCIE4_X16,
    DecoderShape,
    checkpoint_bytes,
    fixed,
    gb,
    unit_transient_bytes,
    zero3_traffic_bytes,
)

MemoryFn = Callable[..., float]

GB = 1e9  # the lesson converts bytes to GB with 10^9
GIB = 2**30  # a card's memory is sold in GiB: a "24 GB" card holds 24 GiB
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

STAGE_LABELS = ("ZeRO-0\n朴素 DP", "ZeRO-1\n分片优化器状态", "ZeRO-2\n+ 分片梯度", "ZeRO-3\n+ 分片参数（FSDP 全分片）")
# (legend label, StageMemory field, colour), bottom of the stack first
COMPONENTS = (
    ("参数（BF16）", "params", "#4C72B0"),
    ("梯度（BF16）", "grads", "#DD8452"),
    ("优化器状态（FP32 master 权重 + m + v）", "optimizer", "#55A868"),
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


# The worked example of 具体演示与数值推演: a 70B model, ZeRO-3 on N_d = 64 cards of 24 GiB.
BF16_BYTES = 2


@dataclass(frozen=True)
class CardExample:
    """Every number of the 70B-on-24-GiB example, in bytes (traffic also in values), computed from the formulas."""

    psi: float
    dp: int
    seq: int
    psi_u: int
    static: float
    unit_peak: float
    unit_peak_fp32: float
    card: float
    checkpoints: float
    traffic_values: float
    traffic_bf16: float
    traffic_fp32_grads: float

    @property
    def total(self) -> float:
        """Static state plus the transient unit peak."""
        return self.static + self.unit_peak

    @property
    def left(self) -> float:
        """What the card has left for activations, the CUDA context, communication buffers and fragmentation."""
        return self.card - self.total

    @property
    def fits(self) -> bool:
        """Static state, unit peak and the least checkpoints fit on the card, on paper."""
        return self.total + self.checkpoints <= self.card


def fewest_cards_doubling(ex: CardExample) -> CardExample:
    """The example at the first N_d, doubling from its own, where it fits on paper (the static state shrinks with
    N_d; the unit peak and the checkpoints do not)."""
    while not ex.fits:
        ex = card_example(psi=ex.psi, dp=2 * ex.dp, card_gib=round(ex.card / GIB), seq=ex.seq)
    return ex


def card_example(
    psi: float = 70e9, dp: int = 64, card_gib: int = 24, seq: int = 4096, shape: DecoderShape = LLAMA2_70B
) -> CardExample:
    """The lesson's example: a nominal 70B model with Llama-2-70B's layer shapes, ZeRO-3, one FSDP unit per layer."""
    psi_u = shape.layer_params()
    return CardExample(
        psi=psi,
        dp=dp,
        seq=seq,
        psi_u=psi_u,
        static=(BF16_BYTES + BF16_BYTES + ADAM_K) * psi / dp,
        unit_peak=unit_transient_bytes(psi_u),
        unit_peak_fp32=unit_transient_bytes(psi_u, FP32_BYTES),
        card=card_gib * GIB,
        checkpoints=checkpoint_bytes(shape, batch=1, seq=seq),
        traffic_values=3 * (dp - 1) / dp * psi,
        traffic_bf16=zero3_traffic_bytes(psi, dp),
        traffic_fp32_grads=zero3_traffic_bytes(psi, dp, FP32_BYTES),
    )


def _sci(x: float) -> str:
    """A large count in TeX scientific notation, three significant digits: $2.07\\times 10^{11}$."""
    mantissa, exponent = f"{x:.2e}".split("e")
    return f"${mantissa}\\times 10^{{{int(exponent)}}}$"


def _both(nbytes: float) -> str:
    """Bytes as GB and GiB, so a comparison with a card never mixes the two."""
    return f"{nbytes / GB:.2f} GB（{nbytes / GIB:.2f} GiB）"


def card_example_markdown(ex: CardExample | None = None) -> str:
    """The example as the page prints it (Markdown): a table of the parts and the verdict, every number computed."""
    ex = ex or card_example()
    shape = LLAMA2_70B
    more = fewest_cards_doubling(ex)
    rows = [
        (
            "静态状态（ZeRO-3）",
            f"$16\\Psi/N_d$，$\\Psi = {ex.psi / 1e9:g}\\times 10^9$（名义参数量），$N_d = {ex.dp}$",
            _both(ex.static),
        ),
        ("单元临时峰值", f"$8\\Psi_u$，每个解码层一个 FSDP 单元，$\\Psi_u$ = {ex.psi_u:,}", _both(ex.unit_peak)),
        ("合计", "静态状态 + 单元峰值", _both(ex.total)),
        ("卡的显存", f"“24 GB”的卡（如 RTX 4090）实为 {ex.card / GIB:g} GiB", _both(ex.card)),
        ("剩余", "激活、CUDA 上下文、通信缓冲与分配器碎片都要放在这里", _both(ex.left)),
        (
            "激活检查点（最少）",
            f"每层只存 BF16 输入：{shape.layers} × $s$ × $h$ × 2 字节，$s = {ex.seq}$、每卡 1 条序列",
            _both(ex.checkpoints),
        ),
    ]
    table = ["| 项 | 怎么算 | 大小 |", "|:---|:---|---:|"] + [f"| {a} | {b} | {c} |" for a, b, c in rows]
    verdict = "放得下" if ex.fits else "放不下"
    text = [
        f"以 Llama-2-70B 的形状为例（{shape.layers} 层，$h = "
        f"{shape.hidden}$，FFN {shape.ffn}，{shape.heads} 个注意力头、"
        f"{shape.kv_heads} 个 KV 头，词表 {shape.vocab}；"
        "[Llama 2 论文](https://arxiv.org/abs/2307.09288)与随模型发布的 `config.json`），"
        f"ZeRO-3、BF16 + AdamW（$k = {ADAM_K}$），逐项计算（1 GB = $10^9$ 字节，1 GiB = $2^{{30}}$ 字节）：",
        "",
        *table,
        "",
        f"**结论：{verdict}。** 静态状态与单元峰值合计 {_both(ex.total)}，24 GiB 的卡只剩 {_both(ex.left)}；"
        f"即使每层只保存输入（完整的激活重计算），$s = {ex.seq}$ 时 "
        f"{shape.layers} 层的检查点就要 {_both(ex.checkpoints)}，"
        f"是剩余空间的 {ex.checkpoints / ex.left:.1f} 倍。这还没算重计算某一层时的完整激活、输入嵌入与输出层"
        f"（各 {shape.vocab} × {shape.hidden} 个参数）所在的单元，以及梯度按 FP32 归约时更大的单元峰值"
        f"（至多 $12\\Psi_u$ = {_both(ex.unit_peak_fp32)}）。"
        "加卡只能压低静态部分（$16\\Psi/N_d$），$8\\Psi_u$ 与激活不随 $N_d$ 下降：按同样的算法，"
        f"$N_d = {more.dp}$ 时静态状态、单元峰值与检查点合计 {_both(more.total + more.checkpoints)}，"
        f"卡上还剩 {_both(more.card - more.total - more.checkpoints)}给重计算时一个块的激活、CUDA 上下文与通信缓冲，"
        "纸面上放得下，但每张卡每步要收发的数值几乎不变（见下）。卡更少时，要在这样的卡上训练 70B，"
        "还需要把状态卸载（offload）到 CPU 内存，或用张量并行把单元切小、把激活分摊到多张卡上。",
        "",
        f"装得下也不等于跑得动：每步每卡收发 $3\\frac{{N_d-1}}{{N_d}}\\Psi$ = {_sci(ex.traffic_values)} 个数值，"
        f"集合通信全用 BF16 时为 {gb(ex.traffic_bf16)} GB，梯度按 FP32 归约时 reduce-scatter 那一份翻倍，共 "
        f"{gb(ex.traffic_fp32_grads)} GB。RTX 4090 没有 NVLink，卡间走 PCIe，NVIDIA 的驱动也不支持它的卡间 P2P 直传"
        f"（数据要经过主机内存）：即使按 PCIe 4.0 x16 单向理论带宽约 {gb(PCIE4_X16)} GB/s 计，"
        f"仅 BF16 的通信每步也至少要约 {fixed(ex.traffic_bf16 / PCIE4_X16, 0)} s，跨节点更慢。",
    ]
    return "\n".join(text) + "\n"
