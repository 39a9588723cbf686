"""The site's search index: every page's sections (search_documents) indexed by MiniSearch in node at build time and
written as a script the pages load, so search needs no server, no fetch and no network."""

from __future__ import annotations

import json
from pathlib import Path

from course.site.search_documents import as_json_rows, page_sections
from course.tools.node import run_node

INDEX_SCRIPT = "site_libs/search-index.js"
BUILDER = "build-search-index.js"
OPTIONS = "search-options.js"


def search_index_script(pages: list[tuple[Path, str]], *, site_files: Path, builder: Path) -> str:
    """JavaScript defining the index of PAGES (each its built HTML file and its title), for site_libs/."""
    documents = []
    for path, title in pages:
        documents += page_sections(path.read_text("utf-8"), path.name, title)
    index = run_node(
        site_files / BUILDER,
        [str(builder), str(site_files / OPTIONS)],
        json.dumps(as_json_rows(documents), ensure_ascii=False),
        what="the search index",
    )
    return f"window.COURSE_SEARCH_INDEX = {json.dumps(index, ensure_ascii=False)};\n"
