"""The lesson rubric: the committed standard, the text the lesson shows, and located errors for bad files."""

from __future__ import annotations

import contextlib
import html
import io
import os
import re
from pathlib import Path

import pytest

from course.errors import CourseError
from course.grading.rubric import (
    code_grade_id,
    key_points_markdown,
    load_rubric,
    question_grade_id,
    render_text,
    standard_markdown,
)
from course.lesson.model import CodeCell, Markdown
from course.lesson.parse_qmd import parse_lesson
from course.tools.pandoc import run_pandoc

ROOT = Path(__file__).resolve().parents[2]
RUBRIC = ROOT / "autograder" / "rubrics" / "lesson05.yml"
LESSON = ROOT / "lessons" / "lesson05.qmd"

# The seed lesson's 检查与通过标准 plus each code item's points, as the page shows it; the comm-volume veto names only
# a wrong origin of 2Ψ/3Ψ, not a unit slip, so it no longer repeats Q2/Q3's 0-point criteria (lesson05/departures.yml).
STANDARD = """\
总分 10 分：代码正确 4 分（三档公式 1 分、FP32 累积分支 1 分、通信量 1 分、交叉验证 1 分）、三题各 2 分、通过线 8 分。

一票否决项：

- 把 ZeRO 各档的分片对象搞错（如 ZeRO-2 分片了参数）。
- 说 ZeRO-3 激活也被分片。
- 把每步通信量的来源说错：ZeRO-1/2 的 2Ψ 不是 reduce-scatter 加 all-gather，或 ZeRO-3 的 3Ψ 不是两次参数 all-gather 加一次梯度 reduce-scatter（如认为 ZeRO-1/2 比朴素 DP 通信更多，或 ZeRO-3 不需要反向那次 all-gather）。只是把数值个数写成字节数这类单位换算，不算。
- 认为 ZeRO-3 的 N_d→∞ 可以把总显存（含激活与运行时）降到任意低。
"""  # noqa: E501


def test_committed_rubric_is_the_seed_standard():
    rubric = load_rubric(RUBRIC)
    assert (rubric.lesson, rubric.total, rubric.pass_line) == ("lesson05", 10, 8)
    assert [(c.id, c.points) for c in rubric.code_items] == [
        ("formulas", 1),
        ("fp32-accum", 1),
        ("comm-volume", 1),
        ("dp1-cross-check", 1),
    ]
    assert [(q.id, q.points) for q in rubric.questions] == [("Q1", 2), ("Q2", 2), ("Q3", 2)]
    assert sum(c.points for c in rubric.code_items) + sum(q.points for q in rubric.questions) == rubric.total
    assert [v.id for v in rubric.vetoes] == ["shard-target", "activation-shard", "comm-volume", "unbounded-scaling"]
    assert all(q.key_points and q.partial_credit for q in rubric.questions)


def test_grade_ids_name_the_nbgrader_cells():
    rubric = load_rubric(RUBRIC)
    assert code_grade_id("formulas") == "test-formulas" and question_grade_id("Q1") == "answer-Q1"
    assert rubric.grade_ids() == {
        "test-formulas": 1,
        "test-fp32-accum": 1,
        "test-comm-volume": 1,
        "test-dp1-cross-check": 1,
        "answer-Q1": 2,
        "answer-Q2": 2,
        "answer-Q3": 2,
    }


