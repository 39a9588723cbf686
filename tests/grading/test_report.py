"""`course report`: real nbgrader gradebooks in a temporary course root, decided by the rubric's rules."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from course.cli import main
from course.errors import CourseError
from course.grading.gradebook import configured_gradebook
from course.grading.report import make_report, record_veto
from course.grading.rubric import load_rubric
from course.grading.vetoes import new_file
from tests.grading.report_class import DEMO, FULL, RUBRIC, report_rows, student_section

pytestmark = pytest.mark.long(30)


def shown(root: Path) -> str:
    """How errors name the course's configured gradebook (its URL, no password)."""
    return configured_gradebook(root / "autograder").location().path


# ---------------------------------------------------------------- the demo class


def test_demo_class_results_follow_the_rules(course):
    root = course(DEMO["students"])
    result = make_report(root, "lesson05")
    rows = report_rows(result.csv)
    assert {s: r["result"] for s, r in rows.items()} == {
        "li-lei": "PASS",
        "han-meimei": "PASS",
        "zhang-wei": "FAIL",
        "wang-fang": "FAIL",
        "chen-jing": "FAIL",
        "liu-yang": "INCOMPLETE",
        "zhao-min": "FAIL",
    }
    assert rows["chen-jing"]["total"] == "10" and rows["chen-jing"]["vetoes"] == "activation-shard"
    assert rows["zhao-min"]["vetoes"] == "comm-volume" and rows["zhao-min"]["Q1"] == ""
    assert rows["liu-yang"]["Q3"] == "" and rows["liu-yang"]["total"] == "8"
    assert rows["han-meimei"]["dp1-cross-check"] == "0" and rows["han-meimei"]["total"] == "8"
    assert rows["wang-fang"]["Q3"] == "0.5" and rows["wang-fang"]["total"] == "7.5"
    assert list(rows["li-lei"]) == [
        "student",
        "formulas",
        "fp32-accum",
        "comm-volume",
        "dp1-cross-check",
        "Q1",
        "Q2",
        "Q3",
        "total",
        "vetoes",
        "veto_hints",
        "result",
        "flags",
        "similar_pair",
        "late_penalty",
        "late",
    ]


def test_demo_class_html_explains_each_result(course):
    root = course(DEMO["students"])
    html = make_report(root, "lesson05").html.read_text("utf-8")
    assert 'id="count-PASS">2<' in html and 'id="count-FAIL">4<' in html and 'id="count-INCOMPLETE">1<' in html
    assert 'id="pass-rate">29%<' in html
    # histogram of the five fully graded students by whole points (9.5 → 9, 7.5 → 7), no external resources
    bins = {int(k): int(v) for k, v in re.findall(r'data-score="(\d+)" data-count="(\d+)"', html)}
    assert bins == {0: 0, 1: 0, 2: 0, 3: 0, 4: 0, 5: 0, 6: 1, 7: 1, 8: 1, 9: 1, 10: 1}
    assert "<svg" in html and not re.search(r'(src|href)="(https?:)?//', html)
    vetoed = student_section(html, "chen-jing")
    assert 'data-result="FAIL"' in vetoed and "一票否决：activation-shard（Q1）" in vetoed
    assert "说 ZeRO-3 激活也被分片。" in vetoed
    pending = student_section(html, "liu-yang")
    assert "Q3 尚未评分" in pending and "3Ψ = 前向逐层 all-gather" in pending  # the 要点 the grader needs
    low = student_section(html, "zhang-wei")
    assert "总分 6/10 低于通过线 8" in low and "测试未通过：开启 FP32 梯度累积时" in low
    assert "评分者批注：没有讲 prefetch 为什么在 512 卡以上失效。" in low
    assert "总分 8/10 ≥ 通过线 8" in student_section(html, "han-meimei")
    assert "Q1 尚未评分，但一票否决已决定结果" in student_section(html, "zhao-min")
    # graders' hints from the answers: shown beside the decision, never changing it
    assert "Q1 · activation-shard：「ZeRO-3 把参数" in vetoed
    assert "Q3 · comm-volume：「ZeRO-3 每步通信量是 2Ψ" in student_section(html, "zhao-min")
    assert "评分提示" not in student_section(html, "li-lei")


