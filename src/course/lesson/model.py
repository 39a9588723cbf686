"""The parsed lesson: typed blocks that every later build step transforms, never re-parses."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Attr:
    """Pandoc-style attributes of a fenced div: {#id .class key="value"}."""

    ident: str = ""
    classes: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str], ...] = ()

    def get(self, key: str, default: str | None = None) -> str | None:
        """Look up one key="value" attribute."""
        return dict(self.pairs).get(key, default)

    def render(self) -> str:
        """Write the attributes back in commonmark_x syntax."""
        parts = [f"#{self.ident}"] if self.ident else []
        parts += [f".{c}" for c in self.classes]
        parts += ['{}="{}"'.format(k, v.replace('"', '\\"')) for k, v in self.pairs]
        return "{" + " ".join(parts) + "}"


@dataclass(frozen=True)
class Markdown:
    """Prose between structural blocks, kept as the author wrote it."""

    line: int
    text: str


@dataclass(frozen=True)
class StaticCode:
    """A fenced code block that is shown, never run (```python, ```text)."""

    line: int
    info: str
    text: str


@dataclass(frozen=True)
class Diagram:
    """A ```{mermaid} block, drawn in the browser."""

    line: int
    kind: str
    text: str


@dataclass(frozen=True)
class CodeCell:
    """An executable ```{python} cell with its #| options."""

    line: int
    lang: str
    options: Mapping[str, Any]
    source: str

    @property
    def label(self) -> str:
        """The cell's id for messages and pairing; falls back to its line."""
        return self.options.get("label") or f"line-{self.line}"

    @property
    def role(self) -> str | None:
        """'exercise', 'solution' or None for an ordinary cell."""
        return self.options.get("course_role")

    @property
    def evaluated(self) -> bool:
        """Whether the build runs this cell."""
        return self.options.get("eval", True)


@dataclass(frozen=True)
class Div:
    """A fenced div (::: {...}) such as a callout or a profile-only block."""

    line: int
    attr: Attr
    children: tuple[Block, ...]


Block = Markdown | StaticCode | Diagram | CodeCell | Div


@dataclass(frozen=True)
class Lesson:
    """One lesson source, parsed: front matter plus a tree of blocks."""

    path: Path
    front: Mapping[str, Any]
    blocks: tuple[Block, ...]
    variant: str | None = None

    @property
    def title(self) -> str:
        """The title from the front matter."""
        return self.front["title"]

    @property
    def number(self) -> int:
        """The lesson's number from the front matter (its place in the course)."""
        return self.front["lesson"]

    @property
    def prerequisites(self) -> tuple[int, ...]:
        """The numbers of the lessons to take first (front matter `prerequisites`), as the index lists them."""
        return tuple(self.front.get("prerequisites", ()))

    @property
    def stem(self) -> str:
        """File stem, e.g. lesson05: names the page and the notebook."""
        return self.path.stem

    def cells(self) -> Iterator[CodeCell]:
        """All executable cells in document order."""
        return (b for b in walk(self.blocks) if isinstance(b, CodeCell))

    def cell(self, label: str) -> CodeCell:
        """The cell with this label (KeyError if absent)."""
        for c in self.cells():
            if c.label == label:
                return c
        raise KeyError(label)

    def with_blocks(self, blocks: tuple[Block, ...], **changes: Any) -> Lesson:
        """A copy with other blocks (steps never mutate a lesson)."""
        return replace(self, blocks=blocks, **changes)


def walk(blocks: tuple[Block, ...]) -> Iterator[Block]:
    """Every block, depth first, divs before their children."""
    for b in blocks:
        yield b
        if isinstance(b, Div):
            yield from walk(b.children)


EXERCISE_PREFIX = "ex-"
# Not `sol-`: Quarto reserves it (with the others below) for its cross-reference kinds, and takes a cell so
# labelled that draws a figure for a Solution block, which fails its render.
SOLUTION_PREFIX = "solution-"
QUARTO_RESERVED_PREFIXES = (
    "fig-",
    "tbl-",
    "lst-",
    "thm-",
    "lem-",
    "cor-",
    "prp-",
    "cnj-",
    "def-",
    "exm-",
    "exr-",
    "sol-",
    "rem-",
    "eq-",
    "sec-",
)


def solution_label(exercise_label: str) -> str:
    """The label of the solution that pairs with an exercise labelled ex-NAME: solution-NAME."""
    return SOLUTION_PREFIX + exercise_label.removeprefix(EXERCISE_PREFIX)


@dataclass(frozen=True)
class ExercisePair:
    """An exercise cell and its solution, paired by label (ex-NAME / solution-NAME)."""

    name: str
    exercise: CodeCell
    solution: CodeCell


def exercise_pairs(lesson: Lesson) -> list[ExercisePair]:
    """Exercises that have a solution in this lesson (the parser guarantees the reverse)."""
    cells = {c.label: c for c in lesson.cells()}
    return [
        ExercisePair(c.label.removeprefix(EXERCISE_PREFIX), c, cells[solution_label(c.label)])
        for c in cells.values()
        if c.role == "exercise" and solution_label(c.label) in cells
    ]
