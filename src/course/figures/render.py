"""Drawing a lesson's figure with matplotlib the course's way: Chinese labels, no global state, stable bytes.

A figure is a matplotlib Figure on its own Agg canvas (never pyplot, whose global figure list would leak between
figures and into notebooks), labelled in a Simplified-Chinese font, and rendered to PNG without matplotlib's
version stamp, so the same inputs give the same bytes and a rebuild changes nothing. A glyph the font cannot
draw is an error, not a tofu box in the lesson.
"""

from __future__ import annotations

import io
import warnings

import matplotlib
from matplotlib import font_manager
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from course.errors import CourseError, ToolMissing

CJK_FONTS = ("Noto Sans CJK SC", "Source Han Sans SC")
MISSING_GLYPH = r"Glyph \d+ .* missing from font"  # matplotlib's warning, made an error


def find_cjk_font() -> str:
    """Name a Simplified-Chinese font matplotlib knows, or say how to install one."""
    known = {entry.name for entry in font_manager.fontManager.ttflist}
    for name in CJK_FONTS:
        if name in known:
            return name
    raise ToolMissing(
        f"no Chinese font for figure labels (looked for {', '.join(CJK_FONTS)}): "
        f"apt-get install fonts-noto-cjk, then remove matplotlib's font cache in {matplotlib.get_cachedir()}"
    )


def agg_figure(**kwargs) -> Figure:
    """A Figure (Figure's own arguments) on its own Agg canvas: drawable and savable without pyplot."""
    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)
    return fig


def render_png(fig: Figure) -> bytes:
    """Render to PNG bytes, failing on any glyph the font lacks and omitting the version stamp for stable bytes."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=MISSING_GLYPH, category=UserWarning)
        try:
            fig.savefig(buffer, format="png", metadata={"Software": None})
        except UserWarning as exc:
            raise CourseError(f"figure text has a glyph its font cannot draw: {exc}") from exc
    return buffer.getvalue()
