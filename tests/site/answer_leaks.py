"""What a student site must not hold of a lesson: the answer-only text each lesson yields (solution lines, sentences
only the answer variant has, the rubric's key points), and the files the in-browser notebooks ship."""

from __future__ import annotations

import re
from pathlib import Path

from course.lesson.model import Markdown, walk
from course.site.select_variant import select_variant
from tests.lesson_cases import ROOT, lesson, solutions

# Pieces of lesson 5 named by the project's before-stop check, beside everything derived from each lesson below.
KNOWN = {"lesson05": ["opt_fp32 / dp + extra", "return 3 * num_params", "冗余定义：ZeRO 消除的是", "通信没变多"]}


def answer_only_snippets(stem: str, *, key_points: bool = True) -> list[str]:
    """Solution lines the exercise lacks, sentences only the answer variant has, and (KEY_POINTS) the rubric's 要点.

    A lesson's answer page may print the 要点 from the rubric (an asis cell), so they are not Markdown of the lesson.
    """
    from course.grading.rubric import load_rubric

    parsed = lesson(stem)
    code = []
    for label, solution in solutions(stem).items():
        exercise = parsed.cell(label).source
        code += [
            ln.split("#")[0].strip()
            for ln in solution.splitlines()
            if len(ln.split("#")[0].strip()) >= 8 and ln.split("#")[0].strip() not in exercise
        ]
    student = {b.text for b in walk(select_variant(parsed, "student").blocks) if isinstance(b, Markdown)}
    answer = [b.text for b in walk(select_variant(parsed, "answer").blocks) if isinstance(b, Markdown)]
    sentences = []
    for text in (t for t in answer if t not in student):
        for piece in re.split(r"[。；\n]", re.sub(r"[*`$]", "", text)):
            piece = piece.strip(" -：:")
            if len(piece) >= 12:
                sentences.append(piece[:40])
    rubric = ROOT / "autograder" / "rubrics" / f"{stem}.yml"
    points = (
        [p[:40] for q in load_rubric(rubric).questions for p in q.key_points] if rubric.is_file() and key_points else []
    )
    return [normalise(s) for s in KNOWN.get(stem, []) + code + sentences + points]


def normalise(text: str) -> str:
    """Drop markdown emphasis, code and math marks that rendering removes."""
    return re.sub(r"[*`$]", "", text)


def lite_shipped(site: Path) -> list[Path]:
    """What the site's JupyterLite ships besides its app: every notebook, JSON and HTML file under lite/."""
    lite = site / "lite"
    return sorted(p for p in lite.rglob("*") if p.suffix in (".ipynb", ".json", ".html") and p.is_file())
