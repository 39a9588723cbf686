"""Every internal link and resource of both sites resolves; nothing is loaded from another host."""

from __future__ import annotations

import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.every_lesson]


class _Refs(HTMLParser):
    """Collect link targets, loaded resources and element ids of one page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.loads: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        for key in ("src", "data-src"):
            if a.get(key):
                self.loads.append(a[key])
        if tag == "link" and a.get("href"):
            self.loads.append(a["href"])


def _pages(site: Path) -> list[Path]:
    return sorted(site.glob("*/*.html"))


@cache
def _parse(page: Path) -> _Refs:
    """PAGE's links, loads and ids (parsed once: every link to an anchor reads its target's ids)."""
    refs = _Refs()
    refs.feed(page.read_text("utf-8"))
    return refs


def test_sites_have_pages(built_site):
    assert {p.parent.name for p in _pages(built_site)} == {"student", "answer"}


def test_every_internal_link_resolves(built_site):
    broken = []
    for page in _pages(built_site):
        refs = _parse(page)
        for href in refs.links + refs.loads:
            parts = urlsplit(href)
            if parts.scheme in ("http", "https", "mailto", "data"):
                continue
            target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
            if not target.is_file():
                broken.append(f"{page.relative_to(built_site)} → {href}")
            elif parts.fragment and parts.fragment not in _parse(target).ids:
                broken.append(f"{page.relative_to(built_site)} → {href} (no such anchor)")
    assert not broken


def test_nothing_is_loaded_from_another_host(built_site):
    remote = [
        f"{p.name}: {src}"
        for p in _pages(built_site)
        for src in _parse(p).loads
        if urlsplit(src).scheme in ("http", "https") or src.startswith("//")
    ]
    assert not remote
    for page in _pages(built_site):
        assert not re.search(r"@import\s+url\(\s*['\"]?https?:", page.read_text("utf-8"))


def test_a_mention_of_another_lesson_links_exactly_when_this_project_has_that_lesson(built_site, project_root):
    """Lesson 5 names lessons 2, 4, 6, 8 and 9: each is a link where lessons/ has it, plain text where not."""
    existing = {int(p.stem[len("lesson") :]) for p in (project_root / "lessons").glob("lesson[0-9][0-9].qmd")}
    for variant in ("student", "answer"):
        page = (built_site / variant / "lesson05.html").read_text("utf-8")
        mentioned = {int(n) for n in re.findall(r"第\s*(\d+)\s*课", re.sub(r"<[^>]+>", "", page))}
        linked = {int(n) for n in re.findall(r'<a href="lesson(\d+)\.html" class="lesson-ref">', page)}
        assert mentioned >= {2, 4, 6, 8, 9} and linked == (mentioned & existing) - {5}
