"""图 5-4: one ZeRO-3 (FSDP) training step, layer by layer, as a hand-built SVG.

Forward: all-gather a layer's parameters, compute, free them. Backward: all-gather again, compute,
reduce-scatter the gradients, free. Then each rank updates its own 1/N_d shard locally. The three
communication columns are labelled with their volume (≈ Ψ each, 3Ψ in total), matching section 3.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from course.fileio import write_atomic

SVG_NS = "http://www.w3.org/2000/svg"
FONT_FAMILY = "'Noto Sans CJK SC', 'Source Han Sans SC', 'Microsoft YaHei', sans-serif"
ARROW_ID = "zero3-comm-flow-arrow"

WIDTH = 1000
LABEL_X = 24  # left edge of the row labels (第 n 层)
COL_X0, COL_W, COL_GAP = 130, 190, 30  # four step columns
BOX_H, ROW_H = 40, 54
TEXT_SIZE = 17
LEGEND_PER_ROW, LEGEND_COL_W, LEGEND_ROW_H = 3, 290, 30
SUB_SHIFT = 5  # px the subscript d of N_d drops


@dataclass(frozen=True)
class Kind:
    """How one kind of step is drawn and named in the legend."""

    legend: str
    fill: str
    stroke: str
    dashed: bool = False


ALL_GATHER = Kind("通信：all-gather 参数", "#dbeafe", "#2563eb")
REDUCE_SCATTER = Kind("通信：reduce-scatter 梯度", "#ffedd5", "#ea580c")
COMPUTE = Kind("计算", "#dcfce7", "#16a34a")
FREE = Kind("释放全量参数（只留 1/N_d 分片）", "#f3f4f6", "#6b7280", dashed=True)
LOCAL_UPDATE = Kind("本地更新（无通信）", "#ede9fe", "#7c3aed")

# (column header or None, box text, kind) for each step of one layer
FORWARD_STEPS = (
    ("前向 all-gather 参数：合计 ≈ Ψ", "all-gather 参数", ALL_GATHER),
    (None, "前向计算", COMPUTE),
    (None, "释放", FREE),
)
BACKWARD_STEPS = (
    ("反向 all-gather 参数：合计 ≈ Ψ", "all-gather 参数", ALL_GATHER),
    (None, "反向计算", COMPUTE),
    (None, "释放", FREE),  # FSDP2 reshards the layer's parameters before it reduce-scatters their gradients
    ("reduce-scatter 梯度：合计 ≈ Ψ", "reduce-scatter 梯度", REDUCE_SCATTER),
)


def _column_x(index: int) -> int:
    """Left edge of a step column."""
    return COL_X0 + index * (COL_W + COL_GAP)


def _text(parent: ET.Element, x: float, y: float, content: str, **attrs: str) -> ET.Element:
    """Add a text element (body style by default), typesetting every N_d with a subscript d."""
    attrs = {"font-size": str(TEXT_SIZE), "text-anchor": "middle", **attrs}
    element = ET.SubElement(parent, "text", {"x": f"{x:g}", "y": f"{y:g}", **attrs})
    head, *rest = content.split("N_d")
    element.text = head + ("N" if rest else "")
    for index, part in enumerate(rest):
        sub = ET.SubElement(element, "tspan", {"dy": str(SUB_SHIFT), "font-size": "75%"})
        sub.text = "d"
        back = ET.SubElement(element, "tspan", {"dy": str(-SUB_SHIFT)})
        back.text = part + ("N" if index < len(rest) - 1 else "")
    return element


def _box(parent: ET.Element, x: float, y: float, w: float, h: float, kind: Kind, label: str) -> None:
    """Draw one step: a rounded box in its kind's colours with centred text."""
    rect = {
        "x": f"{x:g}",
        "y": f"{y:g}",
        "width": f"{w:g}",
        "height": f"{h:g}",
        "rx": "6",
        "fill": kind.fill,
        "stroke": kind.stroke,
        "stroke-width": "2",
    }
    if kind.dashed:
        rect["stroke-dasharray"] = "6 4"
    ET.SubElement(parent, "rect", rect)
    _text(parent, x + w / 2, y + h / 2 + TEXT_SIZE * 0.35, label)


