"""The site's search index: every page's sections (search_documents) indexed by MiniSearch in node at build time and
written as a script the pages load, so search needs no server, no fetch and no network. A page's sections are kept
in the build cache, one file per page, so that a build which rewrites one lesson's page reads only that page again."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from course.fileio import write_atomic
from course.site import search_documents
from course.site.search_documents import SearchDocument, as_json_rows, page_sections
from course.tools.node import run_node

INDEX_SCRIPT = "site_libs/search-index.js"
BUILDER = "build-search-index.js"
OPTIONS = "search-options.js"


def search_index_script(pages: list[tuple[Path, str]], *, site_files: Path, builder: Path, kept: Path) -> str:
    """JavaScript defining the index of PAGES (each its built HTML file and its title), for site_libs/; each page's
    sections are read from KEPT/<page>.json when they were cut from the same page by the same code."""
    documents = []
    for path, title in pages:
        documents += kept_sections(path, title, kept / path.with_suffix(".json").name)
    index = run_node(
        site_files / BUILDER,
        [str(builder), str(site_files / OPTIONS)],
        json.dumps(as_json_rows(documents), ensure_ascii=False),
        what="the search index",
    )
    return f"window.COURSE_SEARCH_INDEX = {json.dumps(index, ensure_ascii=False)};\n"


def kept_sections(page: Path, title: str, kept: Path) -> list[SearchDocument]:
    """PAGE's sections under TITLE: from KEPT when its key matches (this page's bytes, name and title, and the code
    that cuts them), else cut from the page and kept there."""
    data = page.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    key = hashlib.sha256(json.dumps([_SECTIONS_CODE, digest, page.name, title]).encode()).hexdigest()
    try:
        was = json.loads(kept.read_text("utf-8"))
        if was["key"] == key:
            return [SearchDocument(**row) for row in was["sections"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    sections = page_sections(data.decode("utf-8"), page.name, title)
    write_atomic(kept, json.dumps({"key": key, "sections": as_json_rows(sections)}, ensure_ascii=False))
    return sections


_SECTIONS_CODE = hashlib.sha256(Path(search_documents.__file__).read_bytes()).hexdigest()
