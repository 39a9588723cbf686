"""Make a notebook self-contained: the lesson's images travel inside it as markdown-cell attachments.

A student downloads one .ipynb from the site and opens it in Jupyter or Colab, away from the site's assets/
folder; an image linked by path would be broken there. Pandoc's `{width="85%"}` after an image means nothing
to Jupyter's Markdown and would show as text, so it is dropped.
"""

from __future__ import annotations

import base64
import mimetypes
import re
from pathlib import Path

from course.errors import CourseError, Location

IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<target>[^)\s]+)\)(?:\{[^}\n]*\})?")
REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|attachment:)", re.I)


def embed_images(nb, root: Path, *, notebook: str) -> None:
    """Attach every local image of NB's markdown cells (paths relative to ROOT) and point the cells at them."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        attachments = dict(cell.get("attachments", {}))

        def attach(m: re.Match) -> str:
            target = m["target"]
            if REMOTE.match(target):
                return f"![{m['alt']}]({target})"
            path = (Path(root) / target).resolve()
            if not path.is_file():
                raise CourseError(f"image {target} not found under {root}", Location(notebook, cell=f"cell {index}"))
            mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            attachments[path.name] = {mime: base64.b64encode(path.read_bytes()).decode("ascii")}
            return f"![{m['alt']}](attachment:{path.name})"

        cell.source = IMAGE.sub(attach, cell.source)
        if attachments:
            cell["attachments"] = attachments