def _arrow(parent: ET.Element, x1: float, y1: float, x2: float, y2: float) -> None:
    """Draw a flow arrow between two steps."""
    ET.SubElement(
        parent,
        "line",
        {
            "x1": f"{x1:g}",
            "y1": f"{y1:g}",
            "x2": f"{x2:g}",
            "y2": f"{y2:g}",
            "stroke": "#374151",
            "stroke-width": "2",
            "marker-end": f"url(#{ARROW_ID})",
        },
    )


def _phase(parent: ET.Element, top: float, title: str, steps: tuple, layer_order: list[int]) -> float:
    """Draw one phase (heading, column headers, one row per layer in execution order); return its bottom."""
    _text(parent, LABEL_X, top + 22, title, **{"text-anchor": "start", "font-size": "20", "font-weight": "bold"})
    header_y = top + 52
    for index, (header, _, kind) in enumerate(steps):
        if header:  # centred on its column; the last column's ends at the column's right edge, inside the figure
            last = index == len(steps) - 1
            x, anchor = _column_x(index) + (COL_W if last else COL_W / 2), "end" if last else "middle"
            _text(parent, x, header_y, header, fill=kind.stroke, **{"font-weight": "bold", "text-anchor": anchor})
    row_top = header_y + 14
    for row, layer in enumerate(layer_order):
        y = row_top + row * ROW_H
        _text(parent, LABEL_X, y + BOX_H / 2 + TEXT_SIZE * 0.35, f"第 {layer} 层", **{"text-anchor": "start"})
        for index, (_, label, kind) in enumerate(steps):
            _box(parent, _column_x(index), y, COL_W, BOX_H, kind, label)
            if index:
                _arrow(parent, _column_x(index) - COL_GAP + 2, y + BOX_H / 2, _column_x(index) - 4, y + BOX_H / 2)
    return row_top + len(layer_order) * ROW_H


def _optimizer_and_total(parent: ET.Element, top: float, dp: int) -> float:
    """Draw the local optimizer step and the 3Ψ communication total; return the bottom."""
    _text(
        parent, LABEL_X, top + 22, "③ 优化器更新", **{"text-anchor": "start", "font-size": "20", "font-weight": "bold"}
    )
    box_top = top + 38
    right = _column_x(3) + COL_W
    _box(
        parent,
        COL_X0,
        box_top,
        right - COL_X0,
        BOX_H,
        LOCAL_UPDATE,
        f"本地优化器更新（1/N_d 分片）：每卡只更新自己的 1/{dp} FP32 master 权重与 Adam 状态",
    )
    total_top = box_top + BOX_H + 22
    ET.SubElement(
        parent,
        "rect",
        {
            "x": str(COL_X0),
            "y": f"{total_top:g}",
            "width": f"{right - COL_X0:g}",
            "height": "62",
            "rx": "6",
            "fill": "#ffffff",
            "stroke": "#111827",
            "stroke-width": "2",
        },
    )
    _text(
        parent,
        (COL_X0 + right) / 2,
        total_top + 26,
        "每步通信：前向 all-gather Ψ + 反向 all-gather Ψ + reduce-scatter Ψ = 总计 3Ψ",
        **{"font-size": "19", "font-weight": "bold"},
    )
    _text(
        parent,
        (COL_X0 + right) / 2,
        total_top + 50,
        f"Ψ 为参数个数；每项精确值为 (N_d − 1)Ψ / N_d = {(dp - 1) / dp:.3g}Ψ（N_d = {dp}）",
        fill="#4b5563",
        **{"font-size": "16"},
    )
    return total_top + 62


