"""What a student sees on a page, measured in the browser the same way on the pandoc and the Quarto site: links inside
links, mermaid labels that leave their boxes or read badly on their fill, search snippets; the phone and desktop sizes
the pages are read at and axe-core's accessibility check (also of the reports and feedback pages)."""

from __future__ import annotations

import re

from tests.lesson_cases import ROOT

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
PHONE, DESKTOP = {"width": 390, "height": 844}, {"width": 1280, "height": 900}


def axe_violations(page) -> list[str]:
    """axe-core's serious and critical violations on PAGE (the library injected from node_modules, offline)."""
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:5]}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


# Every <a> with an <a> around it, as the text of the outer link (the browser splits such a link in two).
NESTED_LINKS = "() => [...document.querySelectorAll('a a')].map(a => a.parentElement.closest('a').textContent.trim())"

# Each label of each drawn diagram whose text leaves its box (1 px slack) or whose contrast with the box's fill is
# under 4.5:1 (WCAG AA), as "diagram N: label: why". Boxes: flowchart nodes and groups, sequence actors and notes.
MERMAID_PROBLEMS = """() => {
  const rgb = c => { const m = (c || '').match(/[\\d.]+/g); return m ? m.slice(0, 3).map(Number) : null; };
  const lum = c => { const v = c.map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
                     return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const inside = (t, b) => t.left >= b.left - 1 && t.right <= b.right + 1 && t.top >= b.top - 1 && t.bottom <= b.bottom + 1;
  const problems = [];
  document.querySelectorAll('.mermaid svg, svg.mermaid-js').forEach((svg, n) => {
    const pairs = [];
    svg.querySelectorAll('g.node').forEach(g => pairs.push([g.querySelector('rect, polygon, path'), g.querySelector('.nodeLabel, .label')]));
    svg.querySelectorAll('g.cluster').forEach(g => pairs.push([g.querySelector('rect'), g.querySelector('.cluster-label .nodeLabel, .cluster-label')]));
    svg.querySelectorAll('rect.actor').forEach(r => pairs.push([r, r.parentElement.querySelector('text.actor')]));
    svg.querySelectorAll('rect.note').forEach(r => pairs.push([r, r.parentElement.querySelector('text.noteText')]));
    pairs.forEach(([box, label]) => {
      if (!box || !label || !label.textContent.trim()) return;
      const name = `diagram ${n}: ${label.textContent.trim().slice(0, 30)}`;
      const text = document.createRange();  // the text itself, also where it overflows its element
      text.selectNodeContents(label.querySelector('.nodeLabel') || label);
      const lb = text.getBoundingClientRect(), bb = box.getBoundingClientRect();
      if (!inside(lb, bb)) problems.push(`${name}: text ${Math.round(lb.width)}x${Math.round(lb.height)} leaves its box`);
      const leaf = label.querySelector('span, p, tspan') || label;
      const style = getComputedStyle(leaf);
      const fg = rgb(label.tagName.toLowerCase() === 'text' || leaf.tagName.toLowerCase() === 'tspan' ? style.fill : style.color);
      const bg = rgb(getComputedStyle(box).fill);
      if (fg && bg && ratio(fg, bg) < 4.5) problems.push(`${name}: contrast ${ratio(fg, bg).toFixed(2)}`);
    });
  });
  return problems;
}"""  # noqa: E501

DIAGRAM_COUNT = "() => document.querySelectorAll('.mermaid svg, svg.mermaid-js').length"


def nested_links(page) -> list[str]:
    """The links of PAGE that hold another link."""
    return page.evaluate(NESTED_LINKS)


def mermaid_problems(page) -> list[str]:
    """What of PAGE's drawn diagrams a reader cannot read: text out of its box, or too little contrast."""
    return page.evaluate(MERMAID_PROBLEMS)


# What a search snippet shows when it holds source instead of text: TeX delimiters or commands, a diagram's edges.
SNIPPET_SOURCE = re.compile(r"\\\(|\\\)|\\\[|\\[a-zA-Z]+|-->|subgraph\b|\]\s*end\b")


# The figures' images (drawn from files and by cells), each with its link, its accessible name, its caption and
# whether its alt text is somewhere in the page's visible text other than as its caption.
FIGURES = """() => [...document.querySelectorAll('main figure img, main .img-card img, main .cell-output-display img')]
  .map(img => {
    const holder = img.closest('figure, .cell, .img-card');
    const cap = holder && holder.querySelector('figcaption, .figure-caption');
    const caption = cap ? cap.textContent.trim() : '';
    const main = document.querySelector('main').innerText.replace(/\\s+/g, ' ');
    const alt = img.alt.trim().replace(/\\s+/g, ' ');
    return {alt, caption, link: !!img.closest('a.figure-link'), href: img.closest('a') && img.closest('a').getAttribute('href'),
            shown: img.getBoundingClientRect().width, natural: img.naturalWidth,
            alt_visible: alt !== caption && alt.length > 0 && main.includes(alt)};
  })"""  # noqa: E501

# Every caption's look: text-align, colour and size of each figcaption and .figure-caption in the text.
CAPTION_STYLES = """() => [...document.querySelectorAll('main figcaption, main .figure-caption')]
  .filter(c => c.textContent.trim().startsWith('图'))
  .map(c => { const s = getComputedStyle(c.querySelector('p') || c); return [c.textContent.trim().slice(0, 6), s.textAlign, s.color, s.fontSize]; })"""  # noqa: E501


def figures(page) -> list[dict]:
    """PAGE's figure images as a reader meets them."""
    return page.evaluate(FIGURES)


def opens_full_size(page, index: int, how: str) -> bool:
    """Whether the INDEX-th figure's link opens its image at full size, by tap ("tap": a click) or keyboard
    ("key": focus and Enter), and Escape closes it again, giving the focus back to the link."""
    link = page.locator("a.figure-link").nth(index)
    link.scroll_into_view_if_needed()
    if how == "key":
        link.focus()
        page.keyboard.press("Enter")
    else:
        link.click()
    viewer = page.locator("dialog.figure-viewer[open] img")
    viewer.wait_for(timeout=5000)
    page.wait_for_function("() => document.querySelector('dialog.figure-viewer img').complete")
    full = viewer.evaluate("img => img.getBoundingClientRect().width >= img.naturalWidth - 1 && img.naturalWidth > 0")
    page.keyboard.press("Escape")
    page.locator("dialog.figure-viewer").wait_for(state="detached", timeout=5000)
    return full and link.evaluate("a => document.activeElement === a")


# Formulas as the build typeset them: the page loads no MathJax, and every glyph a formula draws is one the page
# holds (the glyphs its formulas share lie once in its global cache): the hrefs that point nowhere, and any MathJax.
UNTYPESET = """() => ({
  mathjax: typeof window.MathJax !== "undefined" || !!document.querySelector('script[src*="mathjax"]'),
  missing: [...document.querySelectorAll("mjx-container use")]
    .map((u) => u.getAttribute("xlink:href") || u.getAttribute("href"))
    .filter((ref) => !document.getElementById(ref.slice(1))),
})"""
