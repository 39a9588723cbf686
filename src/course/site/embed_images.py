"""Make a notebook self-contained: the lesson's images travel inside it as markdown-cell attachments.

A student downloads one .ipynb from the site and opens it in Jupyter or Colab, away from the site's assets/
folder; an image linked by path would be broken there. Pandoc's `{width="85%"}` after an image means nothing
to Jupyter's Markdown and would show as text, so it is dropped. JupyterLab and Notebook 7 show an attachment only
as a raster image (PNG, JPEG, GIF, WebP, BMP; an SVG attachment is a broken image), so an SVG travels as PNG.
"""

from __future__ import annotations

import base64
import mimetypes
import re
from pathlib import Path

from course.errors import CourseError, Location

IMAGE = re.compile(r"!\[(?P<alt>[^\]]*)\]\((?P<target>[^)\s]+)\)(?:\{[^}\n]*\})?")
REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|attachment:)", re.I)
# The attachment types JupyterLab's and Notebook 7's markdown renderer shows (its raster image renderer's types).
CLIENT_RENDERED = ("image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp")


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
            name, mime, data = _attachable(path, target, Location(notebook, cell=f"cell {index}"))
            attachments[name] = {mime: base64.b64encode(data).decode("ascii")}
            return f"![{m['alt']}](attachment:{name})"

        cell.source = IMAGE.sub(attach, cell.source)
        if attachments:
            cell["attachments"] = attachments


def _attachable(path: Path, target: str, where: Location) -> tuple[str, str, bytes]:
    """The attachment's name, type and bytes: the image as it is where the clients show it, an SVG drawn as PNG."""
    mime = mimetypes.guess_type(path.name)[0]
    if mime in CLIENT_RENDERED:
        return path.name, mime, path.read_bytes()
    if mime == "image/svg+xml":
        from course.tools.svg import svg_to_png

        return f"{path.stem}.png", "image/png", svg_to_png(path.read_bytes(), what=target)
    raise CourseError(
        f"image {target} is {mime or 'of unknown type'}, which JupyterLab and Notebook 7 cannot show as "
        f"an attachment; expected PNG, JPEG, GIF, WebP, BMP or SVG (drawn as PNG)",
        where,
    )
