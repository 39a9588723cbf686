"""select_variant and the Lua filter apply the same variant rules to the same lesson."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from course.errors import CourseError
from course.lesson.model import CodeCell, Diagram, Markdown, StaticCode, walk
from course.lesson.parse_qmd import parse_lesson
from course.lesson.variants import STUDENT
from course.site.render_page import filter_metadata
from course.site.select_variant import select_variant
from course.tools.pandoc import run_pandoc

ANSWER_ONLY = ["先完成题目再核对", "三个问答题要点", "**参考答案版**"]


@pytest.fixture(scope="module")
def lesson(project_root):
    return parse_lesson(project_root / "lessons" / "lesson05.qmd")


def _text(lesson) -> str:
    return "\n".join(b.text for b in walk(lesson.blocks) if isinstance(b, Markdown))


def test_student_variant_drops_solution_and_answer_only(lesson):
    student = select_variant(lesson, "student")
    assert [c.label for c in student.cells() if c.role] == ["ex-zero-memory"]
    text = _text(student)
    assert not [s for s in ANSWER_ONLY if s in text]
    assert "**学生版**" in text


def test_answer_variant_keeps_everything_but_the_student_banner(lesson):
    answer = select_variant(lesson, "answer")
    assert [c.label for c in answer.cells() if c.role] == ["ex-zero-memory", "solution-zero-memory"]
    text = _text(answer)
    assert all(s in text for s in ANSWER_ONLY) and "**学生版**" not in text


def test_unknown_variant_is_refused(lesson):
    with pytest.raises(CourseError, match="expected one of student, answer"):
        select_variant(lesson, "teacher")


def _code_texts(ast: dict) -> list[str]:
    found = []

    def visit(node):
        if isinstance(node, dict):
            if node.get("t") == "CodeBlock":
                found.append(node["c"][1].strip("\n"))
            elif node.get("t") == "RawBlock" and 'class="mermaid"' in node["c"][1]:
                found.append("mermaid")
            for v in node.values():
                visit(v)
        elif isinstance(node, list):
            for v in node:
                visit(v)

    visit(ast)
    return found


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_lua_filter_on_the_raw_source_agrees_with_select_variant(project_root, lesson, variant):
    """Plain pandoc + the filter on the .qmd (the Quarto-less path) keeps the same code blocks."""
    source = (project_root / "lessons" / "lesson05.qmd").read_text("utf-8")
    body = source.split("\n---\n", 1)[1]
    filt = project_root / "_extensions" / "course-variant" / "course-variant.lua"
    ast = json.loads(
        run_pandoc(
            body,
            [
                "-t",
                "json",
                f"--lua-filter={filt}",
                *filter_metadata(variant),
                "-M",
                f"course-lesson-dir={project_root / 'lessons'}",
            ],
            what="lesson05",
        )
    )
    view = select_variant(lesson, variant)
    expected = []
    for b in walk(view.blocks):
        if isinstance(b, CodeCell):
            expected.append(b.source if b.role != "solution" else "{{< include ../solutions/lesson05.py >}}")
        elif isinstance(b, StaticCode):
            expected.append(b.text.strip("\n"))
        elif isinstance(b, Diagram):
            expected.append("mermaid")
    assert _code_texts(ast) == expected
    rendered = run_pandoc(body, ["-t", "plain", f"--lua-filter={filt}", *filter_metadata(variant)], what="lesson05")
    for sentence in ANSWER_ONLY[:2]:
        assert (sentence in rendered) == (variant == "answer")


SOLUTION_OUTSIDE_PROFILE_DIVS = """---
title: "一课"
lesson: 1
---

```{python}
#| label: ex-add
#| course_role: exercise
#| eval: false
def add(a, b):
    return ______
```

```{python}
#| label: solution-add
#| course_role: solution
def add(a, b):
    return a + 40
```
"""


def test_solutions_follow_what_the_variant_shows_not_its_name(tmp_path, project_root):
    """The student variant drops a solution cell because its shows_solutions is False: the same variant with it
    True (still named student, so the filter gets -M course-variant=student) keeps it, in select_variant and in the
    Lua filter alike."""
    qmd = tmp_path / "lesson01.qmd"
    qmd.write_text(SOLUTION_OUTSIDE_PROFILE_DIVS, "utf-8")
    showing = replace(STUDENT, shows_solutions=True)
    assert [c.label for c in select_variant(parse_lesson(qmd), STUDENT).cells()] == ["ex-add"]
    assert [c.label for c in select_variant(parse_lesson(qmd), showing).cells()] == ["ex-add", "solution-add"]
    filt = project_root / "_extensions" / "course-variant" / "course-variant.lua"
    body = SOLUTION_OUTSIDE_PROFILE_DIVS.split("\n---\n", 1)[1]
    shown = {
        variant: run_pandoc(body, ["-t", "plain", f"--lua-filter={filt}", *filter_metadata(variant)], what="lesson01")
        for variant in (STUDENT, showing)
    }
    assert "a + 40" not in shown[STUDENT] and "a + 40" in shown[showing]
    assert "course-variant=student" in filter_metadata(showing)


@pytest.mark.parametrize(
    ("given", "missing"),
    [
        (["-M", "course-variant=student"], "course-shows-solutions must be true"),
        (["-M", "course-shows-solutions=false"], "course-variant"),
    ],
)
def test_the_filter_never_guesses_what_a_page_shows(project_root, given, missing):
    """A page rendered without saying whether it shows solutions, or as which profile, stops instead of guessing."""
    filt = project_root / "_extensions" / "course-variant" / "course-variant.lua"
    with pytest.raises(CourseError, match=f"metadata {missing}"):
        run_pandoc("text", ["-t", "plain", f"--lua-filter={filt}", *given], what="a page")
