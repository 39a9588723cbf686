"""The checks vocabulary: one line of Python per check, exact builtin types, numbers within a tolerance."""

from __future__ import annotations

from fractions import Fraction

import pytest

from course.grading.checks import Call, Check, CheckSyntaxError, Result, literal, matches, parse_check

CALL_A, CALL_B = Call("f", (1,)), Call("f", (2,))


@pytest.mark.parametrize(
    "check,results,passes",
    [
        (Check("equals", (CALL_A,), Fraction(20, 3)), {CALL_A: Result(6.666666666666667)}, True),
        (Check("equals", (CALL_A,), Fraction(20, 3)), {CALL_A: Result(6)}, False),
        (Check("equals", (CALL_A,), Fraction(1)), {CALL_A: Result(float("nan"))}, False),
        (Check("equals", (CALL_A,), 1), {CALL_A: Result(True)}, False),
        (Check("equals", (CALL_A,), Fraction(1)), {CALL_A: Result(problem="returned _Anything")}, False),
        (Check("difference", (CALL_A, CALL_B), Fraction(4)), {CALL_A: Result(10.0), CALL_B: Result(6)}, True),
        (Check("difference", (CALL_A, CALL_B), Fraction(4)), {CALL_A: Result("10"), CALL_B: Result(6)}, False),
        (Check("same", (CALL_A, CALL_B)), {CALL_A: Result(3.0), CALL_B: Result(3)}, True),
        (Check("same", (CALL_A, CALL_B)), {CALL_A: Result(3.0), CALL_B: Result(3.1)}, False),
        (Check("same", (CALL_A, CALL_B)), {CALL_A: Result((1, "a")), CALL_B: Result((1.0, "a"))}, True),
        (Check("equals", (CALL_A,), 100, rel_tol=0.1), {CALL_A: Result(95)}, True),
        (
            Check("raises", (CALL_A,), "ValueError"),
            {CALL_A: Result(problem="raised Bad", raised=("ValueError", "Exception"))},
            True,
        ),
        (
            Check("raises", (CALL_A,), "ValueError"),
            {CALL_A: Result(problem="raised TypeError", raised=("TypeError",))},
            False,
        ),
        (Check("raises", (CALL_A,), "ValueError"), {CALL_A: Result(None)}, False),
        (Check("equals", (CALL_A,), 1), {CALL_A: Result(problem="raised ValueError", raised=("ValueError",))}, False),
    ],
)
def test_check_verdicts(check, results, passes):
    assert (check.failure(results) is None) == passes


@pytest.mark.parametrize(
    "got,want,same",
    [
        ({"a": [1, (2, "x")]}, {"a": [1.0, (2, "x")]}, True),
        ({"a": [1, [2, "x"]]}, {"a": [1, (2, "x")]}, False),  # a list is not a tuple
        ({"a": 1, "b": 2}, {"a": 1}, False),
        (True, True, True),
        (1, True, False),
        (True, 1, False),  # a bool is a flag, not a number
        ("ZeRO", "ZeRO", True),
        (None, None, True),
        (None, 0, False),
    ],
)
def test_values_match_by_exact_builtin_type_and_value(got, want, same):
    assert matches(got, want) is same


@pytest.mark.parametrize(
    "text,kind,want",
    [
        ("f(7_000_000_000, 8, 1) == 38_500_000_000", "equals", 38_500_000_000),
        ("f(1_000_003, 3, 2) == 20_000_060 / 3", "equals", Fraction(20_000_060, 3)),
        ("f(1, accum=True) - f(1) == 4 * 10 / 8", "difference", 5),
        ("f(1, accum=True) - f(1) == 4 * 10 / 16", "difference", Fraction(5, 2)),
        ("f(1, 1) == f(1, 2) == f(1, 3)", "same", None),
        ("f('a') == {'k': (1, [2.5, None]), 'b': False}", "equals", {"k": (1, [2.5, None]), "b": False}),
        ("f() == -3", "equals", -3),
        ("f(-1, 8, stage=1) raises ValueError", "raises", "ValueError"),
        ("f('a raises b') raises KeyError", "raises", "KeyError"),
    ],
)
def test_a_check_is_one_line_of_python(text, kind, want):
    check = parse_check(text)
    assert check.kind == kind and check.want == want and type(check.want) is type(want)


@pytest.mark.parametrize(
    "text,message",
    [
        ("f(1) = 2", "not Python"),
        ("f(1) != 2", "expected `call(...) == value`"),
        ("f(x) == 2", "expected a literal value, got x"),
        ("g.f(1) == 2", "plain function name"),
        ("f(*a) == 2", "literal arguments"),
        ("f(1) - f(2) == 'a'", "expected a number after `==`"),
        ("f(1) == 1 / 0", "division by zero"),
        ("f(1) == {1, 2}", "set values are not supported"),
        ("2 == f(1)", "call of the student's function left of `==`"),
        ("f(1) raises Oops", "expected a built-in exception such as ValueError after `raises`, got Oops"),
        ("f(1) raises SystemExit", "expected a built-in exception such as ValueError after `raises`, got SystemExit"),
        ("f raises ValueError", "expected a call of the student's function left of `raises`"),
        ("f(x) raises ValueError", "expected a literal value, got x"),
    ],
)
def test_a_malformed_check_says_what_was_expected(text, message):
    with pytest.raises(
        CheckSyntaxError,
        match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*").replace(".", r"\.").replace("`", "`"),
    ):
        parse_check(text)


def test_calls_and_values_are_written_as_students_would_type_them():
    call = Call("zero_memory_per_gpu", (7_000_000_000, 8, 2), (("k", 16), ("fp32_grad_accum", True)))
    assert call.code() == "zero_memory_per_gpu(7_000_000_000, 8, 2, k=16, fp32_grad_accum=True)"
    assert literal(Fraction(7, 2)) == "3.5" and literal(Fraction(12)) == "12"
    assert literal({"a": (1,), "b": [True, None, "x"]}) == "{'a': (1,), 'b': [True, None, 'x']}"
    assert parse_check("f(1, k=2) - f(1) == 4").describe() == "f(1, k=2) - f(1) == 4"
    assert parse_check("f(-1,  k=2)  raises  ValueError").describe() == "f(-1, k=2) raises ValueError"


@pytest.mark.parametrize(
    "result, why",
    [
        (
            Result(problem="raised TypeError", raised=("TypeError", "Exception")),
            "raised TypeError, expected it to raise ValueError",
        ),
        (Result(2.0), "returned 2.0, expected it to raise ValueError"),
        (Result(problem="returned _Anything, not int"), "returned _Anything, not int, expected it to raise ValueError"),
    ],
)
def test_a_call_that_does_not_raise_says_what_it_did(result, why):
    assert Check("raises", (CALL_A,), "ValueError").failure({CALL_A: result}) == why
