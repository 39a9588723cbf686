"""Source of the notebook's grading cells: the read-only check helpers and one test cell per rubric code item.

The helpers accept only real int/float results and get int, float and type from literals ((0).__class__),
so objects that equal everything, float subclasses and monkeypatched builtins do not pass. Code inside the
student's kernel can still replace the helpers themselves; `course grade` re-checks outside the kernel.
"""

from __future__ import annotations

from course.assignment.cells import HIDDEN_BEGIN, HIDDEN_END, HIDDEN_FAILED
from course.assignment.spec import REL_TOL, Check, literal
from course.grading.rubric import CodeItem, format_points

HELPERS_ID = "course-checks"

HELPERS_SOURCE = f'''\
# 评分辅助（只读，请勿修改或删除）：下面的测试单元用它比较你的函数返回的数值。
# 只接受真正的 int 或 float（bool、子类和其他对象都不算），比较时不依赖可被改写的内置函数。
class _CourseChecks:
    _int = (0).__class__
    _float = (0.0).__class__
    _type = _int.__class__

    class {HIDDEN_FAILED}(AssertionError):
        """隐藏检查未通过（隐藏检查的数值不公开）。"""

    class _Hidden:
        def __enter__(self):
            return self

        def __exit__(self, kind, error, traceback):
            if kind is not None:
                raise _CourseChecks.{HIDDEN_FAILED}("隐藏检查未通过：请确认公式对其他 Ψ、dp、k 同样成立。") from None
            return False

    def number(self, value):
        kind = self._type(value)
        if kind is not self._int and kind is not self._float:
            raise AssertionError(f"应返回 int 或 float，实际得到 {{kind.__name__}}")
        return value

    def close(self, got, want):
        diff = self.number(got) - want
        scale = want if want > 1 else (-want if want < -1 else 1)
        return -{REL_TOL!r} * scale <= diff <= {REL_TOL!r} * scale

    def equals(self, got, want):
        if not self.close(got, want):
            raise AssertionError(f"期望 {{want!r}}，实际 {{got!r}}")

    def difference(self, first, second, want):
        got = self.number(first) - self.number(second)
        if not self.close(got, want):
            raise AssertionError(f"两者之差期望 {{want!r}}，实际 {{got!r}}")

    def same(self, *values):
        for value in values[1:]:
            if not self.close(value, self.number(values[0])):
                raise AssertionError(f"应彼此相等，实际 {{[self.number(v) for v in values]!r}}")

    def hidden(self):
        return self._Hidden()


_course = _CourseChecks()'''


def check_line(check: Check) -> str:
    """One check as a call of the helpers."""
    calls = [c.code() for c in check.calls]
    if check.kind == "same":
        return f"_course.same({', '.join(calls)})"
    return f"_course.{check.kind}({', '.join(calls)}, {literal(check.want)})"


def test_cell_source(item: CodeItem, checks: tuple[Check, ...], number: int, total: int) -> str:
    """Visible checks in the open, hidden ones between nbgrader's markers, then a success line."""
    lines = [f"# 测试 {number}/{total}：{item.title}（{format_points(item.points)} 分）。{item.description}",
             "# 可见检查用课文中的数值；评分时还会用其他 Ψ、dp、k 运行隐藏检查。"]
    lines += [check_line(c) for c in checks if not c.hidden]
    hidden = [check_line(c) for c in checks if c.hidden]
    if hidden:
        lines += [HIDDEN_BEGIN, "with _course.hidden():", *("    " + line for line in hidden), HIDDEN_END]
    lines.append(f'print("✓ {item.title}：检查通过")')
    return "\n".join(lines)
