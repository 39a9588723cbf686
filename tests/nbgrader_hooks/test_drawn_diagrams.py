"""A feedback page takes each diagram from the build's store and draws only what the store lacks."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

import course.nbgrader_hooks.drawn_diagrams as drawn_diagrams
from course.figures.diagrams import diagram_key, diagram_store, keep, mermaid_path, stored
from tests.figures.test_diagrams import FLOW, SEQUENCE, TEXT

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def mermaid_js() -> Path:
    """The course's mermaid (node_modules, installed by `make`)."""
    return mermaid_path(ROOT)


def cells() -> list:
    """A markdown cell with two diagrams (one twice) and a code cell holding a diagram's text."""
    return [nbformat.v4.new_markdown_cell(TEXT), nbformat.v4.new_code_cell(f"s = '''```mermaid\n{FLOW}```'''")]


def test_diagrams_the_store_holds_need_no_browser(tmp_path, mermaid_js, monkeypatch):
    monkeypatch.setattr(drawn_diagrams, "_drawn", {})
    keep(tmp_path, mermaid_js.read_bytes(), {SEQUENCE: "<svg>seq</svg>", FLOW: "<svg>flow</svg>"})

    def no_browser(*args):
        raise AssertionError("a diagram in the store was drawn again")

    monkeypatch.setattr(drawn_diagrams, "draw", no_browser)
    notebook = cells()
    drawn_diagrams.draw_into(notebook, mermaid_js, tmp_path)
    assert notebook[0].source.count('<div class="mermaid-drawn"><svg>seq</svg></div>') == 2
    assert '<div class="mermaid-drawn"><svg>flow</svg></div>' in notebook[0].source and "```" not in notebook[0].source
    assert "```mermaid" in notebook[1].source  # code is left as written


@pytest.mark.browser
def test_a_diagram_the_store_lacks_is_drawn_here_and_the_store_is_left_as_it_was(tmp_path, mermaid_js, monkeypatch):
    monkeypatch.setattr(drawn_diagrams, "_drawn", {})
    keep(tmp_path, mermaid_js.read_bytes(), {SEQUENCE: "<svg>seq</svg>"})
    notebook = cells()
    drawn_diagrams.draw_into(notebook, mermaid_js, tmp_path)
    key = diagram_key(mermaid_js.read_bytes(), FLOW)[:12]  # the SVG's id, which its styles are scoped by
    assert f'<div class="mermaid-drawn"><svg id="course-diagram-{key}"' in notebook[0].source
    assert 'aria-roledescription="flowchart' in notebook[0].source
    assert stored(tmp_path, mermaid_js.read_bytes(), [FLOW]) == {} and len(list(tmp_path.iterdir())) == 1


def test_the_store_is_in_the_projects_build_cache(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.course]\ncache_dir = "build-cache"\n')
    assert diagram_store(tmp_path) == tmp_path / "build-cache" / "diagrams"
