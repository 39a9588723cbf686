"""A lesson's grading standard, read from autograder/rubrics/lessonNN.yml: the one place points live.

The lesson's 检查与通过标准 section, the nbgrader cells' points and the report all derive from it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from course.errors import CourseError, Location

CHINESE_COUNT = dict(enumerate("两三四五六七八九", start=2))


@dataclass(frozen=True)
class CodeItem:
    """One autograded check of the exercise code (an nbgrader test cell)."""

    id: str
    title: str
    points: float
    description: str


@dataclass(frozen=True)
class Question:
    """One manually graded question with its scoring points (要点)."""

    id: str
    title: str
    points: float
    key_points: tuple[str, ...]
    partial_credit: str


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


# ---------------------------------------------------------------- YAML with line numbers


@dataclass(frozen=True)
class YamlDocument:
    """Parsed YAML data plus its node tree, so a key path can be turned into a line number."""

    path: Path
    data: Any
    node: yaml.Node | None

    def line(self, key_path: tuple[Any, ...]) -> int:
        """1-based line of the value at key_path (or of its deepest existing parent)."""
        node = self.node
        for key in key_path:
            child = _child(node, key)
            if child is None:
                break
            node = child
        return node.start_mark.line + 1 if node is not None else 1

    def key_line(self, key_path: tuple[Any, ...], key: str) -> int:
        """1-based line of the key KEY inside the mapping at key_path."""
        node = self.node
        for part in key_path:
            node = _child(node, part) or node
        if isinstance(node, yaml.MappingNode):
            for k, _ in node.value:
                if k.value == key:
                    return k.start_mark.line + 1
        return self.line(key_path)

    def error(self, key_path: tuple[Any, ...], message: str, *, line: int | None = None) -> CourseError:
        """A CourseError 'FILE, line N: a/b/0: message'."""
        key = "/".join(str(p) for p in key_path) or "(top level)"
        return CourseError(f"{key}: {message}", Location(display_path(self.path), line or self.line(key_path)))


def display_path(path: Path) -> str:
    """'rubrics/lesson05.yml' or 'vetoes/lesson05.yml': the file name alone would not say which."""
    return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


def _child(node: yaml.Node | None, key: Any) -> yaml.Node | None:
    """The child node at a mapping key or sequence index, or None."""
    if isinstance(node, yaml.MappingNode):
        return next((v for k, v in node.value if k.value == str(key)), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        return node.value[key]
    return None


def load_yaml(path: Path) -> YamlDocument:
    """Read a YAML file keeping node marks; syntax errors and repeated keys name the line."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise CourseError("file not found", Location(display_path(path))) from None
    except UnicodeDecodeError as exc:
        raise CourseError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", Location(display_path(path))) from None
    return parse_yaml(path, text)


def parse_yaml(path: Path, text: str) -> YamlDocument:
    """Parse YAML text that belongs to PATH, keeping node marks for line numbers."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _reject_repeated_keys(path, node)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise CourseError(f"not valid YAML: {exc.problem}",
                          Location(display_path(path), mark.line + 1 if mark else None)) from None
    finally:
        loader.dispose()
    return YamlDocument(path, data, node)


def _reject_repeated_keys(path: Path, node: yaml.Node) -> None:
    """YAML keeps only the last of two equal keys; a grading file must not silently lose one."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for k, v in node.value:
            if k.value in seen:
                raise CourseError(f"key {k.value!r} appears twice (first at line {seen[k.value]}); expected it once",
                                  Location(display_path(path), k.start_mark.line + 1))
            seen[k.value] = k.start_mark.line + 1
            _reject_repeated_keys(path, v)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            _reject_repeated_keys(path, v)


@cache
def load_schema(name: str) -> dict:
    """A versioned JSON schema shipped with the package (grading/schema/NAME.json)."""
    return json.loads(resources.files("course.grading").joinpath("schema", f"{name}.json").read_text("utf-8"))


def validate_document(doc: YamlDocument, schema_name: str) -> None:
    """Check a document against a schema; report the problem that comes first in the file."""
    validator = jsonschema.Draft202012Validator(load_schema(schema_name))
    placed = [(_error_line(doc, e), e) for e in validator.iter_errors(doc.data)]
    if placed:
        line, err = min(placed, key=lambda p: (p[0], len(p[1].absolute_path)))
        raise doc.error(tuple(err.absolute_path), _explain(err), line=line)


