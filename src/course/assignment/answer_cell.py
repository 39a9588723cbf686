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
            raise CourseError(f"exercise line {plain + 1} differs from the solution outside a blank {BLANK}: "
                              f"expected the solution to fill blanks only; solution has:\n{shown}", where)
        indent = re.match(r"[ \t]*", (solution[j1:j2] or stub)[0]).group(0)
        lines += [indent + BEGIN, *solution[j1:j2], indent + END]
        stubs.append("\n".join(stub))
    if not stubs:
        raise CourseError(f"the exercise has no blank {BLANK}; expected at least one line for students to complete",
                          Location(lesson.path, pair.exercise.line, pair.exercise.label))
    return AnswerCell("\n".join(lines), tuple(stubs))
