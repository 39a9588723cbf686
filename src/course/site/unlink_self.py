"""A notebook's links to its own file become words: the file changes its name, and the link would point at nothing.

The student site offers the assignment as lessonNN.ipynb, the file students hand in; a link in it to
lessonNN.ipynb (the lesson page's download link, carried into the notebook) would lead a student who opened it
elsewhere (Colab, a hub's exchange) nowhere, so inside that notebook it reads "…（即本 notebook）" instead.
"""

from __future__ import annotations

import re


def unlink_self(nb, name: str) -> None:
    """Turn every markdown link of NB to NAME (the notebook's own file) into its text, marked as this notebook."""
    link = re.compile(r"\[(?P<text>[^\]]*)\]\(" + re.escape(name) + r"(?:#[^)\s]*)?\)(?:\{[^}\n]*\})?")
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = link.sub(lambda m: f"{m['text']}（即本 notebook）", cell.source)
