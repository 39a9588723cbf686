"""Read a lesson .qmd into typed blocks; every later step works on the tree, never on text."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from course.errors import CourseError, Location
from course.lesson.model import (
    EXERCISE_PREFIX,
    QUARTO_RESERVED_PREFIXES,
    SOLUTION_PREFIX,
    Attr,
    Block,
    CodeCell,
    Diagram,
    Div,
    Lesson,
    Markdown,
    StaticCode,
)
from course.lesson.take_defs import take_definitions
from course.lesson.validate import validate_data

CODE_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<info>.*?)\s*$")
DIV_OPEN = re.compile(r"^(?P<fence>:{3,})\s*(?P<attr>\{.*\}|[A-Za-z][\w-]*)\s*:*\s*$")
DIV_CLOSE = re.compile(r"^:{3,}\s*$")
INCLUDE = re.compile(r"^\{\{<\s*include\s+(?P<path>\S+)\s*>\}\}\s*$")
OPTION_LINE = re.compile(r"^#\|\s?(?P<yaml>.*)$")
EXECUTABLE = re.compile(r"^\{(?P<lang>[A-Za-z][\w-]*)(?P<rest>[^}]*)\}$")
DIAGRAM_KINDS = {"mermaid"}
CELL_FLOAT_PREFIXES = ("fig-", "tbl-", "lst-")  # what Quarto makes of an ordinary cell so labelled: its figure, table


def validate(data: Any, schema_name: str, where: Location, what: str) -> None:
    """Check data against one of the lesson schemas (lesson/schema/NAME.json)."""
    validate_data(data, "course.lesson", schema_name, where, what)


@dataclass
class _Lines:
    """The source lines with 1-based numbering for messages."""

    path: Path
    lines: list[str]

    def where(self, index: int, cell: str | None = None) -> Location:
        """Location of the 0-based line index."""
        return Location(self.path, index + 1, cell)


def parse_lesson(path: Path) -> Lesson:
    """Parse a lesson file into a Lesson; raise CourseError at the first problem."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise CourseError("lesson file not found", Location(path)) from None
    except UnicodeDecodeError as exc:
        raise CourseError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", Location(path)) from None
    src = _Lines(path, text.splitlines())
    front, body_start = _front_matter(src)
    blocks, end = _blocks(src, body_start, inside_div=None)
    assert end == len(src.lines)
    lesson = Lesson(path=path, front=front, blocks=blocks)
    _check_labels(lesson)
    return lesson


def _front_matter(src: _Lines) -> tuple[dict, int]:
    """YAML between the first two '---' lines, validated against front-matter.v1."""
    if not src.lines or src.lines[0].strip() != "---":
        raise CourseError("expected front matter: the file must start with a '---' line", src.where(0))
    for i in range(1, len(src.lines)):
        if src.lines[i].strip() in ("---", "..."):
            break
    else:
        raise CourseError("front matter is not closed: expected a '---' line", src.where(0))
    try:
        data = yaml.safe_load("\n".join(src.lines[1:i])) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = 1 + (mark.line + 1 if mark else 0)
        raise CourseError(
            f"front matter is not valid YAML: {getattr(exc, 'problem', exc)}", src.where(line - 1)
        ) from None
    if not isinstance(data, dict):
        raise CourseError("front matter must be a mapping of keys", src.where(1))
    validate(data, "front-matter.v1", src.where(0), "front matter key")
    return data, i + 1


def _blocks(src: _Lines, i: int, inside_div: int | None) -> tuple[tuple[Block, ...], int]:
    """Parse blocks from line i until the end or the closing fence of the div opened at inside_div."""
    blocks: list[Block] = []
    prose_start = i
    n = len(src.lines)

    def flush(upto: int) -> None:
        text = "\n".join(src.lines[prose_start:upto]).strip("\n")
        if text.strip():
            first = prose_start + next(k for k, ln in enumerate(src.lines[prose_start:upto]) if ln.strip())
            blocks.append(Markdown(line=first + 1, text=text))

    while i < n:
        line = src.lines[i]
        if DIV_CLOSE.match(line):
            if inside_div is None:
                raise CourseError("closing ':::' without an open div", src.where(i))
            flush(i)
            return tuple(blocks), i + 1
        if m := CODE_FENCE.match(line):
            flush(i)
            block, i = _code_block(src, i, m)
            blocks.append(block)
            prose_start = i
            continue
        if m := DIV_OPEN.match(line):
            flush(i)
            children, after = _blocks(src, i + 1, inside_div=i)
            blocks.append(Div(line=i + 1, attr=parse_attr(m["attr"], src.where(i)), children=children))
            i = prose_start = after
            continue
        i += 1
    if inside_div is not None:
        raise CourseError("div opened here is never closed: expected a ':::' line", src.where(inside_div))
    flush(n)
    return tuple(blocks), n


def _code_block(src: _Lines, start: int, m: re.Match) -> tuple[Block, int]:
    """A fenced code block from its opening line to its closing fence."""
    fence, info = m["fence"], m["info"]
    closer = re.compile(rf"^{re.escape(fence[0])}{{{len(fence)},}}\s*$")
    for end in range(start + 1, len(src.lines)):
        if closer.match(src.lines[end]):
            break
    else:
        raise CourseError(f"code fence {fence}{info} is never closed: expected a '{fence}' line", src.where(start))
    body = src.lines[start + 1 : end]
    exe = EXECUTABLE.match(info)
    if exe and exe["lang"] in DIAGRAM_KINDS:
        return Diagram(line=start + 1, kind=exe["lang"], text="\n".join(body)), end + 1
    if exe:
        return _code_cell(src, start, exe["lang"], body), end + 1
    return StaticCode(line=start + 1, info=info, text="\n".join(body)), end + 1


