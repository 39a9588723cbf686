"""course.tools.quarto and the renderer choice: a Quarto >= 1.7 is found ($QUARTO, [tool.course] quarto, PATH) or
the error says how to get one; `auto` renders with Quarto only when there is one; a site built by another renderer
is rebuilt whole. (Fake `quarto` scripts stand in here: the real renders are tests/workflows/test_quarto_render.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from course.errors import CourseError, ToolMissing
from course.site.plan import make_plan
from course.tools.quarto import find_quarto, quarto_available, render_intermediate
from course.workflows.build_site import _stale, choose_renderer


def fake_quarto(folder: Path, version: str) -> Path:
    """A `quarto` that only answers --version."""
    path = folder / "quarto"
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(0o755)
    return path


def test_no_quarto_is_a_tool_missing_that_says_how_to_get_one(monkeypatch, tmp_path):
    monkeypatch.setenv("QUARTO", str(tmp_path / "nowhere" / "quarto"))
    with pytest.raises(
        ToolMissing, match=r"Quarto not found .*from \$QUARTO.*quarto\.org.*shared/tools/quarto/setup\.sh"
    ):
        find_quarto()
    assert quarto_available() is None


def test_a_quarto_older_than_1_7_is_refused_and_1_7_is_used(monkeypatch, tmp_path):
    monkeypatch.setenv("QUARTO", str(fake_quarto(tmp_path, "1.6.40")))
    with pytest.raises(ToolMissing, match=r"Quarto 1\.6\.40 at .* is older than 1\.7"):
        find_quarto()
    monkeypatch.delenv("QUARTO")
    found = find_quarto(str(fake_quarto(tmp_path, "1.7.34")))  # [tool.course] quarto
    assert found.version == "1.7.34" and found.path == tmp_path / "quarto"


def test_auto_renders_with_quarto_only_when_one_is_found_and_a_bad_renderer_names_its_line(
    monkeypatch, tmp_path, project_root
):
    plan = make_plan(project_root)
    monkeypatch.setenv("QUARTO", str(tmp_path / "none"))
    assert choose_renderer(plan, "auto").name == "pandoc"
    monkeypatch.setenv("QUARTO", str(fake_quarto(tmp_path, "1.7.34")))
    chosen = choose_renderer(plan, "auto")
    assert (chosen.name, chosen.label, chosen.releases_assignments) == ("quarto", "quarto 1.7.34", True)
    assert choose_renderer(plan, "pandoc").label.startswith("pandoc 3.")
    with pytest.raises(
        CourseError,
        match=r"pyproject\.toml: \[tool\.course\] renderer: expected auto, quarto or "
        r"pandoc, got 'sphinx'",
    ):
        choose_renderer(plan, "sphinx")


def test_a_site_built_by_another_renderer_or_version_is_rebuilt_whole(built_site, project_root):
    """The stamp records what rendered the site: the pandoc build is up to date for pandoc and stale for Quarto."""
    from course.site.fingerprint import lesson_fingerprints, read_stamp_renderer
    from course.tools.quarto import Quarto
    from course.workflows.render_quarto import QuartoRenderer

    plan = make_plan(project_root)
    pandoc = choose_renderer(plan, "pandoc")
    prints = lesson_fingerprints(plan, pandoc.inputs(plan))
    assert read_stamp_renderer(built_site / "student") == pandoc.label and _stale(plan, "student", prints, pandoc) == []
    quarto = QuartoRenderer(Quarto(Path("quarto"), "1.7.34"))
    assert _stale(plan, "student", prints, quarto) == list(prints)


def test_what_quarto_writes_beside_a_source_while_rendering_is_an_intermediate_and_nothing_else(tmp_path):
    (tmp_path / "lesson05.qmd").write_text("---\n---\n", "utf-8")
    (tmp_path / "lesson05").mkdir()
    for name in (
        "lesson05.quarto_ipynb",
        "lesson05.quarto_ipynb_1",  # beside one an earlier render left
        "lesson05.html",
        "lesson05_files",
        "lesson05_files/figure-html/cell-1-output-1.png",
        "lesson05_files/execute-results/html.json",
    ):
        assert render_intermediate(tmp_path / name), name
    for name in ("lesson05.qmd", "lesson05/figures.py", "lesson05/notes.html", "lesson06.html", "other_files/x.png"):
        assert not render_intermediate(tmp_path / name), name
