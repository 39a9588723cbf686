"""What an assignment checks: calls into the student's functions and the numbers they must return.

One description serves three places: the test cells inside the notebook (visible checks in the open, hidden
checks between nbgrader's hidden-test markers), `course grade`'s re-check outside the student's kernel, and
`course check` for students. Expected values are exact fractions; results match within a relative 1e-9.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

REL_TOL = 1e-9
KINDS = ("equals", "difference", "same")


@dataclass(frozen=True)
class Call:
    """One call of a student's function with literal arguments."""

    func: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...] = ()

    def code(self) -> str:
        """The call as Python source, big numbers written with underscores."""
        parts = [literal(a) for a in self.args] + [f"{k}={literal(v)}" for k, v in self.kwargs]
        return f"{self.func}({', '.join(parts)})"

    def payload(self) -> list:
        """The call as JSON for the re-check process."""
        return [self.func, list(self.args), dict(self.kwargs)]


@dataclass(frozen=True)
class Check:
    """equals: one call returns WANT; difference: first minus second is WANT; same: all calls agree."""

    kind: str
    calls: tuple[Call, ...]
    want: Fraction | None = None
    hidden: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS or (self.want is None) != (self.kind == "same"):
            raise ValueError(f"malformed check {self.kind} {self.calls} want={self.want}")

    def describe(self) -> str:
        """The check as one readable line (for instructors and for students' visible checks)."""
        calls = [c.code() for c in self.calls]
        if self.kind == "equals":
            return f"{calls[0]} == {literal(self.want)}"
        if self.kind == "difference":
            return f"{calls[0]} − {calls[1]} == {literal(self.want)}"
        return " == ".join(calls)

    def failure(self, results: Mapping[Call, "Result"]) -> str | None:
        """None when the results satisfy the check, else why not."""
        got = [results[c] for c in self.calls]
        bad = next((r for r in got if r.number is None), None)
        if bad is not None:
            return bad.problem
        values = [r.number for r in got]
        if self.kind == "equals":
            return None if close(values[0], self.want) else f"got {values[0]!r}"
        if self.kind == "difference":
            diff = values[0] - values[1]
            return None if close(diff, self.want) else f"difference {diff!r}"
        return None if all(close(v, values[0]) for v in values[1:]) else f"got {values!r}"


@dataclass(frozen=True)
class Result:
    """What one call returned in the re-check: a plain number, or the problem instead."""

    number: int | float | None = None
    problem: str = ""


@dataclass(frozen=True)
class AssignmentSpec:
    """An exercise graded by checks: each rubric code item id maps to its checks."""

    lesson: str
    exercise: str
    items: Mapping[str, tuple[Check, ...]]

    def calls(self, *, hidden: bool = True) -> list[Call]:
        """Every distinct call the checks make, in order (visible ones only unless HIDDEN)."""
        seen: dict[Call, None] = {}
        for checks in self.items.values():
            for check in checks:
                if hidden or not check.hidden:
                    seen.update(dict.fromkeys(check.calls))
        return list(seen)


def close(got: int | float, want: int | float | Fraction) -> bool:
    """Equal within the relative tolerance (absolute near zero), the same rule the notebook applies."""
    scale = max(abs(want), 1)
    return abs(got - want) <= REL_TOL * scale


def literal(value: Any) -> str:
    """Python source for a number or flag: 7_000_000_000, 3.5, True; a non-integer fraction as a float."""
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, Fraction):
        value = value.numerator if value.denominator == 1 else float(value)
    if isinstance(value, int):
        return f"{value:_}"
    return repr(value)


def assignment_spec(lesson: str) -> AssignmentSpec | None:
    """The assignment of a lesson, or None when the lesson has no graded exercise."""
    from course.assignment import lesson05

    return {lesson05.SPEC.lesson: lesson05.SPEC}.get(lesson)
