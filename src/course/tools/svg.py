"""SVG → PNG with resvg (PyPI `resvg-py`, the Rust renderer in a wheel), for clients that show no SVG attachment.

JupyterLab and Notebook 7 render a markdown cell's attachment only as one of their raster image types (an SVG
attachment shows as a broken image), so a notebook's SVG figures travel as PNG. Text is drawn with the system's
fonts (fonts-noto-cjk for the Chinese labels); the background is white, so dark text stays readable in a dark theme.
"""

from __future__ import annotations

from functools import lru_cache

from course.errors import CourseError, ToolMissing

ZOOM = 2  # device pixels per SVG pixel: sharp on high-density screens


def svg_to_png(svg: bytes, *, what: str) -> bytes:
    """The SVG drawn as PNG at ZOOM times its own size; an SVG resvg cannot read names WHAT."""
    try:
        return _drawn(svg)
    except (ValueError, UnicodeDecodeError) as error:
        raise CourseError(f"cannot draw {what} as PNG: {error}; expected a well-formed UTF-8 SVG") from None


@lru_cache(maxsize=16)
def _drawn(svg: bytes) -> bytes:
    """The drawing, once per SVG in a process: a lesson's figure goes into its reading notebook, its assignment and
    each variant's (the course's diagram costs resvg about 0.6 CPU-s each time)."""
    try:
        import resvg_py
    except ImportError:
        raise ToolMissing(
            "resvg-py not installed, needed to draw SVG figures as PNG for notebooks; `pip install -e .` (run `make`)"
        ) from None
    return bytes(resvg_py.svg_to_bytes(svg_string=svg.decode("utf-8"), zoom=ZOOM, background="#ffffff"))
