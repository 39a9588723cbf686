"""Drawing the course's way: a CJK font or a clear error, no pyplot state, PNG bytes that repeat, no tofu boxes."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
from matplotlib import font_manager

from course.errors import CourseError, ToolMissing
from course.figures.render import agg_figure, find_cjk_font, render_png


def _chart(font: str):
    """A small figure with a Chinese title in FONT."""
    fig = agg_figure(figsize=(2, 1.5), dpi=50)
    ax = fig.add_subplot()
    ax.bar([0, 1], [3, 5])
    ax.set_title("显存", fontfamily=font)
    return fig


def test_a_cjk_font_is_found_by_a_name_matplotlib_can_draw_chinese_with():
    font = find_cjk_font()
    path = font_manager.findfont(font_manager.FontProperties(family=font), fallback_to_default=False)
    assert ord("显") in font_manager.get_font(path).get_charmap()


def test_no_cjk_font_says_what_to_install(monkeypatch):
    monkeypatch.setattr(font_manager.fontManager, "ttflist", [])
    with pytest.raises(ToolMissing, match="apt-get install fonts-noto-cjk"):
        find_cjk_font()


def test_a_figure_is_drawn_and_saved_without_pyplot_state():
    before = plt.get_fignums()
    png = render_png(_chart(find_cjk_font()))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert plt.get_fignums() == before


def test_same_figure_same_bytes_without_the_version_stamp():
    first, second = render_png(_chart(find_cjk_font())), render_png(_chart(find_cjk_font()))
    assert first == second
    assert b"Matplotlib version" not in first


def test_a_font_without_chinese_glyphs_is_an_error_not_boxes():
    with pytest.raises(CourseError, match="glyph its font cannot draw: .*missing from font"):
        render_png(_chart("DejaVu Sans"))
