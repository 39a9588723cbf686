"""Helpers for the figures lessons draw from code; the drawing itself is lesson data, beside the lesson.

`declare`: what a lesson's figures.py declares (FigureSpec, load_solution, package_file) — light, so a no-op
`course build` never imports matplotlib. `render`: drawing with matplotlib the course's way (a CJK font, a Figure
without pyplot state, PNG bytes that are the same on every run, a glyph missing from the font is an error).
"""