@pytest.mark.browser
@pytest.mark.slow
def test_the_html_has_no_serious_accessibility_violation_with_every_result_badge(course, browser):
    """The demo class has a PASS, a FAIL and an INCOMPLETE badge: axe-core checks their contrast, offline."""
    from tests.site.page_checks import axe_violations

    html = make_report(course(DEMO["students"]), "lesson05").html
    page = browser.new_page()
    remote = []
    page.route(
        "**/*",
        lambda route: (
            route.continue_()
            if route.request.url.startswith("file://")
            else (remote.append(route.request.url), route.abort())
        ),
    )
    page.goto(html.as_uri())
    assert page.locator(".INCOMPLETE").count() >= 1
    assert axe_violations(page) == [] and remote == []


def test_cli_writes_the_report_and_prints_the_summary(course, capsys):
    root = course(DEMO["students"])
    assert main(["report", "lesson05", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "2 PASS, 4 FAIL, 1 INCOMPLETE" in out
    assert (root / "autograder" / "reports" / "lesson05.csv").is_file()


# ---------------------------------------------------------------- recording a veto in one step


def test_veto_recorded_in_one_step_fails_the_student(course, capsys):
    perfect = {"ada": {"scores": FULL}}
    root = course(perfect, vetoes=None)
    assert (
        main(
            [
                "report",
                "lesson05",
                "--root",
                str(root),
                "--veto",
                "ada",
                "Q2",
                "comm-volume",
                "--note",
                "说 ZeRO-1 每步只通信 Ψ: 少算了 all-gather",
            ]
        )
        == 0
    )
    vetoes = root / "autograder" / "vetoes" / "lesson05.yml"
    text = vetoes.read_text("utf-8")
    assert text.startswith(new_file(load_rubric(RUBRIC)))
    assert yaml.safe_load(text)["vetoes"] == [
        {"student": "ada", "question": "Q2", "veto": "comm-volume", "note": "说 ZeRO-1 每步只通信 Ψ: 少算了 all-gather"}
    ]
    assert report_rows(root / "autograder" / "reports" / "lesson05.csv")["ada"]["result"] == "FAIL"
    # a second veto keeps the first line and the header comments
    assert (
        main(
            [
                "report",
                "lesson05",
                "--root",
                str(root),
                "--veto",
                "ada",
                "Q1",
                "activation-shard",
                "--note",
                "激活也切片",
            ]
        )
        == 0
    )
    again = vetoes.read_text("utf-8")
    assert again.startswith(text) and again.count("\n") == text.count("\n") + 1


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["nobody", "Q2", "comm-volume"],
            "student: expected a student with a lesson05 submission in the gradebook, got 'nobody'",
        ),
        (
            ["ada", "Q9", "comm-volume"],
            "question: expected one of Q1, Q2, Q3, formulas, fp32-accum, comm-volume, "
            "dp1-cross-check (a question or a code item), got 'Q9'",
        ),
        (["ada", "Q2", "made-up"], "veto: expected a veto id of rubrics/lesson05.yml"),
        (
            ["ada", "Q2", "activation-shard"],
            "question: expected a question veto 'activation-shard' applies to (Q1, Q3)",
        ),
    ],
)
def test_bad_veto_on_the_command_line_is_not_recorded(course, capsys, args, expected):
    root = course({"ada": {"scores": FULL}}, vetoes=None)
    assert main(["report", "lesson05", "--root", str(root), "--veto", *args, "--note", "x"]) == 2
    assert expected in capsys.readouterr().err
    assert not (root / "autograder" / "vetoes" / "lesson05.yml").exists()
    assert not (root / "autograder" / "reports").exists()


def test_same_veto_twice_is_refused_with_the_line_of_the_first(course, capsys):
    root = course(DEMO["students"])
    before = (root / "autograder" / "vetoes" / "lesson05.yml").read_text("utf-8")
    first_line = 1 + before.splitlines().index(next(ln for ln in before.splitlines() if "chen-jing" in ln))
    assert (
        main(
            [
                "report",
                "lesson05",
                "--root",
                str(root),
                "--veto",
                "chen-jing",
                "Q1",
                "activation-shard",
                "--note",
                "again",
            ]
        )
        == 2
    )
    assert f"vetoes/lesson05.yml, line {first_line}: veto not recorded" in capsys.readouterr().err
    assert (root / "autograder" / "vetoes" / "lesson05.yml").read_text("utf-8") == before


