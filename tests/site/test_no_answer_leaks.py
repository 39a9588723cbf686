"""No answer reaches the student variant: every file of _site/student is scanned for answer text."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from course.lesson.model import Markdown, walk
from course.lesson.parse_qmd import parse_lesson
from course.site.select_variant import select_variant

pytestmark = pytest.mark.slow

# Pieces named by the project's before-stop check, plus everything derived from the lesson below.
KNOWN = ["opt_fp32 / dp + extra", "return 3 * num_params", "冗余定义：ZeRO 消除的是", "通信没变多"]


def answer_only_snippets(project_root: Path) -> list[str]:
    """Solution lines the exercise lacks, sentences only the answer variant has, and the rubric's 要点.

    The answer page prints the 要点 from the rubric (an asis cell), so they are not Markdown of the lesson.
    """
    from course.grading.rubric import load_rubric

    lesson = parse_lesson(project_root / "lessons" / "lesson05.qmd")
    exercise = lesson.cell("ex-zero-memory").source
    code = [ln.split("#")[0].strip() for ln in lesson.cell("sol-zero-memory").source.splitlines()
            if ln.split("#")[0].strip() not in exercise]
    student = {b.text for b in walk(select_variant(lesson, "student").blocks) if isinstance(b, Markdown)}
    answer = [b.text for b in walk(select_variant(lesson, "answer").blocks) if isinstance(b, Markdown)]
    sentences = []
    for text in (t for t in answer if t not in student):
        for piece in re.split(r"[。；\n]", re.sub(r"[*`$]", "", text)):
            piece = piece.strip(" -：:")
            if len(piece) >= 12:
                sentences.append(piece[:40])
    rubric = load_rubric(project_root / "autograder" / "rubrics" / "lesson05.yml")
    key_points = [point[:40] for q in rubric.questions for point in q.key_points]
    assert len(key_points) >= 10
    return [normalise(s) for s in KNOWN + code + sentences + key_points]


def normalise(text: str) -> str:
    """Drop markdown emphasis, code and math marks that rendering removes."""
    return re.sub(r"[*`$]", "", text)


def visible_text(path: Path) -> str:
    """What a reader of the file sees: HTML without tags, notebook cells joined, other files as text."""
    raw = path.read_bytes().decode("utf-8", "replace")
    if path.suffix == ".html":
        raw = html.unescape(re.sub(r"<[^>]+>", "", raw))
    elif path.suffix == ".ipynb":
        cells = json.loads(raw)["cells"]
        raw = "\n".join("".join(c["source"]) + json.dumps(c.get("outputs", []), ensure_ascii=False) for c in cells)
    return normalise(raw)


def test_snippets_are_found_in_the_answer_site(built_site, project_root):
    """The scan itself works: every snippet is present somewhere in the answer variant."""
    texts = [visible_text(p) for p in (built_site / "answer").rglob("*") if p.suffix in (".html", ".ipynb")]
    missing = [s for s in answer_only_snippets(project_root) if not any(s in t for t in texts)]
    assert not missing


def test_student_site_has_no_answer(built_site, project_root):
    snippets = answer_only_snippets(project_root)
    assert len(snippets) > 30
    hits = []
    for path in sorted((built_site / "student").rglob("*")):
        if path.is_file() and path.suffix not in (".png",):
            text = visible_text(path)
            hits += [f"{path.relative_to(built_site)}: {s}" for s in snippets if s in text]
    assert not hits