def _code_cell(src: _Lines, start: int, lang: str, body: list[str]) -> CodeCell:
    """An executable cell: leading '#|' option lines, then code with includes resolved."""
    n_opts = next((k for k, ln in enumerate(body) if not OPTION_LINE.match(ln)), len(body))
    opt_text = "\n".join(OPTION_LINE.match(ln)["yaml"] for ln in body[:n_opts])
    where = src.where(start)
    try:
        options = yaml.safe_load(opt_text) or {} if opt_text.strip() else {}
    except yaml.YAMLError as exc:
        raise CourseError(
            f"cell options ('#|' lines) are not valid YAML: {getattr(exc, 'problem', exc)}", where
        ) from None
    if not isinstance(options, dict):
        raise CourseError("cell options ('#|' lines) must be 'key: value' lines", where)
    where = src.where(start, options.get("label"))
    validate(options, "cell-options.v1", where, "cell option")
    code = "\n".join(_include(src, start + 1 + n_opts + k, ln) for k, ln in enumerate(body[n_opts:])).strip("\n")
    if "course_defs" in options:
        code = take_definitions(code, options["course_defs"], where)
    return CodeCell(line=start + 1, lang=lang, options=options, source=code)


def _include(src: _Lines, index: int, line: str) -> str:
    """Replace a '{{< include path >}}' line by the file's text (path relative to the lesson)."""
    m = INCLUDE.match(line.strip())
    if not m:
        return line
    target = (src.path.parent / m["path"]).resolve()
    try:
        return target.read_text("utf-8").rstrip("\n")
    except OSError:
        raise CourseError(f"included file {m['path']} not found (looked at {target})", src.where(index)) from None


def parse_attr(text: str, where: Location) -> Attr:
    """Parse '{#id .class key="v"}' or a bare class name into Attr."""
    if not text.startswith("{"):
        return Attr(classes=(text,))
    inner = text[1:-1].strip()
    try:
        tokens = shlex.split(inner, posix=True)
    except ValueError as exc:
        raise CourseError(
            f'div attributes {text} are malformed ({exc}); expected {{#id .class key="value"}}', where
        ) from None
    ident, classes, pairs = "", [], []
    for tok in tokens:
        if tok.startswith("#"):
            ident = tok[1:]
        elif tok.startswith("."):
            classes.append(tok[1:])
        elif "=" in tok:
            key, _, value = tok.partition("=")
            pairs.append((key, value))
        else:
            raise CourseError(f"div attribute {tok!r} is not #id, .class or key=value", where)
    return Attr(ident, tuple(classes), tuple(pairs))


def _check_labels(lesson: Lesson) -> None:
    """Labels are unique and free of Quarto's reserved prefixes where the course gives the cell a role; each
    solution solution-NAME has its exercise ex-NAME before it."""
    seen: dict[str, CodeCell] = {}
    for cell in lesson.cells():
        where = Location(lesson.path, cell.line, cell.label)
        if "label" in cell.options and cell.label in seen:
            raise CourseError(f"label {cell.label} is used twice (first at line {seen[cell.label].line})", where)
        seen[cell.label] = cell
        _check_reserved(cell, where)
        if cell.role == "exercise" and not cell.label.startswith(EXERCISE_PREFIX):
            raise CourseError(f"an exercise cell's label must start with '{EXERCISE_PREFIX}'", where)
        if cell.role == "solution":
            if not cell.label.startswith(SOLUTION_PREFIX):
                raise CourseError(f"a solution cell's label must start with '{SOLUTION_PREFIX}'", where)
            name = cell.label.removeprefix(SOLUTION_PREFIX)
            ex = seen.get(EXERCISE_PREFIX + name)
            if ex is None or ex.role != "exercise":
                raise CourseError(
                    f"solution cell without its exercise: expected an exercise cell "
                    f"labelled {EXERCISE_PREFIX}{name} before it",
                    where,
                )


def _check_reserved(cell: CodeCell, where: Location) -> None:
    """A cell with a course role (or a cell Quarto cannot make that kind of float of) must not carry a label
    Quarto reads as a cross-reference: `quarto render` would take it for a figure, theorem or solution block."""
    prefix = next((p for p in QUARTO_RESERVED_PREFIXES if cell.label.startswith(p)), None)
    if prefix is None or (cell.role is None and prefix in CELL_FLOAT_PREFIXES):
        return
    what = f"{'an' if cell.role == 'exercise' else 'a'} {cell.role} cell's" if cell.role else "a cell's"
    hint = (
        f"; label solutions {SOLUTION_PREFIX}NAME"
        if prefix == "sol-"
        else f"; label exercises {EXERCISE_PREFIX}NAME"
        if cell.role == "exercise"
        else ""
    )
    raise CourseError(
        f"{what} label {cell.label} starts with '{prefix}', which Quarto reserves for its "
        f"cross-references ({', '.join(QUARTO_RESERVED_PREFIXES)}){hint}",
        where,
    )