def test_veto_file_not_ending_in_its_list_is_not_appended_to(course, capsys):
    reordered = (
        "vetoes:\n  - {student: ada, question: Q1, veto: shard-target, note: ok}\nversion: 1\nlesson: lesson05\n"
    )
    root = course({"ada": {"scores": FULL}}, vetoes=reordered)
    assert main(["report", "lesson05", "--root", str(root), "--veto", "ada", "Q2", "comm-volume", "--note", "x"]) == 2
    err = capsys.readouterr().err
    assert "expected `vetoes:` to be the file's last key" in err
    assert "  - {student: ada, question: Q2, veto: comm-volume, note: x}" in err  # the line to paste by hand
    assert (root / "autograder" / "vetoes" / "lesson05.yml").read_text("utf-8") == reordered


def test_veto_needs_a_note(course, capsys):
    root = course({"ada": {"scores": FULL}}, vetoes=None)
    assert main(["report", "lesson05", "--root", str(root), "--veto", "ada", "Q2", "comm-volume"]) == 2
    assert "--veto needs --note" in capsys.readouterr().err


# ---------------------------------------------------------------- bad input leaves the report untouched


def _with_old_reports(root: Path) -> dict[Path, str]:
    """Earlier report files whose content must survive a failed run."""
    out = root / "autograder" / "reports"
    out.mkdir(parents=True, exist_ok=True)
    old = {out / "lesson05.csv": "old csv\n", out / "lesson05.html": "<p>old</p>\n"}
    for path, text in old.items():
        path.write_text(text, "utf-8")
    return old


def _assert_untouched(old: dict[Path, str]) -> None:
    for path, text in old.items():
        assert path.read_text("utf-8") == text
    assert sorted(p.name for p in next(iter(old)).parent.iterdir()) == ["lesson05.csv", "lesson05.html"]


def test_manual_score_above_the_maximum_is_an_error(course):
    root = course({"ada": {"scores": {**FULL, "answer-Q2": 3}}}, vetoes=None)
    old = _with_old_reports(root)
    with pytest.raises(CourseError) as err:
        make_report(root, "lesson05")
    assert str(err.value) == (
        f"{shown(root)}, cell answer-Q2: student ada: manual score 3 is outside 0 to 2, the cell's maximum"
    )
    _assert_untouched(old)


def test_gradebook_of_another_assignment_is_an_error(course):
    root = course({"ada": {"scores": FULL}}, vetoes=None, assignment="lesson04")
    old = _with_old_reports(root)
    with pytest.raises(
        CourseError,
        match=rf"^{re.escape(shown(root))}: expected the gradebook of lesson05, "
        r"but it holds lesson04$",
    ):
        make_report(root, "lesson05")
    _assert_untouched(old)


def test_gradebook_cells_worth_other_points_than_the_rubric_is_an_error(course):
    root = course({"ada": {"scores": {**FULL, "answer-Q1": 2}}}, vetoes=None, points={**FULL, "answer-Q1": 3})
    with pytest.raises(
        CourseError,
        match=rf"^{re.escape(shown(root))}, cell answer-Q1: grade cell is worth 3 points in the "
        r"gradebook, but 2 in rubrics/lesson05\.yml$",
    ):
        make_report(root, "lesson05")


def test_missing_gradebook_is_an_error_and_is_not_created(tmp_path):
    (tmp_path / "autograder" / "rubrics").mkdir(parents=True)
    shutil.copy(RUBRIC, tmp_path / "autograder" / "rubrics" / "lesson05.yml")
    with pytest.raises(
        CourseError,
        match=rf"^{re.escape(shown(tmp_path))}: no gradebook: nothing is graded there yet: "
        r"release and grade lesson05 first .* \(c\.CourseDirectory\.db_url from "
        r"nbgrader's default: gradebook\.db in the course root\)$",
    ):
        make_report(tmp_path, "lesson05")
    assert not (tmp_path / "autograder" / "gradebook.db").exists()


VETO_HEADER = "version: 1\nlesson: lesson05\nvetoes:\n"


