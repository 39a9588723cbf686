"""execute_cells: real kernel outputs, a content-keyed cache, and failures that name the cell."""

from __future__ import annotations

from pathlib import Path

import pytest

import course.site.execute_cells as ex
from course.errors import CourseError
from course.lesson.parse_qmd import parse_lesson
from course.site.select_variant import select_variant

pytestmark = pytest.mark.slow
FIXTURE = Path(__file__).parent / "fixtures" / "asis-and-outputs.qmd"


def test_outputs_come_from_a_kernel_and_are_cached(tmp_path, monkeypatch):
    lesson = select_variant(parse_lesson(FIXTURE), "answer")
    outputs = ex.execute_cells(lesson, cache_dir=tmp_path, kernel="python3", timeout=60)
    assert outputs["solution-add"][0]["text"] == "5\n" and "ex-add" not in outputs
    monkeypatch.setattr(ex, "_run", lambda *a, **k: pytest.fail("cache miss: the kernel ran again"))
    assert ex.execute_cells(lesson, cache_dir=tmp_path, kernel="python3", timeout=60) == outputs


def test_the_cache_key_follows_cell_content_and_dependencies(tmp_path):
    lesson = parse_lesson(FIXTURE)
    cells = [c for c in lesson.cells() if c.evaluated]
    key = ex.cache_key(lesson, cells, "python3")
    changed = [cells[0].__class__(cells[0].line, cells[0].lang, cells[0].options, "print(6)")] + cells[1:]
    assert ex.cache_key(lesson, changed, "python3") != key
    assert ex.cache_key(lesson, cells, "python3") == key


def test_a_raising_cell_names_file_line_and_cell(tmp_path):
    path = tmp_path / "lesson01.qmd"
    path.write_text(
        "---\ntitle: t\nlesson: 1\n---\n\n```{python}\n#| label: first\nx = 1\n```\n\n"
        '```{python}\n#| label: broken\nraise ValueError("bad number")\n```\n',
        "utf-8",
    )
    with pytest.raises(CourseError, match=r"lesson01.qmd, line 11, cell broken: cell raised ValueError: bad number"):
        ex.execute_cells(parse_lesson(path), cache_dir=tmp_path / "cache", kernel="python3", timeout=60)
    assert not (tmp_path / "cache" / "exec").exists() or not any((tmp_path / "cache" / "exec").iterdir())


def test_the_build_kernel_starts_without_warning_of_plain_text_transport(tmp_path, capfd):
    """ipykernel 7 warned on every build that its connection was unencrypted TCP (issue 34, finding 7)."""
    lesson = select_variant(parse_lesson(FIXTURE), "answer")
    ex.execute_cells(lesson, cache_dir=tmp_path, kernel="python3", timeout=60)
    err = capfd.readouterr().err
    assert "WARNING" not in err and "without encryption" not in err, err
