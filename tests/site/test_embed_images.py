"""embed_images: a notebook's images travel as attachments of the types JupyterLab and Notebook 7 show."""

from __future__ import annotations

import base64
import struct

import nbformat
import pytest

from course.errors import CourseError
from course.site.embed_images import embed_images

SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40" viewBox="0 0 120 40">'
    '<rect x="0" y="0" width="120" height="40" fill="#2563eb"/><text x="10" y="28" font-size="20">图 1</text></svg>'
)


def notebook(markdown: str):
    """A notebook of one markdown cell."""
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(markdown)])


def test_an_svg_travels_as_a_png_drawn_at_twice_its_size(tmp_path):
    (tmp_path / "flow.svg").write_text(SVG, "utf-8")
    nb = notebook('![流程](flow.svg){width="90%"}')
    embed_images(nb, tmp_path, notebook="lesson01.ipynb")
    cell = nb.cells[0]
    assert cell.source == "![流程](attachment:flow.png)"
    [(mime, data)] = cell.attachments["flow.png"].items()
    png = base64.b64decode(data)
    assert mime == "image/png" and png.startswith(b"\x89PNG\r\n\x1a\n")
    assert struct.unpack(">II", png[16:24]) == (240, 80)  # IHDR width and height


def test_a_png_travels_as_it_is(tmp_path):
    data = (tmp_path / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\nrest") and (tmp_path / "chart.png").read_bytes()
    nb = notebook("![](chart.png)")
    embed_images(nb, tmp_path, notebook="lesson01.ipynb")
    assert nb.cells[0].attachments == {"chart.png": {"image/png": base64.b64encode(data).decode("ascii")}}


def test_an_image_the_clients_cannot_show_is_named(tmp_path):
    (tmp_path / "scan.tiff").write_bytes(b"II*\x00")
    with pytest.raises(
        CourseError,
        match=r"image scan.tiff is image/tiff, which JupyterLab and Notebook 7 cannot "
        r"show as an attachment; expected PNG, JPEG",
    ) as error:
        embed_images(notebook("text\n\n![](scan.tiff)"), tmp_path, notebook="lesson01.ipynb")
    assert "lesson01.ipynb" in str(error.value)
