"""What an assignment checks, as data: calls into the student's functions and the values they must return.

A lesson declares its checks in lessons/lessonNN/checks.yml (read by course.grading.load_checks). One
description serves three places: the test cells inside the notebook (visible checks in the open, hidden checks
between nbgrader's hidden-test markers), `course grade`'s re-check outside the student's kernel, and
`course check` for students. Each check is one line a student can read as Python:

    zero_memory_per_gpu(7_000_000_000, 8, 1) == 38_500_000_000        equals: one call returns a value
    f(10, accum=True) - f(10) == 4 * 10 / 8                           difference: first minus second
    f(1, 1) == f(1, 2) == f(1, 3)                                     same: all calls agree
    f(-1, 8, 1) raises ValueError                                     raises: the call raises that built-in
                                                                      exception (or a subclass of it)

Values are numbers (matched within a relative tolerance, absolute near zero; exact fractions allowed on the
right, e.g. 16 * 1_000_003 / 3), strings, booleans, None, and lists / tuples / dicts of those. Only real builtin
types count: a bool is not a number, a tuple is not a list, and subclasses are refused by the re-check.
A lesson also declares known wrong answers (Misconception): checks that hold when a student made that mistake.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

REL_TOL = 1e-9
KINDS = ("equals", "difference", "same", "raises")
RAISES = re.compile(r"^(?P<call>.+)\s+raises\s+(?P<error>[A-Za-z_]\w*)$", re.S)
NUMBER_OPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
}


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

    def __hash__(self) -> int:
        # arguments may be lists or dicts; the call's source text identifies it
        return hash(self.code())

    def payload(self) -> list:
        """The call as JSON for the re-check process, each argument tagged with its type (a tuple stays a tuple)."""
        return [self.func, [tagged(a) for a in self.args], {k: tagged(v) for k, v in self.kwargs}]


@dataclass(frozen=True)
class Result:
    """What one call returned in the re-check: a value built from real builtin types, or the problem instead.

    RAISED: when the call raised, every built-in exception class the exception is an instance of (by identity in
    the re-check, so a student's own class named ValueError is not ValueError); PROBLEM names its class.
    """

    value: Any = None
    problem: str = ""
    raised: tuple[str, ...] = ()


@dataclass(frozen=True)
class Check:
    """equals: one call returns WANT; difference: first minus second is WANT; same: all calls agree;
    raises: the call raises the built-in exception named WANT."""

    kind: str
    calls: tuple[Call, ...]
    want: Any = None
    hidden: bool = False
    rel_tol: float = REL_TOL

    def __post_init__(self) -> None:
        if (
            self.kind not in KINDS
            or (self.want is None and self.kind == "difference")
            or (self.kind == "raises" and not isinstance(self.want, str))
        ):
            raise ValueError(f"malformed check {self.kind} {self.calls} want={self.want}")

    def describe(self) -> str:
        """The check as the one line of Python it was written as."""
        calls = [c.code() for c in self.calls]
        if self.kind == "equals":
            return f"{calls[0]} == {literal(self.want)}"
        if self.kind == "difference":
            return f"{calls[0]} - {calls[1]} == {literal(self.want)}"
        if self.kind == "raises":
            return f"{calls[0]} raises {self.want}"
        return " == ".join(calls)

    def failure(self, results: Mapping[Call, Result]) -> str | None:
        """None when the results satisfy the check, else why not."""
        got = [results[c] for c in self.calls]
        if self.kind == "raises":
            return _raise_failure(got[0], self.want)
        bad = next((r for r in got if r.problem), None)
        if bad is not None:
            return bad.problem
        values = [r.value for r in got]
        if self.kind == "equals":
            return None if matches(values[0], self.want, self.rel_tol) else f"got {values[0]!r}"
        if self.kind == "difference":
            if not all(is_number(v) for v in values):
                return f"got {values!r}, expected two numbers"
            diff = values[0] - values[1]
            return None if close(diff, self.want, self.rel_tol) else f"difference {diff!r}"
        return None if all(matches(v, values[0], self.rel_tol) for v in values[1:]) else f"got {values!r}"


def _raise_failure(result: Result, error: str) -> str | None:
    """None when the call raised ERROR (or a subclass), else what it did instead."""
    if error in result.raised:
        return None
    if result.problem:
        return f"{result.problem}, expected it to raise {error}"
    return f"returned {result.value!r}, expected it to raise {error}"


@dataclass(frozen=True)
class Misconception:
    """A known wrong answer: when every one of its checks holds, the student made this mistake."""

    id: str
    item: str  # the code item it explains
    name: str  # short, student-facing
    explanation: str  # student-facing: what is wrong and why; never a hidden value
    evidence: str  # grader-facing: which formula the wrong values match
    checks: tuple[Check, ...]
    veto: str | None = None  # the rubric veto it is evidence of (a hint, never a decision)
    section: str | None = None  # the heading of the lesson section that teaches it right (item analysis links it)

    def holds(self, results: Mapping[Call, Result]) -> bool:
        """Whether the student's results show this mistake."""
        return all(c.failure(results) is None for c in self.checks)


@dataclass(frozen=True)
class Item:
    """One rubric code item: the exercise it grades and its checks, visible ones first."""

    id: str
    exercise: str
    checks: tuple[Check, ...]


@dataclass(frozen=True)
class AssignmentSpec:
    """A lesson's graded exercises: its code items (in rubric order) and its known wrong answers."""

    lesson: str
    items: Mapping[str, Item]
    misconceptions: tuple[Misconception, ...] = ()
    source: Any = field(default=None, compare=False)  # the checks.yml document, for messages with lines

    @property
    def exercises(self) -> list[str]:
        """Labels of the exercises the items grade, in order of first use."""
        return list(dict.fromkeys(item.exercise for item in self.items.values()))

    def checks(self, item: str, *, hidden: bool = True) -> list[Check]:
        """One item's checks (visible ones only unless HIDDEN)."""
        return [c for c in self.items[item].checks if hidden or not c.hidden]

    def calls(self, *, hidden: bool = True) -> list[Call]:
        """Every distinct call the checks and the misconceptions make, in order."""
        seen: dict[Call, None] = {}
        for item in self.items:
            for check in self.checks(item, hidden=hidden):
                seen.update(dict.fromkeys(check.calls))
        for wrong in self.misconceptions:
            for check in wrong.checks:
                seen.update(dict.fromkeys(check.calls))
        return list(seen)

    def diagnose(self, item: str, results: Mapping[Call, Result]) -> list[Misconception]:
        """The known wrong answers of ITEM that the results show."""
        return [m for m in self.misconceptions if m.item == item and m.holds(results)]


# ---------------------------------------------------------------- values


def is_number(value: Any) -> bool:
    """A real int, float or exact fraction; a bool is a flag, not a number."""
    return type(value) in (int, float, Fraction)


def close(got: Any, want: Any, rel_tol: float = REL_TOL) -> bool:
    """Equal within the relative tolerance (absolute near zero), the same rule the notebook applies."""
    if not (is_number(got) and is_number(want)):
        return False
    try:
        return abs(got - want) <= rel_tol * max(abs(want), 1)
    except (OverflowError, ValueError):
        return False


def matches(got: Any, want: Any, rel_tol: float = REL_TOL) -> bool:
    """GOT has WANT's exact builtin type (any number for a number) and value, recursively."""
    if is_number(want):
        return close(got, want, rel_tol)
    if type(got) is not type(want):
        return False
    if type(want) in (list, tuple):
        return len(got) == len(want) and all(matches(g, w, rel_tol) for g, w in zip(got, want))
    if type(want) is dict:
        return got.keys() == want.keys() and all(matches(got[k], want[k], rel_tol) for k in want)
    return got == want


def literal(value: Any) -> str:
    """Python source for a value: 7_000_000_000, 3.5, 'text', (1, [2, 3]); a non-integer fraction as a float."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, Fraction):
        value = value.numerator if value.denominator == 1 else float(value)
    if isinstance(value, int):
        return f"{value:_}"
    if isinstance(value, list):
        return f"[{', '.join(map(literal, value))}]"
    if isinstance(value, tuple):
        return f"({literal(value[0])},)" if len(value) == 1 else f"({', '.join(map(literal, value))})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def tagged(value: Any) -> list:
    """A literal as [type name, payload], the form the re-check sends values in both directions."""
    if isinstance(value, Fraction):
        value = value.numerator if value.denominator == 1 else float(value)
    name = {
        bool: "bool",
        int: "int",
        float: "float",
        str: "str",
        type(None): "none",
        list: "list",
        tuple: "tuple",
        dict: "dict",
    }[type(value)]
    if name in ("list", "tuple"):
        return [name, [tagged(v) for v in value]]
    if name == "dict":
        return [name, [[tagged(k), tagged(v)] for k, v in value.items()]]
    return [name, value]


# ---------------------------------------------------------------- reading one check line


class CheckSyntaxError(ValueError):
    """A check line that is not one of the four forms."""


FORMS = (
    "expected `call(...) == value`, `call(...) - call(...) == number`, `call(...) == call(...) == …` or "
    "`call(...) raises ValueError`"
)


def parse_check(text: str, *, hidden: bool = False, rel_tol: float = REL_TOL) -> Check:
    """'f(1) == 2', 'f(1) - f(2) == 3', 'f(1) == f(2) == …' or 'f(-1) raises ValueError' as a Check."""
    if m := RAISES.match(text.strip()):
        return Check("raises", (_raising_call(m["call"]),), _builtin_error(m["error"]), hidden, rel_tol)
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise CheckSyntaxError(f"not Python: {exc.msg}") from None
    if not isinstance(tree, ast.Compare) or not all(isinstance(op, ast.Eq) for op in tree.ops):
        raise CheckSyntaxError(FORMS)
    parts = [tree.left, *tree.comparators]
    if all(isinstance(p, ast.Call) for p in parts):
        return Check("same", tuple(map(_call, parts)), None, hidden, rel_tol)
    if len(parts) != 2:
        raise CheckSyntaxError("expected one `==` between the calls and the value")
    left, right = parts
    difference = (
        isinstance(left, ast.BinOp)
        and isinstance(left.op, ast.Sub)
        and isinstance(left.left, ast.Call)
        and isinstance(left.right, ast.Call)
    )
    if not (difference or isinstance(left, ast.Call)):
        raise CheckSyntaxError("expected a call of the student's function left of `==`")
    want = value_of(right)
    if not difference:
        return Check("equals", (_call(left),), want, hidden, rel_tol)
    if not is_number(want):
        raise CheckSyntaxError(f"expected a number after `==` for a difference, got {literal(want)}")
    return Check("difference", (_call(left.left), _call(left.right)), want, hidden, rel_tol)


def _raising_call(text: str) -> Call:
    """The call left of `raises`."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise CheckSyntaxError(f"not Python left of `raises`: {exc.msg}") from None
    if not isinstance(node, ast.Call):
        raise CheckSyntaxError("expected a call of the student's function left of `raises`")
    return _call(node)


def _builtin_error(name: str) -> str:
    """A built-in exception class name (ValueError, TypeError, ZeroDivisionError…): the same in every process."""
    error = getattr(builtins, name, None)
    if not (isinstance(error, type) and issubclass(error, Exception)):
        raise CheckSyntaxError(f"expected a built-in exception such as ValueError after `raises`, got {name}")
    return name


def _call(node: ast.Call) -> Call:
    """A call with literal arguments only."""
    if not isinstance(node.func, ast.Name):
        raise CheckSyntaxError(f"expected a plain function name, got {ast.unparse(node.func)}")
    if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
        raise CheckSyntaxError("expected literal arguments, not *args or **kwargs")
    return Call(
        node.func.id, tuple(value_of(a) for a in node.args), tuple((k.arg, value_of(k.value)) for k in node.keywords)
    )


def value_of(node: ast.AST) -> Any:
    """A literal value; +, −, × and ÷ of numbers are computed exactly (16 * 1_000_003 / 3 stays a fraction)."""
    if isinstance(node, ast.BinOp) and type(node.op) in NUMBER_OPS:
        a, b = _exact(value_of(node.left)), _exact(value_of(node.right))
        if not (is_number(a) and is_number(b)):
            raise CheckSyntaxError(f"arithmetic only on numbers: {ast.unparse(node)}")
        try:
            result = NUMBER_OPS[type(node.op)](a, b)
        except ZeroDivisionError:
            raise CheckSyntaxError(f"division by zero: {ast.unparse(node)}") from None
        return result.numerator if isinstance(result, Fraction) and result.denominator == 1 else result
    if isinstance(node, ast.Dict):
        return {value_of(k): value_of(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [value_of(e) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError):
        raise CheckSyntaxError(f"expected a literal value, got {ast.unparse(node)}") from None
    if isinstance(value, (complex, bytes, set, frozenset)):
        raise CheckSyntaxError(f"{type(value).__name__} values are not supported: {ast.unparse(node)}")
    return value


def _exact(value: Any) -> Any:
    """Numbers as exact fractions for arithmetic."""
    return Fraction(value) if is_number(value) and not isinstance(value, bool) else value