def shown(markdown: str) -> str:
    """Markdown with its backslash escapes read (what the page shows of escaped plain text)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def test_standard_section_keeps_the_seed_wording_with_points_per_code_item():
    assert shown(standard_markdown(load_rubric(RUBRIC))) == STANDARD


def test_lesson_shows_the_rubric_standard():
    """The page's 检查与通过标准 is the rubric's text, whether written out or printed by an asis cell."""
    assert _lesson_standard(LESSON).strip() == standard_markdown(load_rubric(RUBRIC)).strip()


def _lesson_standard(path: Path) -> str:
    """What the lesson's 检查与通过标准 section shows: its prose, plus what an `output: asis` cell prints."""
    blocks = parse_lesson(path).blocks
    start = next(i for i, b in enumerate(blocks) if isinstance(b, Markdown) and "## 检查与通过标准" in b.text)
    shown = [blocks[start].text.split("## 检查与通过标准", 1)[1].split("\n## ", 1)[0]]
    for block in blocks[start + 1 :]:
        if isinstance(block, CodeCell) and block.options.get("output") == "asis":
            shown.append(_printed(block.source, path.parent))
        elif isinstance(block, Markdown) and not block.text.lstrip().startswith("#"):
            shown.append(block.text)
        else:
            break
    return "\n".join(s.strip("\n") for s in shown if s.strip())


def _printed(source: str, cwd: Path) -> str:
    """Run a lesson cell in the lesson's folder (as the build does) and return what it printed."""
    out, here = io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, "<lesson cell>", "exec"), {})
    finally:
        os.chdir(here)
    return out.getvalue()


def test_uneven_question_points_are_named_one_by_one(tmp_path):
    text = RUBRIC.read_text("utf-8")
    q1, q3 = text.index("  - id: Q1"), text.index("  - id: Q3")
    text = text[:q1] + text[q1:q3].replace("points: 2", "points: 3", 1) + text[q3:].replace("points: 2", "points: 1", 1)
    assert shown(standard_markdown(load_rubric(_write(tmp_path, text)))).startswith(
        "总分 10 分：代码正确 4 分（三档公式 1 分、FP32 累积分支 1 分、通信量 1 分、交叉验证 1 分）、Q1 3 分、Q2 2 分、"
        "Q3 1 分、通过线 8 分。"
    )


def test_uneven_code_item_points_are_shown(tmp_path):
    text = RUBRIC.read_text("utf-8").replace("    points: 1\n", "    points: 2\n", 1).replace("total: 10", "total: 11")
    assert "代码正确 5 分（三档公式 2 分、FP32 累积分支 1 分、" in shown(
        standard_markdown(load_rubric(_write(tmp_path, text)))
    )


TRICKY = [
    "softmax：e^(x−m) / Σ e^(x−m)，不是 e^x^",
    "*N_d* 与 N_d、2 * 3 * 4",
    "$\\Psi$ 与 `code` 与 <b>粗</b> & [链接](x)",
    '"引号" -- 破折号 ... 省略号',
    "1. 不是列表",
    "(1) 也不是",
    ":smile: ~下标~ #标题 | 竖线 {.属性}",
    "12) 也不是",
    "# 不是标题",
    "> 不是引用",
    "+ 不是列表",
    "- 不是列表",
    "a--b---c 与 x..y",
    "N_d 与 _斜体_ 与 __粗__",
    "it's 'single' `code`",
    "[链接]{.cls} 与 ![图](x.png) 与 <http://x.y>",
    "\\ 反斜杠 \\* 与 &amp; 与 &#42;",
]


def test_plain_rubric_text_keeps_its_common_characters_unescaped():
    assert (
        render_text("ZeRO-2 的 N_d：2Ψ/3Ψ，(N_d−1)/N_d·Ψ，K + K = 2K，dp=1。", "markdown")
        == "ZeRO-2 的 N_d：2Ψ/3Ψ，(N_d−1)/N_d·Ψ，K + K = 2K，dp=1。"
    )


@pytest.mark.parametrize("text", TRICKY)
def test_rubric_text_reads_the_same_on_the_page_as_in_formgrader_and_the_report(text):
    page = run_pandoc(f"- {render_text(text, 'markdown')}\n", ["-t", "html"], what="a rubric line")
    assert " ".join(html.unescape(page).split()) == html.unescape(f"<ul> <li>{render_text(text, 'html')}</li> </ul>")
    assert html.unescape(render_text(text, "html")) == text


def test_rubric_text_is_one_line_in_a_comment_or_a_csv_cell():
    assert render_text("第一行\n  第二行 ", "line") == "第一行 第二行"


