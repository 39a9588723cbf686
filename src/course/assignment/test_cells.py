"""Source of the notebook's grading cells: the read-only check helpers and one test cell per rubric code item.

The helpers accept only real builtin values (int/float for numbers; bool, str, None, list, tuple, dict as
themselves) and get every type from literals ((0).__class__), so objects that equal everything, subclasses and
monkeypatched builtins do not pass; a `raises` check looks its exception up among the builtins as they were when
the helpers ran. Code inside the student's kernel can still replace the helpers
themselves; `course grade` re-checks outside the kernel.
"""

from __future__ import annotations

import json

from course.grading.cells import HIDDEN_BEGIN, HIDDEN_END, HIDDEN_FAILED
from course.grading.checks import REL_TOL, Check, literal
from course.grading.rubric import CodeItem, format_points, render_text

HELPERS_ID = "course-checks"

HELPERS_SOURCE = f'''\
# 评分辅助（只读，请勿修改或删除）：下面的测试单元用它比较你的函数返回的值。
# 数值只接受真正的 int 或 float（bool、子类和其他对象都不算）；字符串、布尔值、列表、元组、字典按类型逐项比较。
class _CourseChecks:
    _int = (0).__class__
    _float = (0.0).__class__
    _type = _int.__class__
    _same_kind = (True.__class__, "".__class__, None.__class__, [].__class__, ().__class__, {{}}.__class__)
    _errors = dict(vars(__import__("builtins")))

    class {HIDDEN_FAILED}(AssertionError):
        """隐藏检查未通过（隐藏检查的数值不公开）。"""

    class _Hidden:
        def __enter__(self):
            return self

        def __exit__(self, kind, error, traceback):
            if kind is not None:
                raise _CourseChecks.{HIDDEN_FAILED}("隐藏检查未通过：请确认你的函数对其他输入同样成立。") from None
            return False

    def number(self, value):
        kind = self._type(value)
        if kind is not self._int and kind is not self._float:
            raise AssertionError(f"应返回 int 或 float，实际得到 {{kind.__name__}}")
        return value

    def close(self, got, want, tol):
        diff = self.number(got) - want
        scale = want if want > 1 else (-want if want < -1 else 1)
        return -tol * scale <= diff <= tol * scale

    def match(self, got, want, tol):
        kind = self._type(want)
        if kind is self._int or kind is self._float:
            return self.close(got, want, tol)
        if self._type(got) is not kind or kind not in self._same_kind:
            raise AssertionError(f"应返回 {{kind.__name__}}，实际得到 {{self._type(got).__name__}}")
        if kind is [].__class__ or kind is ().__class__:
            return len(got) == len(want) and all(self.match(g, w, tol) for g, w in zip(got, want))
        if kind is {{}}.__class__:
            return got.keys() == want.keys() and all(self.match(got[k], want[k], tol) for k in want)
        return got == want

    def equals(self, got, want, tol={REL_TOL!r}):
        if not self.match(got, want, tol):
            raise AssertionError(f"期望 {{want!r}}，实际 {{got!r}}")

    def difference(self, first, second, want, tol={REL_TOL!r}):
        got = self.number(first) - self.number(second)
        if not self.close(got, want, tol):
            raise AssertionError(f"两者之差期望 {{want!r}}，实际 {{got!r}}")

    def same(self, *values, tol={REL_TOL!r}):
        for value in values[1:]:
            if not self.match(value, values[0], tol):
                raise AssertionError(f"应彼此相等，实际 {{list(values)!r}}")

    def raises(self, name, call):
        try:
            value = call()
        except self._errors[name]:
            return
        except self._errors["Exception"] as error:
            raise AssertionError(f"应抛出 {{name}}，实际抛出 {{self._type(error).__name__}}") from None
        raise AssertionError(f"应抛出 {{name}}，实际返回 {{value!r}}")

    def hidden(self):
        return self._Hidden()


_course = _CourseChecks()'''


def check_line(check: Check) -> str:
    """One check as a call of the helpers."""
    calls = [c.code() for c in check.calls]
    tol = f", tol={check.rel_tol!r}" if check.rel_tol != REL_TOL else ""
    if check.kind == "same":
        return f"_course.same({', '.join(calls)}{tol})"
    if check.kind == "raises":
        return f"_course.raises({check.want!r}, lambda: {calls[0]})"
    return f"_course.{check.kind}({', '.join(calls)}, {literal(check.want)}{tol})"


def test_cell_source(item: CodeItem, checks: tuple[Check, ...], number: int, total: int) -> str:
    """Visible checks in the open, hidden ones between nbgrader's markers, then a success line."""
    note = render_text(item.description, "line") if item.for_students else ""
    lines = [
        f"# 测试 {number}/{total}：{render_text(item.title, 'line')}（{format_points(item.points)} 分）。{note}",
        "# 可见检查用课文中的数值；评分时还会用其他输入运行隐藏检查。",
    ]
    lines += [check_line(c) for c in checks if not c.hidden]
    hidden = [check_line(c) for c in checks if c.hidden]
    if hidden:
        lines += [HIDDEN_BEGIN, "with _course.hidden():", *("    " + line for line in hidden), HIDDEN_END]
    lines.append(f"print({json.dumps('✓ ' + render_text(item.title, 'line') + '：检查通过', ensure_ascii=False)})")
    return "\n".join(lines)
