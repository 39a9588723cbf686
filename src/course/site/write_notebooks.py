"""A lesson's notebooks in a site: the reading notebook made from its executed cells and, on the student site, its
assignment as nbgrader released it; the same files whichever renderer makes the pages (pandoc or Quarto)."""

from __future__ import annotations

from pathlib import Path

from course.errors import CourseError, Location
from course.fileio import write_atomic
from course.lesson.model import Lesson
from course.site.plan import BuildPlan


def lesson_outputs(plan: BuildPlan, view: Lesson) -> dict:
    """The outputs of one variant's cells, from the course's execution cache (run in a kernel when missing)."""
    from course.site.execute_cells import execute_cells

    outputs = execute_cells(view, cache_dir=plan.cache_dir, kernel=plan.config.kernel, timeout=plan.config.cell_timeout)
    check_figure_alts(view, outputs)
    return outputs


FIGURE_TYPES = ("image/png", "image/svg+xml", "image/jpeg", "image/gif")


def check_figure_alts(view: Lesson, outputs: dict) -> None:
    """Every figure a cell draws needs its author's alt text (`#| fig-alt:`): both renderers give it to the image, a
    reader who cannot see the figure hears it, and without it the image has none (or the figure's repr)."""
    for cell in view.cells():
        drawn = [t for out in outputs.get(cell.label, []) for t in FIGURE_TYPES if t in out.get("data", {})]
        if drawn and not str(cell.options.get("fig-alt") or "").strip():
            raise CourseError(
                f"the cell draws a figure ({drawn[0]}) but has no alt text: add "
                f'`#| fig-alt: "…"` (what the figure shows, for a reader who cannot see it)',
                Location(view.path, cell.line, cell.label),
            )


def write_notebooks(
    plan: BuildPlan, lesson: Lesson, view: Lesson, outputs: dict, out: Path, released: dict | None = None
) -> list[Path]:
    """Write a lesson's reading notebook (and RELEASED: its released assignment by file name) into OUT, images
    embedded and checked for leftover markup: the same files whichever renderer makes the pages."""
    import nbformat

    from course.lesson.notebook_names import notes_notebook
    from course.site.check_markup import check_markup, leftover_in_markdown
    from course.site.embed_images import embed_images
    from course.site.make_notebook import make_notebook
    from course.site.unlink_self import unlink_self

    notes = make_notebook(view, outputs, freeze_hidden_code=True, note_blanks=True)
    notes.metadata.course["notebook"] = "notes"  # handed in by mistake, grading and `course check` say so
    notebooks = {notes_notebook(lesson.stem): notes, **(released or {})}
    written = []
    for name, nb in notebooks.items():
        embed_images(nb, plan.root, notebook=name)
        unlink_self(nb, name)
        markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        check_markup(leftover_in_markdown(markdown), source=lesson.path, what=f"{view.variant}/{name}")
        written.append(write_atomic(out / name, nbformat.writes(nb)))
    return written
