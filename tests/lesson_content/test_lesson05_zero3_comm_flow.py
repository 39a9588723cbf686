"""The ZeRO-3 communication diagram (lessons/lesson05/zero3_comm_flow.py): valid SVG, the three Ψ-labelled
communications, one row per layer."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from matplotlib import font_manager

from course.lesson.data_modules import load_data_module

ROOT = Path(__file__).resolve().parents[2]
flow = load_data_module(ROOT / "lessons" / "lesson05", "zero3_comm_flow", "lessons/lesson05/zero3_comm_flow.py")
draw_zero3_comm_flow, zero3_comm_flow_svg = flow.draw_zero3_comm_flow, flow.zero3_comm_flow_svg

NS = {"svg": "http://www.w3.org/2000/svg"}


def _texts(svg: str) -> list[str]:
    """Every text element's visible string (tspans joined)."""
    return ["".join(node.itertext()) for node in ET.fromstring(svg).iterfind(".//svg:text", NS)]


def test_document_is_svg_with_a_viewbox_and_cjk_fonts_first():
    root = ET.fromstring(zero3_comm_flow_svg())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    x, y, width, height = (float(v) for v in root.get("viewBox").split())
    assert (x, y) == (0, 0) and width > 0 and height > 0
    families = [f.strip().strip("'\"") for f in root.get("font-family").split(",")]
    assert families[0] == "Noto Sans CJK SC" and families[-1] == "sans-serif"
    assert root.find("svg:title", NS).text


def test_three_communications_are_labelled_psi_and_total_3psi():
    texts = _texts(zero3_comm_flow_svg())
    headers = [t for t in texts if "Ψ" in t and "合计" in t]
    assert len(headers) == 3
    assert any(t.startswith("前向 all-gather") for t in headers)
    assert any(t.startswith("反向 all-gather") for t in headers)
    assert any(t.startswith("reduce-scatter") for t in headers)
    assert any("总计 3Ψ" in t for t in texts)


@pytest.mark.parametrize("layers", [1, 3, 5])
def test_each_layer_gathers_twice_and_reduce_scatters_once(layers):
    texts = _texts(zero3_comm_flow_svg(layers=layers))
    assert texts.count("all-gather 参数") == 2 * layers
    assert texts.count("reduce-scatter 梯度") == layers
    assert texts.count("前向计算") == texts.count("反向计算") == layers
    for layer in range(1, layers + 1):
        assert texts.count(f"第 {layer} 层") == 2  # once in the forward rows, once in the backward rows


def test_backward_visits_layers_in_reverse():
    texts = _texts(zero3_comm_flow_svg(layers=3))
    rows = [t for t in texts if t.startswith("第 ") and t.endswith(" 层")]
    assert rows == ["第 1 层", "第 2 层", "第 3 层", "第 3 层", "第 2 层", "第 1 层"]


def test_each_layer_frees_its_parameters_before_reduce_scattering_as_fsdp2_does():
    """FSDP2's post-backward reshards a layer's parameters, then reduce-scatters its gradients: the page's unit peak
    (two units' parameters) counts on that order."""
    texts = _texts(zero3_comm_flow_svg(layers=1))
    backward = texts[texts.index("反向计算") :]
    assert backward.index("释放") < backward.index("reduce-scatter 梯度")


def test_shard_size_follows_dp():
    texts = _texts(zero3_comm_flow_svg(dp=16))
    assert any("本地优化器更新" in t and "1/16" in t for t in texts)
    assert any(f"{15 / 16:.3g}Ψ" in t for t in texts)


def test_every_character_has_a_glyph_in_the_cjk_font():
    path = font_manager.findfont(font_manager.FontProperties(family="Noto Sans CJK SC"), fallback_to_default=False)
    charmap = font_manager.get_font(path).get_charmap()
    used = set("".join(_texts(zero3_comm_flow_svg())))
    assert sorted(ch for ch in used if ord(ch) not in charmap) == []


def test_every_text_fits_inside_the_figure():
    """Measured with the CJK font the figure names first (bold as drawn): no label runs past either edge."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    root = ET.fromstring(zero3_comm_flow_svg())
    width = float(root.get("viewBox").split()[2])
    share = {"start": 0, "middle": 0.5, "end": 1}
    for node in root.iterfind(".//svg:text", NS):
        weight = node.get("font-weight", "normal")
        font = FontProperties(family="Noto Sans CJK SC", weight=weight)
        text = "".join(node.itertext())
        extent = TextPath((0, 0), text, size=float(node.get("font-size")), prop=font).get_extents().width
        left = float(node.get("x")) - share[node.get("text-anchor", "start")] * extent
        assert 0 <= left and left + extent <= width, text


def test_same_arguments_same_bytes_and_written_atomically(tmp_path):
    out = draw_zero3_comm_flow(tmp_path / "figs" / "flow.svg")
    assert out.read_text("utf-8") == zero3_comm_flow_svg()
    assert draw_zero3_comm_flow(tmp_path / "again.svg").read_bytes() == out.read_bytes()
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["again.svg", "flow.svg"]


@pytest.mark.parametrize("kwargs", [{"layers": 0}, {"dp": 1}])
def test_impossible_shapes_are_refused(kwargs):
    with pytest.raises(ValueError, match="layers >= 1 and dp >= 2"):
        zero3_comm_flow_svg(**kwargs)


def test_the_module_names_its_figure_as_the_lesson_captions_it():
    """The lesson captions the SVG 图 5-4 (图 5-1 is the mermaid diagram); the drawing code must say the same."""
    import re

    text = (ROOT / "lessons" / "lesson05.qmd").read_text("utf-8")
    caption = re.search(r"zero3_comm_flow\.svg\)[^\n]*\n\n(图 5-\d+)：", text)
    assert caption is not None
    assert flow.__doc__.startswith(f"{caption.group(1)}:")
    assert "图 5-1" not in flow.__doc__
