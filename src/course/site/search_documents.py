"""What the site's search finds: each built page cut into its sections (the text under one heading), read from the
variant's own HTML, so the student site's index holds exactly what its pages show and never an answer."""

from __future__ import annotations

import html
import re
from dataclasses import asdict, dataclass

from bs4 import BeautifulSoup, NavigableString, Tag
from pylatexenc.latex2text import LatexNodes2Text

from course.site.lite_page import DOWNLOAD

HEADINGS = ("h1", "h2", "h3")
SKIPPED = ("script", "style", "svg", "math", "mjx-container", "nav")  # not prose: drawings, markup, navigation
# a diagram's source, which the browser draws; the in-browser block's download size, said once lite/ is built
SKIPPED_CLASSES = ("mermaid", DOWNLOAD)
SPACE = re.compile(r"\s+")
DIAGRAM_SOURCE = re.compile(
    r"^(?:flowchart|graph|sequenceDiagram|classDiagram|stateDiagram(?:-v2)?|erDiagram|gantt|pie|"
    r"journey|mindmap|timeline|gitGraph)\b.*(?:\n(?:[ \t]+.*|[ \t]*(?=\n[ \t]+\S)))*\n?",
    re.M,
)
# A formula as the page's HTML holds it before MathJax typesets it: \(…\) inline, \[…\] displayed.
DELIMITED_MATH = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)


@dataclass(frozen=True)
class SearchDocument:
    """One section of one page: where it is, what it is called and its text."""

    url: str  # also its id in the index
    page: str  # the lesson's title
    heading: str
    text: str


def page_sections(html: str, page_url: str, page_title: str) -> list[SearchDocument]:
    """The sections of one page's main text, in order; text before the first heading belongs to the page title."""
    main = BeautifulSoup(html, "html.parser").find("main")
    if main is None:
        return []
    sections: list[tuple[str, str, list[str]]] = [("", page_title, [])]
    for node in _prose(main):
        if isinstance(node, Tag):
            sections.append((node.get("id", ""), _clean(readable_math(node.get_text())), []))
        else:
            sections[-1][2].append(str(node))
    documents = []
    for anchor, heading, parts in sections:
        text, url = _clean("".join(parts)), f"{page_url}#{anchor}" if anchor else page_url
        if text or anchor:
            documents.append(SearchDocument(url=url, page=page_title, heading=heading, text=text))
    return documents


def _prose(node: Tag):
    """Headings (as tags) and text strings under NODE in document order, without the parts that are not prose;
    a formula as its reading."""
    for child in node.children:
        if isinstance(child, NavigableString):
            if type(child) is NavigableString:  # not a comment or CDATA
                yield NavigableString(readable_math(str(child)))
        elif child.name in HEADINGS:
            yield child
        elif child.name not in SKIPPED and not set(child.get("class") or ()) & set(SKIPPED_CLASSES):
            yield from _prose(child)


def without_diagram_source(text: str) -> str:
    """TEXT without the source of any mermaid diagram in it (its first line names the kind of diagram, the lines
    that follow are indented), as Quarto's search index holds it: a reader sees the drawing, not its source."""
    return DIAGRAM_SOURCE.sub("", html.unescape(text))


def readable_math(text: str) -> str:
    """TEXT with each TeX formula in it (\\(N_d\\), \\[…\\]) as a reader reads it (N_d, 4Ψ/N_d, 1×): what a search
    snippet shows."""
    return DELIMITED_MATH.sub(lambda m: _TEX.latex_to_text(m.group(1) or m.group(2)).strip(), text)


_TEX = LatexNodes2Text(math_mode="text")


def _clean(text: str) -> str:
    """Whitespace as single spaces."""
    return SPACE.sub(" ", text).strip()


def as_json_rows(documents: list[SearchDocument]) -> list[dict]:
    """The documents as the index builder reads them."""
    return [asdict(d) for d in documents]