@pytest.mark.parametrize(
    "record, expected",
    [
        (
            "- {student: nobody, question: Q1, veto: activation-shard, note: x}",
            "vetoes/4/student: expected a student with a lesson05 submission in the gradebook, got 'nobody'",
        ),
        (
            "- {student: ada, question: Q4, veto: activation-shard, note: x}",
            "vetoes/4/question: expected one of Q1, Q2, Q3, formulas, fp32-accum, comm-volume, dp1-cross-check "
            "(a question or a code item), got 'Q4'",
        ),
        (
            "- {student: ada, question: Q2, veto: activation-shard, note: x}",
            "vetoes/4/question: expected a question veto 'activation-shard' applies to (Q1, Q3), got 'Q2'",
        ),
        (
            "- {student: ada, question: Q1, veto: made-up, note: x}",
            "vetoes/4/veto: expected a veto id of rubrics/lesson05.yml (shard-target, activation-shard, comm-volume, "
            "unbounded-scaling), got 'made-up'",
        ),
        (
            "- {student: ada, question: Q1, veto: activation-shard}",
            "vetoes/4: missing key 'note'; expected student, question, veto, note",
        ),
        (
            "- {student: ada, question: Q1, veto: activation-shard, note: x, grader: me}",
            "vetoes/4: unknown key 'grader'; expected only note, question, student, veto",
        ),
    ],
)
def test_bad_veto_record_names_file_line_and_expectation(course, record, expected):
    good = (
        "- {student: ada, question: Q1, veto: shard-target, note: ok}\n"
        "- {student: ada, question: Q2, veto: shard-target, note: ok}\n"
        "- {student: ada, question: Q3, veto: shard-target, note: ok}\n"
        "- {student: ada, question: Q2, veto: comm-volume, note: ok}\n"
    )
    root = course({"ada": {"scores": FULL}}, vetoes=VETO_HEADER + good + record + "\n")
    old = _with_old_reports(root)
    with pytest.raises(CourseError) as err:
        make_report(root, "lesson05")
    assert str(err.value) == f"vetoes/lesson05.yml, line 8: {expected}"  # 3 header lines, 4 good records
    _assert_untouched(old)


def test_malformed_rubric_leaves_the_report_untouched(course):
    root = course({"ada": {"scores": FULL}}, vetoes=None)
    rubric = root / "autograder" / "rubrics" / "lesson05.yml"
    rubric.write_text(rubric.read_text("utf-8").replace("pass_line: 8", "pass_line: 12"), "utf-8")
    old = _with_old_reports(root)
    with pytest.raises(CourseError, match=r"^rubrics/lesson05\.yml, line \d+: pass_line: expected at most the total"):
        make_report(root, "lesson05")
    _assert_untouched(old)


# ---------------------------------------------------------------- hints from the code


def _grade_report(root: Path, verdicts: dict) -> None:
    """reports/lesson05-grade.json as `course grade` writes it: per student the re-check's verdicts."""
    (root / "autograder" / "reports").mkdir(parents=True, exist_ok=True)
    data = {
        student: {"flagged": False, "verdicts": v, "changes": [], "problems": []} for student, v in verdicts.items()
    }
    (root / "autograder" / "reports" / "lesson05-grade.json").write_text(json.dumps(data, ensure_ascii=False), "utf-8")


SHARD = {
    "id": "zero2-shards-params",
    "name": "ZeRO-2 把参数也分片了",
    "explanation": "…",
    "evidence": "ZeRO-2 的返回值等于 ZeRO-3 的公式（zero_memory_per_gpu(7_000_000_000, 8, 2) == 14_000_000_000）",
    "veto": "shard-target",
}
FORGOT = {
    "id": "fp32-accum-missing",
    "name": "漏了 FP32 梯度累积缓冲",
    "explanation": "…",
    "evidence": "差为 0",
    "veto": None,
}


def test_code_diagnoses_become_veto_hints_with_evidence_never_decisions(course):
    root = course({"ada": {"scores": {**FULL, "test-formulas": 0, "test-fp32-accum": 0}}}, vetoes=None)
    _grade_report(
        root,
        {
            "ada": {
                "formulas": {"passed": False, "reason": "r", "diagnoses": [SHARD]},
                "fp32-accum": {"passed": False, "reason": "r", "diagnoses": [FORGOT]},
                "comm-volume": {"passed": True, "reason": "ok"},
            }
        },
    )
    result = make_report(root, "lesson05")
    row = report_rows(result.csv)["ada"]
    assert row["veto_hints"] == "shard-target" and row["vetoes"] == "" and row["result"] == "PASS"  # 8/10, no veto
    section = student_section(result.html.read_text("utf-8"), "ada")
    assert "代码诊断" in section and "可能的一票否决项 shard-target" in section
    assert (
        "zero_memory_per_gpu(7_000_000_000, 8, 2) == 14_000_000_000" in section and "漏了 FP32 梯度累积缓冲" in section
    )


def test_without_a_grade_report_there_are_no_code_hints(course):
    root = course({"ada": {"scores": FULL}}, vetoes=None)
    result = make_report(root, "lesson05")
    assert report_rows(result.csv)["ada"]["veto_hints"] == "" and "代码诊断" not in result.html.read_text("utf-8")


