"""A lesson teaches the right thing without narrating what an earlier text said: its student page and the notebooks
a student downloads carry no 勘误 (erratum), 原稿 (the original), 上一版 (an earlier version) or 补写说明 (a note that
a part was added). Departures from the original live in the lesson's departures.yml, shown to instructors only."""

from __future__ import annotations

import html
import re

import nbformat
import pytest

from course.lesson.notebook_names import assignment_notebook, notes_notebook
from tests.lesson_cases import each_lesson, has_assignment

pytestmark = pytest.mark.slow

EDITORIAL = ("勘误", "原稿", "上一版", "补写说明")


def _page_text(path) -> str:
    """The visible text of a built page: tags and scripts removed, entities decoded."""
    raw = path.read_text("utf-8")
    raw = re.sub(r"<(script|style)\b.*?</\1>", " ", raw, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", " ", raw))


def _notebook_text(path) -> str:
    """Every cell's source and every output's text of a notebook."""
    nb = nbformat.read(path, as_version=4)
    parts = []
    for cell in nb.cells:
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts += [str(v) for v in out.get("data", {}).values()] + [str(out.get("text", ""))]
    return "\n".join(parts)


@each_lesson
def test_the_student_page_and_notebooks_carry_no_editorial_history(built_site, stem):
    student = built_site / "student"
    texts = {
        f"{stem}.html": _page_text(student / f"{stem}.html"),
        notes_notebook(stem): _notebook_text(student / notes_notebook(stem)),
    }
    if has_assignment(stem):
        texts[assignment_notebook(stem)] = _notebook_text(student / assignment_notebook(stem))
    found = {name: [w for w in EDITORIAL if w in text] for name, text in texts.items()}
    assert {name: words for name, words in found.items() if words} == {}
    assert all(len(text.strip()) > 100 for text in texts.values())  # the files were read, not empty
