"""The autograded answer cell: the solution with a BEGIN/END SOLUTION region wherever the exercise has a blank.

Exercise and solution are aligned line by line; each run of lines that differs becomes one region whose
stub is the exercise's own line(s), so the released cell is exactly the exercise the lesson shows. Every
exercise line in such a run must hold a blank: anything else is a slip between exercise and solution.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from course.errors import CourseError, Location
from course.lesson.model import ExercisePair, Lesson
from course.lesson.take_defs import top_level_names

BLANK = "______"
BEGIN = "### BEGIN SOLUTION"  # nbgrader's ClearSolutions delimiters
END = "### END SOLUTION"


@dataclass(frozen=True)
class AnswerCell:
    """The answer cell's source for nbgrader's source notebook and the stub of each solution region."""

    source: str
    stubs: tuple[str, ...]


def answer_cell(lesson: Lesson, pair: ExercisePair) -> AnswerCell:
    """Wrap every differing run of lines in solution markers; every run must replace a blank."""
    extra = _extra_names(pair)
    if extra:
        raise CourseError(
            f"expected the solution to fill the exercise's blanks only, but {how_to_fix(pair)}",
            Location(lesson.path, pair.exercise.line, pair.exercise.label),
        )
    exercise, solution = pair.exercise.source.splitlines(), pair.solution.source.splitlines()
    matcher = difflib.SequenceMatcher(a=exercise, b=solution, autojunk=False)
    lines: list[str] = []
    stubs: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            lines += solution[j1:j2]
            continue
        stub = exercise[i1:i2]
        plain = next((i1 + n for n, line in enumerate(stub) if BLANK not in line), None) if stub else i1
        if plain is not None:
            where = Location(lesson.path, pair.exercise.line, pair.exercise.label)
            shown = "\n".join(solution[j1:j2] or ["(nothing)"])
            raise CourseError(
                f"exercise line {plain + 1} differs from the solution outside a blank {BLANK}: "
                f"expected the solution to fill blanks only; solution has:\n{shown}\n"
                f"{how_to_fix(pair)}",
                where,
            )
        indent = re.match(r"[ \t]*", (solution[j1:j2] or stub)[0]).group(0)
        lines += [indent + BEGIN, *solution[j1:j2], indent + END]
        stubs.append("\n".join(stub))
    if not stubs:
        raise CourseError(
            f"the exercise has no blank {BLANK}; expected at least one line for students to complete",
            Location(lesson.path, pair.exercise.line, pair.exercise.label),
        )
    return AnswerCell("\n".join(lines), tuple(stubs))


def _extra_names(pair: ExercisePair) -> list[str]:
    """Top-level names the solution binds and the exercise does not (another exercise's share of a module)."""
    ours = top_level_names(pair.exercise.source)
    return [name for name in top_level_names(pair.solution.source) if name not in ours]


def how_to_fix(pair: ExercisePair) -> str:
    """The fix for a mismatch: name the definitions to take from a shared module, or align the lines."""
    label = pair.solution.label
    extra = _extra_names(pair)
    if extra and "course_defs" not in pair.solution.options:
        ours = top_level_names(pair.exercise.source)
        return (
            f"{label} defines {', '.join(extra)}, which {pair.exercise.label} does not. Fix: if one "
            f"solutions module backs several exercises, keep its whole-file include and add the line "
            f"`#| course_defs: [{', '.join(ours)}]` to {label}, so it takes only this exercise's definitions "
            f"(each other exercise's solution cell names its own)."
        )
    if extra:
        return (
            f"{label} defines {', '.join(extra)}, which {pair.exercise.label} does not. Fix: leave them out of "
            f"the course_defs of {label}, or add them to {pair.exercise.label}."
        )
    return (
        f"Fix: make this line of {pair.exercise.label} the same as in {label} (its solutions module), or put "
        f"{BLANK} where students write."
    )