def test_a_grader_confirms_a_veto_on_a_code_item(course):
    root = course({"ada": {"scores": FULL}}, vetoes=None)
    record = record_veto(
        root,
        "lesson05",
        student="ada",
        question="formulas",
        veto="shard-target",
        note="ZeRO-2 的公式把参数也除以了 N_d",
    )
    assert record.question == "formulas"
    result = make_report(root, "lesson05")
    assert (
        report_rows(result.csv)["ada"]["vetoes"] == "shard-target"
        and report_rows(result.csv)["ada"]["result"] == "FAIL"
    )


def test_what_grading_found_wrong_is_shown_in_the_students_section(course):
    root = course({"ada": {"scores": {k: 0 for k in FULL}}, "bob": {"scores": FULL}}, vetoes=None)
    (root / "autograder" / "reports").mkdir(parents=True, exist_ok=True)
    problem = "submitted/ada/lesson05/lesson05.ipynb, line 3: not valid JSON (Expecting ',' delimiter, column 5)"
    data = {
        "ada": {"flagged": True, "verdicts": {}, "changes": [], "problems": [problem]},
        "bob": {"flagged": False, "verdicts": {}, "changes": [], "problems": []},
    }
    (root / "autograder" / "reports" / "lesson05-grade.json").write_text(json.dumps(data), "utf-8")
    html = make_report(root, "lesson05").html.read_text("utf-8")
    assert "评分时发现的问题" in student_section(html, "ada") and "not valid JSON" in student_section(html, "ada")
    assert "评分时发现的问题" not in student_section(html, "bob")


def test_the_rechecks_corrections_are_in_the_html_and_the_csv_with_their_reasons(course):
    root = course({"mallory": {"scores": {**FULL, "test-formulas": 0}}, "bob": {"scores": FULL}}, vetoes=None)
    (root / "autograder" / "reports").mkdir(parents=True, exist_ok=True)
    change = {
        "item": "formulas",
        "kernel_score": 1.0,
        "recheck_score": 0.0,
        "reason": "4 of 9 checks failed; first (visible): zero_memory_per_gpu(1, 8, 0) == 16: returned _Fake",
    }
    data = {
        "mallory": {"flagged": True, "verdicts": {}, "changes": [change], "problems": []},
        "bob": {"flagged": False, "verdicts": {}, "changes": [], "problems": []},
    }
    (root / "autograder" / "reports" / "lesson05-grade.json").write_text(json.dumps(data), "utf-8")
    result = make_report(root, "lesson05")
    section = student_section(result.html.read_text("utf-8"), "mallory")
    assert "评分时发现的问题" in section and "学生进程内得 1 分，课程复核改为 0 分" in section
    assert "returned _Fake" in section and "评分时发现的问题" not in student_section(
        result.html.read_text("utf-8"), "bob"
    )
    rows = report_rows(result.csv)
    assert (
        "学生进程内得 1 分，课程复核改为 0 分" in rows["mallory"]["flags"]
        and "returned _Fake" in rows["mallory"]["flags"]
    )
    assert rows["bob"]["flags"] == ""


def test_a_problem_with_the_file_is_in_the_csv(course):
    root = course({"ada": {"scores": {k: 0 for k in FULL}}}, vetoes=None)
    (root / "autograder" / "reports").mkdir(parents=True, exist_ok=True)
    data = {
        "ada": {"flagged": True, "verdicts": {}, "changes": [], "problems": ["cell test-x: read-only cell was edited"]}
    }
    (root / "autograder" / "reports" / "lesson05-grade.json").write_text(json.dumps(data), "utf-8")
    assert report_rows(make_report(root, "lesson05").csv)["ada"]["flags"] == "cell test-x: read-only cell was edited"


def test_an_error_while_defining_the_exercise_is_shown_on_its_code_item(course):
    root = course({"ada": {"scores": {**FULL, "test-formulas": 0}}}, vetoes=None)
    error = {"cell": "cell ex-zero-memory", "error": "SyntaxError", "line": 7, "message": "invalid syntax"}
    _grade_report(
        root,
        {"ada": {"formulas": {"passed": False, "reason": "zero_memory_per_gpu is not defined", "errors": [error]}}},
    )
    section = student_section(make_report(root, "lesson05").html.read_text("utf-8"), "ada")
    assert "运行学生的代码单元时出错：cell ex-zero-memory, line 7: SyntaxError: invalid syntax" in section
