"""make_search_index: a page's sections are kept in the build cache and cut again only when the page, its title or
the code that cuts them changed, or the kept file cannot be read."""

from __future__ import annotations

import json

import pytest

from course.site import make_search_index
from course.site.make_search_index import kept_sections

PAGE = '<main><h1>第 9 课</h1><p>开头。</p><h2 id="a">一节</h2><p>正文。</p></main>'


@pytest.fixture
def cuts(monkeypatch) -> list[str]:
    """The pages cut into sections during the test (by their file name)."""
    seen = []
    cut = make_search_index.page_sections

    def counting(html, page_url, page_title):
        seen.append(page_url)
        return cut(html, page_url, page_title)

    monkeypatch.setattr(make_search_index, "page_sections", counting)
    return seen


def test_a_page_is_cut_once_and_read_from_the_cache_while_it_and_its_title_stay_the_same(tmp_path, cuts):
    page, kept = tmp_path / "lesson09.html", tmp_path / "cache" / "lesson09.json"
    page.write_text(PAGE, "utf-8")
    first = kept_sections(page, "第 9 课：标题", kept)
    assert [(s.url, s.heading, s.text) for s in first] == [
        ("lesson09.html", "第 9 课", "开头。"),
        ("lesson09.html#a", "一节", "正文。"),
    ]
    assert kept_sections(page, "第 9 课：标题", kept) == first and cuts == ["lesson09.html"]
    assert kept_sections(page, "第 9 课：新标题", kept)[0].page == "第 9 课：新标题" and len(cuts) == 2
    page.write_text(PAGE.replace("正文", "改过的正文"), "utf-8")
    assert kept_sections(page, "第 9 课：新标题", kept)[1].text == "改过的正文。" and len(cuts) == 3


def test_a_kept_file_from_other_code_or_damaged_is_cut_again_and_rewritten(tmp_path, cuts, monkeypatch):
    page, kept = tmp_path / "lesson09.html", tmp_path / "lesson09.json"
    page.write_text(PAGE, "utf-8")
    sections = kept_sections(page, "t", kept)
    monkeypatch.setattr(make_search_index, "_SECTIONS_CODE", "another version of search_documents")
    assert kept_sections(page, "t", kept) == sections and len(cuts) == 2
    key = json.loads(kept.read_text("utf-8"))["key"]
    for damaged in ("{", '{"key": 1}', json.dumps({"key": key, "sections": [1]})):
        kept.write_text(damaged, "utf-8")
        assert kept_sections(page, "t", kept) == sections
    assert len(cuts) == 5
    assert json.loads(kept.read_text("utf-8"))["sections"] == [vars(s) for s in sections]  # rewritten whole
