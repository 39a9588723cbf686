"""The formulas of a site's pages typeset at build time (MathJax in node: course/site/typeset-math.js), so that a page
loads no MathJax and typesets nothing in the reader's browser. Both renderers write a formula as MathJax's input,
`<span class="math inline">\\(TeX\\)</span>` (or `math display`, `\\[…\\]`); each keeps its span and holds MathJax's
SVG with its MathML for screen readers (the TeX kept there as the annotation), the glyphs a page's formulas share lie
once after its <body>, MathJax's styles in its <head>, and any script tag loading MathJax is dropped (Quarto's
template writes one)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from course.errors import CourseError, Location
from course.fileio import write_atomic
from course.tools.node import run_node

SCRIPT = "typeset-math.js"
FORMULA = re.compile(r'<span class="math (inline|display)">\\[(\[](.*?)\\[)\]]</span>', re.S)
MATHJAX_SCRIPT = re.compile(r'[ \t]*<script\b[^>]*\bsrc="[^"]*mathjax[@/][^"]*"[^>]*>\s*</script>\n?')
BODY = re.compile(r"<body\b[^>]*>")
MATHML = re.compile(r"(<math\b[^>]*>)(.*)(</math>)", re.S)
STYLE_ID = "MJX-SVG-styles"


def typeset_pages(pages: list[Path], *, site_files: Path, mathjax: Path, sources: dict[Path, Path]) -> list[Path]:
    """Typeset every formula of PAGES in place (one node run for them all); the pages changed. A formula that is not
    TeX MathJax reads is an error naming the page, its source (SOURCES: page -> lesson) and the formula."""
    texts = {page: page.read_text("utf-8") for page in pages}
    found = {page: FORMULA.findall(text) for page, text in texts.items()}
    todo = [page for page in pages if found[page] or MATHJAX_SCRIPT.search(texts[page])]
    if not todo:
        return []
    request = [[[html.unescape(tex), kind == "display"] for kind, tex in found[page]] for page in todo]
    result = json.loads(
        run_node(site_files / SCRIPT, [str(mathjax)], json.dumps(request, ensure_ascii=False), what="the formulas")
    )
    if errors := result.get("errors"):
        page_no, formula_no, message = errors[0]
        page = todo[page_no]
        raise CourseError(
            f"{page.name}: the formula {request[page_no][formula_no][0]} is not TeX that MathJax reads: {message}",
            Location(sources.get(page, page)),
        )
    for page, formulas, typeset in zip(todo, request, result["pages"], strict=True):
        shown = [with_tex(drawn, tex) for drawn, (tex, _) in zip(typeset["formulas"], formulas, strict=True)]
        write_atomic(page, typeset_page(texts[page], shown, typeset["glyphs"], result["styles"]))
    return todo


def with_tex(formula: str, tex: str) -> str:
    """FORMULA's MathML with its TeX as the annotation (as MathML carries a formula's source), for those who read
    the page's formulas as written: copying tools, the course's tests."""
    return MATHML.sub(
        lambda m: (
            f'{m.group(1)}<semantics><mrow>{m.group(2)}</mrow><annotation encoding="application/x-tex">'
            f"{html.escape(tex, quote=False)}</annotation></semantics>{m.group(3)}"
        ),
        formula,
        count=1,
    )


def typeset_page(text: str, formulas: list[str], glyphs: str, styles: str) -> str:
    """TEXT with its formulas (in order) replaced by FORMULAS, its MathJax script gone, and, where it has formulas,
    the shared GLYPHS after <body> and MathJax's STYLES in <head>."""
    shown = iter(formulas)
    text = FORMULA.sub(lambda m: f'<span class="math {m.group(1)}">{next(shown)}</span>', text)
    text = MATHJAX_SCRIPT.sub("", text)
    if not formulas:
        return text
    cache = f'<svg style="display: none" id="MJX-SVG-global-cache" xmlns="http://www.w3.org/2000/svg">{glyphs}</svg>'
    text = BODY.sub(lambda m: m.group(0) + "\n" + cache, text, count=1)
    return text.replace("</head>", f'<style id="{STYLE_ID}">\n{styles}</style>\n</head>', 1)
