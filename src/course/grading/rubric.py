"""A lesson's grading standard, read from autograder/rubrics/lessonNN.yml: the one place points live.

The lesson's 检查与通过标准 section, the nbgrader cells' points and the report all derive from it. Its text
(titles, descriptions, 要点, 给分规则, veto items) is plain text, and render_text writes it for each place it
is shown — the lesson page (Markdown), formgrader and the HTML report (HTML), a test cell's comment or a CSV
cell (one line) — so `e^(x−m)` or `N_d` reads the same everywhere.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course.fileio import once_per_version
from course.lesson import validate
from course.lesson.validate import YamlDocument, load_yaml, parse_yaml  # noqa: F401 (grading files read YAML from here)

CHINESE_COUNT = dict(enumerate("两三四五六七八九", start=2))
# What pandoc's commonmark_x (with smart punctuation, sub/superscript, emoji, math) could read as markup inside a
# line: always-special characters, underscores at a word's edge, emoji colons, dash and dot runs; then what would
# start a list, heading or quote at the line's start.
MARKUP = re.compile(r"""[\\`*^~$<>\[\]{}|&"']|(?<![^\W_])_|_(?![^\W_])|:(?=[\w+-])|-(?=-)|(?<=-)-|\.(?=\.)|(?<=\.)\.""")
LINE_START = re.compile(r"^([-+#>(]|\d+(?=[.)]))")


@dataclass(frozen=True)
class CodeItem:
    """One autograded check of the exercise code (an nbgrader test cell); its description is graders' text unless
    marked for students."""

    id: str
    title: str
    points: float
    description: str
    for_students: bool = False


@dataclass(frozen=True)
class Question:
    """One manually graded question with its scoring points (要点).

    asked_by[i] is the phrase of the question (as the lesson prints it) that asks for key_points[i]: a full answer
    needs every key point, so the question must ask for each (unasked_key_points); asked_by_lines locate them.
    """

    id: str
    title: str
    points: float
    key_points: tuple[str, ...]
    partial_credit: str
    asked_by: tuple[str, ...] = ()
    asked_by_lines: tuple[int, ...] = ()


@dataclass(frozen=True)
class Veto:
    """A 一票否决项: recorded against a student's answer, it fails them whatever the points."""

    id: str
    text: str
    questions: tuple[str, ...]


@dataclass(frozen=True)
class Rubric:
    """The validated grading standard of one lesson."""

    path: Path
    lesson: str
    total: float
    pass_line: float
    code_items: tuple[CodeItem, ...]
    questions: tuple[Question, ...]
    vetoes: tuple[Veto, ...]

    def question(self, qid: str) -> Question | None:
        """The question with this id, or None."""
        return next((q for q in self.questions if q.id == qid), None)

    def veto(self, veto_id: str) -> Veto | None:
        """The veto item with this id, or None."""
        return next((v for v in self.vetoes if v.id == veto_id), None)

    def grade_ids(self) -> dict[str, float]:
        """nbgrader grade id → maximum points, code items first, in rubric order."""
        ids = {code_grade_id(c.id): c.points for c in self.code_items}
        ids.update({question_grade_id(q.id): q.points for q in self.questions})
        return ids


def code_grade_id(item_id: str) -> str:
    """The nbgrader grade id of the test cell that checks a code item."""
    return f"test-{item_id}"


def question_grade_id(qid: str) -> str:
    """The nbgrader grade id of the manually graded answer cell of a question."""
    return f"answer-{qid}"


def rubric_path(autograder_dir: Path, lesson: str) -> Path:
    """Where a lesson's rubric lives inside the nbgrader course root."""
    return Path(autograder_dir) / "rubrics" / f"{lesson}.yml"


def format_points(points: float) -> str:
    """Points as people write them: 2, 1.5 (never 2.0)."""
    return f"{points:g}"


def render_text(text: str, to: str) -> str:
    """Rubric text for one place it is shown: 'markdown' (a page), 'html' (formgrader, the report) or 'line'."""
    line = re.sub(r"[ \t]*\n\s*", " ", text.strip())
    if to == "markdown":
        escaped = MARKUP.sub(lambda m: "\\" + m.group(0), line)
        start = LINE_START.match(escaped)
        if start is None:
            return escaped
        cut = start.end()
        return escaped[:cut] + "\\" + escaped[cut:] if start.group(1)[0].isdigit() else "\\" + escaped
    if to == "html":
        return html.escape(text)
    if to == "line":
        return line
    raise ValueError(f"render_text: expected 'markdown', 'html' or 'line', got {to!r}")


def validate_document(doc: YamlDocument, schema_name: str) -> None:
    """Check a grading document against one of the grading schemas (grading/schema/NAME.json)."""
    validate.validate_document(doc, "course.grading", schema_name)


# ---------------------------------------------------------------- the rubric


def load_rubric(path: Path) -> Rubric:
    """Read and validate a lesson rubric (schema rubric.v1 plus the arithmetic the schema cannot state)."""
    doc = load_yaml(path)
    if not isinstance(doc.data, dict):
        raise doc.error(
            (), "expected a mapping with keys version, lesson, total, pass_line, code_items, questions, vetoes"
        )
    validate_document(doc, "rubric.v1")
    rubric = _build(doc)
    _check_consistency(doc, rubric)
    return rubric


# load_rubric, read once per version of the file: every student's re-check needs it (frozen: safe to share).
rubric_as_saved = once_per_version(load_rubric)


def _build(doc: YamlDocument) -> Rubric:
    """Dataclasses from schema-valid data."""
    d = doc.data
    return Rubric(
        path=doc.path,
        lesson=d["lesson"],
        total=d["total"],
        pass_line=d["pass_line"],
        code_items=tuple(
            CodeItem(c["id"], c["title"], c["points"], c["description"], c.get("description_for_students", False))
            for c in d["code_items"]
        ),
        questions=tuple(
            Question(
                q["id"],
                q["title"],
                q["points"],
                tuple(k["point"] for k in q["key_points"]),
                q["partial_credit"],
                tuple(k["asked_by"] for k in q["key_points"]),
                tuple(doc.line(("questions", i, "key_points", j, "asked_by")) for j in range(len(q["key_points"]))),
            )
            for i, q in enumerate(d["questions"])
        ),
        vetoes=tuple(Veto(v["id"], v["text"], tuple(v["questions"])) for v in d["vetoes"]),
    )


def _check_consistency(doc: YamlDocument, rubric: Rubric) -> None:
    """Unique ids, points summing to the total, a reachable pass line, vetoes on real questions."""
    if rubric.lesson != doc.path.stem:
        raise doc.error(("lesson",), f"expected {doc.path.stem!r} (the file name), got {rubric.lesson!r}")
    _check_unique(
        doc,
        [("code_items", i, c.id) for i, c in enumerate(rubric.code_items)]
        + [("questions", i, q.id) for i, q in enumerate(rubric.questions)],
    )
    _check_unique(doc, [("vetoes", i, v.id) for i, v in enumerate(rubric.vetoes)])
    parts = [c.points for c in rubric.code_items] + [q.points for q in rubric.questions]
    if not math.isclose(sum(parts), rubric.total):
        shown = " + ".join(map(format_points, parts))
        raise doc.error(
            ("total",),
            f"expected the code_items and questions points to sum to the total; "
            f"{shown} = {format_points(sum(parts))}, total is {format_points(rubric.total)}",
        )
    if rubric.pass_line > rubric.total:
        raise doc.error(
            ("pass_line",),
            f"expected at most the total {format_points(rubric.total)}, got {format_points(rubric.pass_line)}",
        )
    known = [q.id for q in rubric.questions]
    for i, veto in enumerate(rubric.vetoes):
        for j, qid in enumerate(veto.questions):
            if qid not in known:
                raise doc.error(
                    ("vetoes", i, "questions", j), f"expected one of the questions {', '.join(known)}, got {qid!r}"
                )


def _check_unique(doc: YamlDocument, entries: list[tuple[str, int, str]]) -> None:
    """Ids that name nbgrader cells or veto records must not repeat."""
    first: dict[str, tuple[Any, ...]] = {}
    for section, index, item_id in entries:
        path = (section, index, "id")
        if item_id in first:
            raise doc.error(
                path, f"expected a unique id; {item_id!r} is already used at line {doc.line(first[item_id])}"
            )
        first[item_id] = path


def unasked_key_points(question: Question, prompt: str) -> list[int]:
    """Indexes of QUESTION's key points whose asked_by words are not in PROMPT (the question as students read it).

    White space is left out on both sides, so a question wrapped over lines (Chinese has no spaces to keep) matches.
    """
    shown = "".join(prompt.split())
    return [i for i, phrase in enumerate(question.asked_by) if "".join(phrase.split()) not in shown]


def standard_markdown(rubric: Rubric) -> str:
    """The body of the lesson's 检查与通过标准 section, worded as the course has always stated it."""
    code_points = sum(c.points for c in rubric.code_items)
    code_items = "、".join(
        f"{render_text(c.title, 'markdown')} {format_points(c.points)} 分" for c in rubric.code_items
    )
    lines = [
        f"总分 {format_points(rubric.total)} 分：代码正确 {format_points(code_points)} 分（{code_items}）、"
        f"{_questions_phrase(rubric.questions)}、通过线 {format_points(rubric.pass_line)} 分。"
    ]
    if rubric.vetoes:
        lines += ["", "一票否决项：", ""] + [f"- {render_text(v.text, 'markdown')}" for v in rubric.vetoes]
    return "\n".join(lines) + "\n"


def key_points_markdown(rubric: Rubric) -> str:
    """The answer-only 要点 section: per question a heading and its 要点, written as the page shows them."""
    return "".join(
        f"### {q.id}\n\n" + "".join(f"- {render_text(point, 'markdown')}\n" for point in q.key_points) + "\n"
        for q in rubric.questions
    )


def _questions_phrase(questions: tuple[Question, ...]) -> str:
    """'三题各 2 分' when several questions weigh the same, else 'Q1 2 分、Q2 3 分'."""
    points = {q.points for q in questions}
    if len(points) == 1 and len(questions) in CHINESE_COUNT:
        return f"{CHINESE_COUNT[len(questions)]}题各 {format_points(points.pop())} 分"
    return "、".join(f"{q.id} {format_points(q.points)} 分" for q in questions)


# ---------------------------------------------------------------- the lesson's questions

QUESTION_HEADING = re.compile(r"^(#{1,6})[ \t]+(Q\d+)(?![A-Za-z0-9_])", re.M)


def lesson_questions(lesson) -> dict[str, int]:
    """Question id → the line of its heading (`### Q2`, `### Q2：…`) in the lesson file (the first one wins)."""
    from course.lesson.model import Markdown, walk

    found: dict[str, int] = {}
    for block in walk(lesson.blocks):
        if isinstance(block, Markdown):
            for m in QUESTION_HEADING.finditer(block.text):
                found.setdefault(m[2], block.line + block.text.count("\n", 0, m.start()))
    return found


def check_questions(lesson, rubric: Rubric) -> None:
    """Every question heading of the lesson has its rubric item and every rubric question its heading: a question
    without points would be shown and never graded, an item without a question would wait for an answer forever."""
    from course.errors import CourseError, Location
    from course.lesson.validate import display_path

    headings = lesson_questions(lesson)
    known = [q.id for q in rubric.questions]
    for qid, line in headings.items():
        if qid not in known:
            raise CourseError(
                f"question {qid} has no rubric item: expected an entry with id {qid} (title, points, "
                f"key_points, partial_credit) under questions: in {display_path(rubric.path)} "
                f"(it has {', '.join(known) or 'none'}), or no heading {qid}",
                Location(display_path(lesson.path), line),
            )
    for i, q in enumerate(rubric.questions):
        if q.id not in headings:
            doc = load_yaml(rubric.path)
            raise doc.error(
                ("questions", i, "id"),
                f"rubric question {q.id} has no question in "
                f"{display_path(lesson.path)}: expected a heading `### {q.id}` "
                f"(or `### {q.id}：…`) there, or no rubric item {q.id}",
            )