def _legend(parent: ET.Element, top: float) -> float:
    """Draw the colour key, three entries a row; return the bottom."""
    kinds = (ALL_GATHER, REDUCE_SCATTER, COMPUTE, FREE, LOCAL_UPDATE)
    for index, kind in enumerate(kinds):
        x = COL_X0 + (index % LEGEND_PER_ROW) * LEGEND_COL_W
        y = top + (index // LEGEND_PER_ROW) * LEGEND_ROW_H
        rect = {
            "x": f"{x:g}",
            "y": f"{y:g}",
            "width": "26",
            "height": "18",
            "rx": "3",
            "fill": kind.fill,
            "stroke": kind.stroke,
            "stroke-width": "2",
        }
        if kind.dashed:
            rect["stroke-dasharray"] = "4 3"
        ET.SubElement(parent, "rect", rect)
        _text(parent, x + 34, y + 15, kind.legend, **{"text-anchor": "start", "font-size": "16"})
    rows = -(-len(kinds) // LEGEND_PER_ROW)
    return top + rows * LEGEND_ROW_H


def _indent_keeping_text(svg: ET.Element) -> None:
    """Pretty-print the file for readable diffs without adding spaces inside text runs (around N_d tspans)."""
    ET.indent(svg)
    for text in svg.iter("text"):
        for tspan in text:
            tspan.tail = None


def zero3_comm_flow_svg(*, layers: int = 3, dp: int = 4) -> str:
    """Build the SVG document text; the same arguments always give the same text."""
    if layers < 1 or dp < 2:
        raise ValueError(
            f"zero3_comm_flow_svg needs layers >= 1 and dp >= 2 (ZeRO-3 shards over >= 2 ranks), "
            f"got layers={layers}, dp={dp}"
        )
    svg = ET.Element("svg", {"xmlns": SVG_NS, "font-family": FONT_FAMILY, "fill": "#111827"})
    ET.SubElement(svg, "title").text = "ZeRO-3（FSDP）一个训练步的逐层通信流程"
    ET.SubElement(svg, "desc").text = (
        "前向逐层 all-gather 参数、计算、释放；反向逐层再次 all-gather、计算、释放全量参数、reduce-scatter 梯度；"
        "最后各卡本地更新自己的 1/N_d 分片。三部分通信各约 Ψ，总计 3Ψ。"
    )
    marker = ET.SubElement(
        ET.SubElement(svg, "defs"),
        "marker",
        {
            "id": ARROW_ID,
            "viewBox": "0 0 10 10",
            "refX": "9",
            "refY": "5",
            "markerWidth": "7",
            "markerHeight": "7",
            "orient": "auto",
        },
    )
    ET.SubElement(marker, "path", {"d": "M0,0 L10,5 L0,10 z", "fill": "#374151"})
    _text(svg, WIDTH / 2, 40, "ZeRO-3（FSDP）一个训练步的逐层通信流程", **{"font-size": "26", "font-weight": "bold"})
    _text(
        svg,
        WIDTH / 2,
        70,
        f"N_d = {dp}：每卡常驻 1/{dp} 的参数、梯度与优化器状态；用到某层时才临时拼出该层全量参数",
        fill="#4b5563",
        **{"font-size": "17"},
    )
    order = list(range(1, layers + 1))
    bottom = _phase(svg, 90, f"① 前向（第 1 层 → 第 {layers} 层）", FORWARD_STEPS, order)
    bottom = _phase(svg, bottom + 8, f"② 反向（第 {layers} 层 → 第 1 层）", BACKWARD_STEPS, order[::-1])
    bottom = _optimizer_and_total(svg, bottom + 8, dp)
    height = _legend(svg, bottom + 24) + 20
    svg.set("viewBox", f"0 0 {WIDTH} {height:g}")
    svg.set("width", str(WIDTH))
    svg.set("height", f"{height:g}")
    _indent_keeping_text(svg)
    return ET.tostring(svg, encoding="unicode", xml_declaration=True) + "\n"


def draw_zero3_comm_flow(out_path: Path, *, layers: int = 3, dp: int = 4) -> Path:
    """Write the ZeRO-3 per-layer communication flow SVG to out_path."""
    return write_atomic(Path(out_path), zero3_comm_flow_svg(layers=layers, dp=dp).encode("utf-8"))
