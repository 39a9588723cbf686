"""The formulas of a site's pages typeset at build time (MathJax in node: course/site/typeset-math.js), so that a page
loads no MathJax and typesets nothing in the reader's browser. Both renderers write a formula as MathJax's input,
`<span class="math inline">\\(TeX\\)</span>` (or `math display`, `\\[…\\]`); each keeps its span and holds MathJax's
SVG with its MathML for screen readers (the TeX kept there as the annotation), the glyphs a page's formulas share lie
once after its <body>, MathJax's styles in its <head>, and any script tag loading MathJax is dropped (Quarto's
template writes one). What MathJax made of a page's formulas is kept in the build cache, one file per page, so that a
page rendered again with the same formulas (an edit of its text, a Quarto render after `course build`, a copy of the
project) is typeset without starting node."""

from __future__ import annotations

import hashlib
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


def typeset_pages(
    pages: list[Path], *, site_files: Path, mathjax: Path, sources: dict[Path, Path], kept: dict[Path, Path]
) -> list[Path]:
    """Typeset every formula of PAGES in place (one node run for those whose formulas KEPT, page -> its cache file,
    does not hold already); the pages changed. A formula that is not TeX MathJax reads is an error naming the page,
    its source (SOURCES: page -> lesson) and the formula."""
    texts = {page: page.read_text("utf-8") for page in pages}
    found = {page: FORMULA.findall(text) for page, text in texts.items()}
    todo = [page for page in pages if found[page] or MATHJAX_SCRIPT.search(texts[page])]
    request = {page: [[html.unescape(tex), kind == "display"] for kind, tex in found[page]] for page in todo}
    key = typesetter_key(site_files, mathjax)
    keys = {page: hashlib.sha256(json.dumps([key, request[page]]).encode()).hexdigest() for page in todo}
    typeset = {page: was for page in todo if (was := _kept(kept[page], keys[page]))}
    if missing := [page for page in todo if page not in typeset]:
        for page, made in zip(missing, _run_mathjax(missing, request, site_files, mathjax, sources), strict=True):
            write_atomic(kept[page], json.dumps({"key": keys[page], **made}, ensure_ascii=False))
            typeset[page] = made
    for page in todo:
        shown = [with_tex(drawn, tex) for drawn, (tex, _) in zip(typeset[page]["formulas"], request[page], strict=True)]
        write_atomic(page, typeset_page(texts[page], shown, typeset[page]["glyphs"], typeset[page]["styles"]))
    return todo


def typesetter_key(site_files: Path, mathjax: Path) -> str:
    """What MathJax makes of a formula depends on: the script that drives it and MathJax's version."""
    version = json.loads((mathjax / "package.json").read_text("utf-8"))["version"]
    return hashlib.sha256((site_files / SCRIPT).read_bytes() + version.encode()).hexdigest()


def _kept(path: Path, key: str) -> dict | None:
    """The page's typeset formulas from the build cache, if they were made for the same formulas and typesetter."""
    try:
        was = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return was if was.get("key") == key else None


def _run_mathjax(
    pages: list[Path], request: dict, site_files: Path, mathjax: Path, sources: dict[Path, Path]
) -> list[dict]:
    """MathJax in node over PAGES' formulas: per page {formulas, glyphs, styles}, or the first formula it can't read
    as an error."""
    asked = [request[page] for page in pages]
    result = json.loads(
        run_node(site_files / SCRIPT, [str(mathjax)], json.dumps(asked, ensure_ascii=False), what="the formulas")
    )
    if errors := result.get("errors"):
        page_no, formula_no, message = errors[0]
        page = pages[page_no]
        raise CourseError(
            f"{page.name}: the formula {asked[page_no][formula_no][0]} is not TeX that MathJax reads: {message}",
            Location(sources.get(page, page)),
        )
    return [{**made, "styles": result["styles"]} for made in result["pages"]]


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
