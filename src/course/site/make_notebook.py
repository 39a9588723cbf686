"""Turn an executed variant lesson into the lesson's reading notebook (lessonNN-notes.ipynb) offered on the site."""

from __future__ import annotations

import html
import re
from pathlib import Path

import nbformat

from course.lesson.model import Block, CodeCell, Diagram, Div, Lesson, Markdown, StaticCode, exercise_pairs
from course.lesson.notebook_names import notes_notebook
from course.site.execute_cells import Outputs
from course.site.write_page_markdown import asis_text, fence

LESSON_LINK = re.compile(r"\[(?P<text>[^\]]*)\]\((?P<stem>[\w-]+)\.qmd\)(?:\{[^}]*\})?")
DIV_TITLES = {"callout-note": "注", "callout-tip": "提示", "callout-important": "重要", "callout-warning": "注意"}
BLANK = "______"
# Under an exercise still holding blanks: why Run All stops at the first cell that calls it, in the clients' words.
BLANKS_NOTE = (
    "**注**：上面的单元还有待填的 `______`。填完之前，运行调用它的单元会报 "
    "`NameError: name '______' is not defined`，这是预期的：**Run All** 会停在那里。"
    "填好后用 **Kernel → Restart Kernel and Run All Cells…**"
    "（JupyterLab 4 / Notebook 7 的菜单名）从头再跑一遍。"
)


def make_notebook(
    lesson: Lesson, outputs: Outputs, *, freeze_hidden_code: bool = False, note_blanks: bool = False
) -> nbformat.NotebookNode:
    """Markdown between cells becomes markdown cells; executable cells keep their outputs.

    With FREEZE_HIDDEN_CODE, cells whose code the page hides (echo: false) become markdown showing their
    outputs, so a notebook runs nothing but the student's own work and needs nothing but Python (the build's
    helpers, e.g. the course package, stay behind). An exercise whose solution follows in the same notebook
    (answer variant) is shown as code to read, so "Run All" meets no blanks. With NOTE_BLANKS (the site's lesson
    notebook), an exercise still holding blanks is followed by a note that Run All stops where it is first called,
    and that this is expected.
    """
    nb = nbformat.v4.new_notebook()
    nb.metadata.update(
        {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
            "course": {"lesson": lesson.stem, "variant": lesson.variant},
        }
    )
    prose: list[str] = []
    count = 0
    solved = {pair.exercise.label for pair in exercise_pairs(lesson)}

    def flush() -> None:
        text = "\n\n".join(p for p in prose if p.strip())
        if text:
            nb.cells.append(nbformat.v4.new_markdown_cell(_link_lessons(text, lesson.path.parent)))
        prose.clear()

    for block in _flatten(lesson.blocks):
        if isinstance(block, CodeCell) and block.options.get("output") == "asis":
            prose.append(asis_text(outputs.get(block.label, [])))
        elif isinstance(block, CodeCell) and block.label in solved:
            prose.append(fence(block.source, block.lang))
        elif isinstance(block, CodeCell) and freeze_hidden_code and not block.options.get("echo", True):
            prose += [output_markdown(o, block.options.get("fig-alt", "")) for o in outputs.get(block.label, [])]
            prose += _caption(block)
        elif isinstance(block, CodeCell):
            flush()
            cell = nbformat.v4.new_code_cell(block.source, metadata={"course": dict(block.options)})
            outs = outputs.get(block.label, [])
            if outs:
                count += 1
                cell.execution_count = count
                cell.outputs = [nbformat.from_dict(_numbered(o, count)) for o in outs]
            nb.cells.append(cell)
            prose += _caption(block)
            if note_blanks and block.role == "exercise" and BLANK in block.source:
                prose.append(BLANKS_NOTE)
        else:
            prose.append(block)
    flush()
    for i, cell in enumerate(nb.cells):
        cell.id = f"{lesson.stem}-{i:03d}"
    nbformat.validate(nb)
    return nb


def _flatten(blocks: tuple[Block, ...]) -> list[Block | str]:
    """Divs dissolve into their children; a titled callout leaves its title as a bold line."""
    out: list[Block | str] = []
    for b in blocks:
        if isinstance(b, Div):
            title = b.attr.get("title") or next((DIV_TITLES[c] for c in b.attr.classes if c in DIV_TITLES), None)
            if title and any(c.startswith("callout-") for c in b.attr.classes):
                out.append(f"**{title}**")
            out += _flatten(b.children)
        elif isinstance(b, Markdown):
            out.append(b.text)
        elif isinstance(b, StaticCode):
            out.append(fence(b.text, b.info))
        elif isinstance(b, Diagram):
            out.append(fence(b.text, b.kind))
        else:
            out.append(b)
    return out


def _caption(cell: CodeCell) -> list[str]:
    """A figure cell's caption (fig-cap) as a line of prose under its output, as the page shows it."""
    return [f"*{cell.options['fig-cap']}*"] if "fig-cap" in cell.options else []


def output_markdown(output: dict, alt: str = "") -> str:
    """One cell output as markdown: markdown as is, images inline with ALT (the cell's fig-alt), text in a fence."""
    data = output.get("data", {})
    join = lambda v: "".join(v) if isinstance(v, list) else v  # noqa: E731 (nbformat splits long strings)
    if "text/markdown" in data:
        return join(data["text/markdown"])
    if "image/png" in data:
        return (
            f'<img src="data:image/png;base64,{join(data["image/png"]).strip()}" alt="{html.escape(alt, quote=True)}"'
            ' style="max-width:100%">'
        )
    text = join(output.get("text", "")) or join(data.get("text/plain", ""))
    return fence(text.rstrip("\n"), "text") if text.strip() else ""


def _numbered(output: dict, count: int) -> dict:
    """Give execute_result outputs the cell's execution count."""
    return {**output, "execution_count": count} if output["output_type"] == "execute_result" else output


def _link_lessons(text: str, lesson_dir: Path) -> str:
    """Links to other lessons point at their reading notebooks, or become plain text if not published yet."""

    def sub(m: re.Match) -> str:
        exists = (lesson_dir / f"{m['stem']}.qmd").exists()
        return f"[{m['text']}]({notes_notebook(m['stem'])})" if exists else m["text"]

    return LESSON_LINK.sub(sub, text)