def _error_line(doc: YamlDocument, err: jsonschema.ValidationError) -> int:
    """The line a schema error points at: the unknown key itself, else the value at the path."""
    path = tuple(err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        if extra:
            return doc.key_line(path, str(extra[0]))
    return doc.line(path)


def _explain(err: jsonschema.ValidationError) -> str:
    """Turn a schema error into 'expected …' wording."""
    v, value, got = err.validator, err.validator_value, err.instance
    if v == "additionalProperties":
        allowed = sorted(err.schema.get("properties", {}))
        extra = sorted(set(got) - set(allowed))
        return f"unknown key {', '.join(map(repr, extra))}; expected only {', '.join(allowed)}"
    if v == "required":
        missing = [k for k in value if k not in got]
        return f"missing key {', '.join(map(repr, missing))}; expected {', '.join(value)}"
    messages = {
        "type": lambda: f"expected {'a ' + value if isinstance(value, str) else ' or '.join(value)}, got {got!r}",
        "const": lambda: f"expected {value!r}, got {got!r}",
        "pattern": lambda: f"expected text matching {value}, got {got!r}",
        "minItems": lambda: f"expected at least {value} item(s), got {len(got)}",
        "uniqueItems": lambda: f"expected no repeated entries, got {got!r}",
        "minLength": lambda: "expected non-empty text",
        "minimum": lambda: f"expected a number ≥ {value}, got {got!r}",
        "exclusiveMinimum": lambda: f"expected a number > {value}, got {got!r}",
    }
    return messages[v]() if v in messages else f"expected {err.message}"


# ---------------------------------------------------------------- the rubric


def load_rubric(path: Path) -> Rubric:
    """Read and validate a lesson rubric (schema rubric.v1 plus the arithmetic the schema cannot state)."""
    doc = load_yaml(path)
    if not isinstance(doc.data, dict):
        raise doc.error((), "expected a mapping with keys version, lesson, total, pass_line, code_items, "
                            "questions, vetoes")
    validate_document(doc, "rubric.v1")
    rubric = _build(doc)
    _check_consistency(doc, rubric)
    return rubric


def _build(doc: YamlDocument) -> Rubric:
    """Dataclasses from schema-valid data."""
    d = doc.data
    return Rubric(
        path=doc.path,
        lesson=d["lesson"],
        total=d["total"],
        pass_line=d["pass_line"],
        code_items=tuple(CodeItem(c["id"], c["title"], c["points"], c["description"]) for c in d["code_items"]),
        questions=tuple(Question(q["id"], q["title"], q["points"], tuple(q["key_points"]), q["partial_credit"])
                        for q in d["questions"]),
        vetoes=tuple(Veto(v["id"], v["text"], tuple(v["questions"])) for v in d["vetoes"]),
    )


def _check_consistency(doc: YamlDocument, rubric: Rubric) -> None:
    """Unique ids, points summing to the total, a reachable pass line, vetoes on real questions."""
    if rubric.lesson != doc.path.stem:
        raise doc.error(("lesson",), f"expected {doc.path.stem!r} (the file name), got {rubric.lesson!r}")
    _check_unique(doc, [("code_items", i, c.id) for i, c in enumerate(rubric.code_items)]
                  + [("questions", i, q.id) for i, q in enumerate(rubric.questions)])
    _check_unique(doc, [("vetoes", i, v.id) for i, v in enumerate(rubric.vetoes)])
    parts = [c.points for c in rubric.code_items] + [q.points for q in rubric.questions]
    if not math.isclose(sum(parts), rubric.total):
        shown = " + ".join(map(format_points, parts))
        raise doc.error(("total",), f"expected the code_items and questions points to sum to the total; "
                                    f"{shown} = {format_points(sum(parts))}, total is {format_points(rubric.total)}")
    if rubric.pass_line > rubric.total:
        raise doc.error(("pass_line",), f"expected at most the total {format_points(rubric.total)}, "
                                        f"got {format_points(rubric.pass_line)}")
    known = [q.id for q in rubric.questions]
    for i, veto in enumerate(rubric.vetoes):
        for j, qid in enumerate(veto.questions):
            if qid not in known:
                raise doc.error(("vetoes", i, "questions", j), f"expected one of the questions {', '.join(known)}, "
                                                                f"got {qid!r}")


def _check_unique(doc: YamlDocument, entries: list[tuple[str, int, str]]) -> None:
    """Ids that name nbgrader cells or veto records must not repeat."""
    first: dict[str, tuple[Any, ...]] = {}
    for section, index, item_id in entries:
        path = (section, index, "id")
        if item_id in first:
            raise doc.error(path, f"expected a unique id; {item_id!r} is already used at line "
                                  f"{doc.line(first[item_id])}")
        first[item_id] = path


def standard_markdown(rubric: Rubric) -> str:
    """The body of the lesson's 检查与通过标准 section, worded as the course has always stated it."""
    code_points = sum(c.points for c in rubric.code_items)
    code_titles = "、".join(c.title for c in rubric.code_items)
    lines = [f"总分 {format_points(rubric.total)} 分：代码正确 {format_points(code_points)} 分（{code_titles}）、"
             f"{_questions_phrase(rubric.questions)}、通过线 {format_points(rubric.pass_line)} 分。"]
    if rubric.vetoes:
        lines += ["", "一票否决项：", ""] + [f"- {v.text}" for v in rubric.vetoes]
    return "\n".join(lines) + "\n"


def _questions_phrase(questions: tuple[Question, ...]) -> str:
    """'三题各 2 分' when several questions weigh the same, else 'Q1 2 分、Q2 3 分'."""
    points = {q.points for q in questions}
    if len(points) == 1 and len(questions) in CHINESE_COUNT:
        return f"{CHINESE_COUNT[len(questions)]}题各 {format_points(points.pop())} 分"
    return "、".join(f"{q.id} {format_points(q.points)} 分" for q in questions)
