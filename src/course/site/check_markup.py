"""Fail the build when a page or notebook shows Markdown syntax that should have been converted.

A fenced div whose attributes pandoc cannot parse (e.g. `title="a \\"b\\" c"`) is not an error to pandoc: it
silently becomes a paragraph starting with `:::`, and a Quarto shortcode the build did not expand stays as
`{{< … >}}`. Readers then see the raw syntax. Code blocks are exempt: there such text is shown on purpose.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from course.errors import CourseError, Location

LEFTOVER = re.compile(r"^\s*:::|\{\{<|>\}\}")
SKIPPED_TAGS = {"pre", "code", "script", "style", "textarea"}
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


class _VisibleText(HTMLParser):
    """Text a reader sees, line by line, without code, scripts and styles."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.skipping = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in SKIPPED_TAGS:
            self.skipping += 1
        elif tag in ("p", "div", "li", "br", "h1", "h2", "h3", "h4", "td", "th", "summary"):
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in SKIPPED_TAGS and self.skipping:
            self.skipping -= 1

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def leftover_in_html(page: str) -> list[str]:
    """Lines of a rendered page's visible text that still carry fenced-div or shortcode syntax."""
    parser = _VisibleText()
    parser.feed(page)
    return [line.strip() for line in "".join(parser.parts).splitlines() if LEFTOVER.search(line)]


def leftover_in_markdown(text: str) -> list[str]:
    """Lines of a notebook's markdown, outside fenced code, that still carry fenced-div or shortcode syntax."""
    found, fence = [], None
    for line in text.splitlines():
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None and LEFTOVER.search(line):
            found.append(line.strip())
    return found


def _comparable(text: str) -> str:
    """TEXT without quotes and backslashes, which pandoc turns into typographic quotes or drops."""
    return re.sub(r"[\"'“”‘’\\\s]", "", text)


def check_markup(lines: list[str], *, source: Path, what: str) -> None:
    """Raise naming the lesson line that produced the first leftover, so the author can fix the attribute."""
    if not lines:
        return
    first = lines[0]
    probe = _comparable(first)
    text = source.read_text("utf-8").splitlines()
    line = next((n for n, src in enumerate(text, start=1) if probe and probe in _comparable(src)), None)
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    raise CourseError(
        f"{what} shows unconverted markup {first[:80]!r}{more}: expected a fenced div with valid "
        f'attributes (use “ ” inside a quoted title, not \\") or an expanded shortcode',
        Location(source, line),
    )