def test_key_points_section_is_each_question_with_its_points():
    rubric = load_rubric(RUBRIC)
    text = shown(key_points_markdown(rubric))
    assert text.startswith(f"### Q1\n\n- {rubric.questions[0].key_points[0]}\n")
    assert [line for line in text.splitlines() if line.startswith("### ")] == ["### Q1", "### Q2", "### Q3"]
    assert text.count("\n- ") == sum(len(q.key_points) for q in rubric.questions)


# ---------------------------------------------------------------- malformed rubrics


def _line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the nth occurrence of needle."""
    pos = -1
    for _ in range(nth):
        pos = text.index(needle, pos + 1)
    return text.count("\n", 0, pos) + 1


def _edit(old: str, new: str, count: int = 1):
    """An edit of the committed rubric's text."""

    def apply(text: str) -> str:
        assert old in text
        return text.replace(old, new, count)

    return apply


MALFORMED = {
    "unknown-key": (
        _edit("pass_line: 8\n", "pass_line: 8\ncolour: red\n"),
        ("colour: red", 1),
        "(top level): unknown key 'colour'; expected only code_items, lesson, pass_line, questions, "
        "total, version, vetoes",
    ),
    "unknown-key-in-question": (
        _edit("    partial_credit: 2 分：从冗余", "    hint: x\n    partial_credit: 2 分：从冗余"),
        ("    hint: x", 1),
        "questions/0: unknown key 'hint'; expected only id, key_points, partial_credit, points, title",
    ),
    "points-not-summing": (
        _edit("    points: 1\n", "    points: 2\n"),
        ("total: 10", 1),
        "total: expected the code_items and questions points to sum to the total; "
        "2 + 1 + 1 + 1 + 2 + 2 + 2 = 11, total is 10",
    ),
    "duplicate-question-id": (
        _edit("  - id: Q3", "  - id: Q2"),
        ("  - id: Q2", 2),
        "questions/2/id: expected a unique id; 'Q2' is already used at line {first}",
    ),
    "duplicate-code-id": (
        _edit("  - id: fp32-accum", "  - id: formulas"),
        ("  - id: formulas", 2),
        "code_items/1/id: expected a unique id; 'formulas' is already used at line {first}",
    ),
    "duplicate-veto-id": (
        _edit("  - id: unbounded-scaling", "  - id: shard-target"),
        ("  - id: shard-target", 2),
        "vetoes/3/id: expected a unique id; 'shard-target' is already used at line {first}",
    ),
    "pass-line-above-total": (
        _edit("pass_line: 8", "pass_line: 10.5"),
        ("pass_line: 10.5", 1),
        "pass_line: expected at most the total 10, got 10.5",
    ),
    "points-not-a-number": (
        _edit("    points: 2\n", "    points: two\n"),
        ("    points: two", 1),
        "questions/0/points: expected a number, got 'two'",
    ),
    "missing-partial-credit": (
        lambda t: re.sub(r"    partial_credit: 2 分：要点全答到[^\n]*\n", "", t),
        ("  - id: Q2", 1),
        "questions/1: missing key 'partial_credit'; expected id, title, points, key_points, partial_credit",
    ),
    "veto-on-unknown-question": (
        _edit("    questions: [Q2, Q3]", "    questions: [Q2, Q4]"),
        ("[Q2, Q4]", 1),
        "vetoes/2/questions/1: expected one of the questions Q1, Q2, Q3, got 'Q4'",
    ),
    "key-point-without-asked-by": (
        _edit("      - asked_by: 会把内存瓶颈留在哪里\n        point:", "      - point:"),
        ("      - point:", 1),
        "questions/0/key_points/1: missing key 'asked_by'; expected asked_by, point",
    ),
    "wrong-version": (_edit("version: 1", "version: 2"), ("version: 2", 1), "version: expected 1, got 2"),
    "lesson-not-the-file": (
        _edit("lesson: lesson05", "lesson: lesson06"),
        ("lesson: lesson06", 1),
        "lesson: expected 'lesson05' (the file name), got 'lesson06'",
    ),
    "repeated-yaml-key": (
        _edit("pass_line: 8\n", "pass_line: 8\npass_line: 6\n"),
        ("pass_line:", 2),
        "key 'pass_line' appears twice (first at line {first}); expected it once",
    ),
    "yaml-syntax": (_edit("    questions: [Q1, Q3]", "    questions: [Q1, Q3", 1), None, "not valid YAML"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_rubric_names_file_line_and_key_path(tmp_path, case):
    edit, where, expected = MALFORMED[case]
    text = edit(RUBRIC.read_text("utf-8"))
    with pytest.raises(CourseError) as err:
        load_rubric(_write(tmp_path, text))
    if where is None:
        assert re.match(r"^rubrics/lesson05\.yml, line \d+: " + expected, str(err.value))
        return
    line = _line_of(text, *where)
    assert str(err.value) == f"rubrics/lesson05.yml, line {line}: {expected.format(first=_line_of(text, where[0]))}"


def _write(tmp_path: Path, text: str) -> Path:
    """A rubric file at tmp/rubrics/lesson05.yml."""
    path = tmp_path / "rubrics" / "lesson05.yml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, "utf-8")
    return path


def test_veto_question_not_in_the_rubric_is_an_error(tmp_path):
    text = RUBRIC.read_text("utf-8")
    q3 = text.index("  - id: Q3")
    text = text[:q3] + text[q3:].replace("  - id: Q3", "  - id: Q4", 1)
    with pytest.raises(CourseError) as err:
        load_rubric(_write(tmp_path, text))
    line = _line_of(text, "    questions: [Q1, Q2, Q3]")
    assert str(err.value) == (
        f"rubrics/lesson05.yml, line {line}: vetoes/0/questions/2: expected one of the questions Q1, Q2, Q4, got 'Q3'"
    )


def test_the_html_report_shows_rubric_text_as_render_text_writes_it(tmp_path):
    from course.grading.report_model import Hints, ItemScore, StudentReport, Submission
    from course.grading.report_render import render_html

    text = RUBRIC.read_text("utf-8").replace("激活在各 DP 副本上不同", "softmax 的 e^(x−m) <b>不</b>是 *N_d*")
    rubric = load_rubric(_write(tmp_path, text))
    code = tuple(ItemScore(code_grade_id(c.id), c.id, c.title, c.points, 0, None, None) for c in rubric.code_items)
    questions = tuple(
        ItemScore(question_grade_id(q.id), q.id, q.title, q.points, None, None, None) for q in rubric.questions
    )
    student = StudentReport(Submission("s1", code, questions, 0, None), (), "INCOMPLETE", ("待评分",))
    page = render_html(rubric, (student,), Hints({}, {}), {}, {})
    point = rubric.questions[0].key_points[0]
    assert f"<li>{render_text(point, 'html')}</li>" in page and "e^(x−m) &lt;b&gt;不&lt;/b&gt;是 *N_d*" in page


def test_each_key_point_keeps_the_words_of_its_question_that_ask_for_it():
    """asked_by pairs with key_points one to one, with the line it stands on (the build's error names it)."""
    rubric = load_rubric(RUBRIC)
    text = RUBRIC.read_text("utf-8").splitlines()
    for q in rubric.questions:
        assert len(q.asked_by) == len(q.asked_by_lines) == len(q.key_points)
        for phrase, line in zip(q.asked_by, q.asked_by_lines):
            assert text[line - 1].strip() == f"- asked_by: {phrase}"


def test_a_key_point_is_unasked_when_its_words_are_not_in_the_question():
    from course.grading.rubric import Question, unasked_key_points

    q = Question("Q1", "t", 2, ("a", "b", "c"), "p", asked_by=("为什么 返回新列表", "代价是什么", "哪些技术"))
    prompt = "### Q1\n\n为什么\n返回新列表？代价   是什么？"  # wrapped and spaced differently: still asked
    assert unasked_key_points(q, prompt) == [2]
