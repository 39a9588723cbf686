"""Turn an executed variant lesson into commonmark_x for pandoc: cells become Quarto-style .cell divs.

The shape matches what Quarto hands pandoc after execution, so the one Lua filter sees the same
structure on both paths.
"""

from __future__ import annotations

import html
import re

from course.lesson.model import Block, CodeCell, Diagram, Div, Lesson, Markdown, StaticCode
from course.site.execute_cells import Outputs

NOT_RUN_NOTE = "此单元格仅供阅读：含填空 `______`，构建时不执行；请在 notebook 中完成。"


def write_page_markdown(lesson: Lesson, outputs: Outputs) -> str:
    """The whole page body as commonmark_x text."""
    return "\n\n".join(_block(b, outputs) for b in lesson.blocks) + "\n"


def fence(text: str, info: str = "", char: str = "`") -> str:
    """A fenced block whose fence is longer than any run of the fence character inside."""
    longest = max((len(m) for m in re.findall(f"{re.escape(char)}+", text)), default=0)
    bar = char * max(3, longest + 1)
    return f"{bar}{info}\n{text}\n{bar}"


def _block(b: Block, outputs: Outputs) -> str:
    """Markdown for one block."""
    if isinstance(b, Markdown):
        return b.text
    if isinstance(b, StaticCode):
        return fence(b.text, b.info)
    if isinstance(b, Diagram):
        return fence(b.text, "{" + b.kind + "}")
    if isinstance(b, Div):
        inner = "\n\n".join(_block(c, outputs) for c in b.children)
        return f"::: {b.attr.render()}\n\n{inner}\n\n:::"
    return _cell(b, outputs.get(b.label, []))


def asis_text(outs: list[dict]) -> str:
    """What an `output: asis` cell printed: markdown that joins the page as if the author wrote it."""
    return "".join(_text(o["text"]) for o in outs if o["output_type"] == "stream" and o["name"] == "stdout")


def _cell(cell: CodeCell, outs: list[dict]) -> str:
    """A code cell with its outputs, as Quarto renders it."""
    if cell.options.get("output") == "asis":
        return asis_text(outs).strip("\n")
    attrs = [f"#cell-{cell.label}", ".cell"]
    if cell.role:
        attrs.append(f'course_role="{cell.role}"')
    parts = []
    if not cell.evaluated:
        attrs.append(".cell-not-run")
        parts.append(f"::: {{.cell-note}}\n{NOT_RUN_NOTE}\n:::")
    if cell.options.get("echo", True):
        parts.append(fence(cell.source, "{." + cell.lang + " .cell-code}"))
    if cell.options.get("output", True):
        parts += [_output(o, cell.options.get("fig-alt", "")) for o in outs]
    if "fig-cap" in cell.options:
        parts.append(f"::: {{.figure-caption}}\n{cell.options['fig-cap']}\n:::")
    return "::: {" + " ".join(attrs) + "}\n\n" + "\n\n".join(p for p in parts if p) + "\n\n:::"


def _output(out: dict, alt: str) -> str:
    """One Jupyter output as markdown: text in a pre, images inline with the cell's alt text (an <img>, not a
    figure: its caption is the cell's fig-cap, and the alt text is never shown as one), HTML raw."""
    kind = out["output_type"]
    if kind == "stream":
        return f"::: {{.cell-output .cell-output-{out['name']}}}\n\n{fence(_text(out['text']), '{.text}')}\n\n:::"
    if kind == "error":
        return (
            f"::: {{.cell-output .cell-output-error}}\n\n{fence(out['ename'] + ': ' + out['evalue'], '{.text}')}\n\n:::"
        )
    data = out.get("data", {})
    if "image/svg+xml" in data:
        body = fence(_text(data["image/svg+xml"]), "{=html}")
    elif "image/png" in data:
        src = f"data:image/png;base64,{_text(data['image/png']).strip()}"
        body = fence(f'<img src="{src}" alt="{html.escape(alt, quote=True)}">', "{=html}")
    elif "text/html" in data:
        body = fence(_text(data["text/html"]), "{=html}")
    elif "text/markdown" in data:
        body = _text(data["text/markdown"])
    elif "text/plain" in data:
        body = fence(_text(data["text/plain"]), "{.text}")
    else:
        return ""
    return f"::: {{.cell-output .cell-output-display}}\n\n{body}\n\n:::"


def _text(value: str | list[str]) -> str:
    """nbformat stores multi-line strings as lists; join them."""
    return "".join(value) if isinstance(value, list) else value
