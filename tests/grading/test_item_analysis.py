"""`course stats`: a planted class of 40 graded through the real path (course grade, formgrader's scores, a grader's
vetoes), whose items have known properties, read from a gradebook on SQLite and on PostgreSQL; every figure
recomputed here from the gradebook with numpy and scipy.

The class is graded once, on SQLite (the slow part: 41 notebooks through the sandbox); the PostgreSQL case reads a
copy of that course whose gradebook rows were copied into a PostgreSQL database the hub config names. Grading into
PostgreSQL is proven by tests/workflows/test_gradebook_anywhere.py; here, that `course stats` and
the reports read the class from whichever database the configured db_url points at."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from scipy import stats

from course.grading.gradebook import configured_gradebook, gradebook
from course.grading.item_render import lesson_section
from course.grading.report import make_report, record_veto
from course.grading.semester import make_semester_report
from course.workflows.grade import GradeOptions, grade_assignment
from tests.assignment.make_submissions import ANSWER, CORRECT, ROOT
from tests.classes import submit

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, pytest.mark.long(32)]

N = 40  # graded students; one more hands in and waits for a grader
CODE = ("formulas", "fp32-accum", "comm-volume", "dp1-cross-check")
QUESTIONS = ("Q1", "Q2", "Q3")
ZERO1_SHARDS_GRADS = [CORRECT[1], *CORRECT[1:]]  # ZeRO-1 written with ZeRO-2's formula: a known misconception
MISCONCEIVED = range(0, 12)  # the weakest twelve share it
FORGOT_EXTRA = range(0, 6)  # the weakest six also forget the FP32 accumulation buffer
ACTIVATION = "ZeRO-3 把激活也分片了，所以长序列也不怕（王小明，stu00，LMS-77）。"  # a veto hint, with who wrote it


def student(s: int) -> str:
    return f"stu{s:02d}"


def fills(s: int) -> list[str]:
    """The planted code: a misconception for the weakest twelve (the weakest six forget a term too), right for the
    rest."""
    code = ZERO1_SHARDS_GRADS if s in MISCONCEIVED else CORRECT
    return [f.replace(" + extra", "") for f in code] if s in FORGOT_EXTRA else code


def question_scores(s: int) -> dict[str, float]:
    """Q1 nobody gets; Q2 the strongest eight lose; Q3 grows with strength."""
    return {"Q1": 0, "Q2": 0 if s >= 32 else 2, "Q3": 2 if s >= 18 else 1 if s >= 6 else 0}


def planted_course(released: Path, project: Path) -> Path:
    """The project: lesson05 released, 41 notebooks handed in and graded (SQLite), 40 with their questions scored."""
    from course.assignment.submissions import submission

    root = project / "autograder"
    shutil.copytree(released, root)
    shutil.copytree(ROOT / "lessons" / "lesson05", project / "lessons" / "lesson05")
    shutil.copy(ROOT / "lessons" / "lesson05.qmd", project / "lessons")
    shutil.copytree(ROOT / "solutions", project / "solutions")
    (project / "pyproject.toml").write_text("[tool.course]\n", "utf-8")
    url = configured_gradebook(root).url
    with gradebook(url) as gb:
        gb.update_or_create_student("stu00", first_name="小明", last_name="王", lms_user_id="LMS-77")
    release = nbformat.read(root / "release" / "lesson05" / "lesson05.ipynb", as_version=4)
    made = project / "handed-in"
    made.mkdir()
    for s in range(N + 1):
        answers = {"Q1": ACTIVATION} if s < 6 else {"Q1": "还没想好。"} if s == N else None  # stu40: to be graded
        nb = submission(release, ANSWER, fills(s), answers=answers)
        nbformat.write(nb, made / f"{student(s)}.ipynb")
        submit(root, student(s), made / f"{student(s)}.ipynb")
    grade_assignment(root, "lesson05", GradeOptions(jobs=2))
    with gradebook(url) as gb:
        for s in range(N):
            for question, points in question_scores(s).items():
                grade = gb.find_grade(f"answer-{question}", "lesson05", "lesson05", student(s))
                grade.manual_score, grade.needs_manual_grade = points, False
        gb.db.commit()
    for s in (0, 1):
        record_veto(
            project, "lesson05", student=student(s), question="Q1", veto="activation-shard", note="把激活也分片了"
        )
    return root


def gradebook_matrix(url: str) -> tuple[np.ndarray, np.ndarray]:
    """Students × (code items, questions) and nbgrader's totals, read here with nbgrader's own API."""
    with gradebook(url) as gb:
        rows = [
            [gb.find_grade(f"test-{c}", "lesson05", "lesson05", student(s)).score for c in CODE]
            + [gb.find_grade(f"answer-{q}", "lesson05", "lesson05", student(s)).score for q in QUESTIONS]
            for s in range(N)
        ]
        totals = [gb.find_submission("lesson05", student(s)).score for s in range(N)]
    return np.array(rows, float), np.array(totals, float)


def alpha(x: np.ndarray) -> float:
    k = x.shape[1]
    return k / (k - 1) * (1 - x.var(axis=0, ddof=1).sum() / x.sum(axis=1).var(ddof=1))


def upper_lower(item: np.ndarray, totals: np.ndarray, points: float) -> float:
    """Kelley's index written out student by student: the top and bottom round(0.27 n), ties sharing places."""
    g = round(0.27 * len(totals))

    def group_mean(sign: int) -> float:
        key = [sign * t for t in totals]
        cut = sorted(key, reverse=True)[g - 1]
        sure = [i for i, k in enumerate(key) if k > cut]
        tied = [i for i, k in enumerate(key) if k == cut]
        return (sum(item[i] for i in sure) + (g - len(sure)) / len(tied) * sum(item[i] for i in tied)) / g

    return (group_mean(1) - group_mean(-1)) / points


@pytest.fixture(scope="module")
def planted(released, tmp_path_factory) -> Path:
    """The planted class graded once, on SQLite, with no machine's nbgrader config read: its project folder."""
    project = tmp_path_factory.mktemp("planted") / "project"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path_factory.mktemp("no-hub-config")))
        patch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        planted_course(released, project)
    return project


def copy_rows(source: str, target: str) -> None:
    """Every row of nbgrader's tables from the gradebook at SOURCE into the new gradebook at TARGET (which holds
    only the default course nbgrader writes on creation)."""
    import sqlalchemy
    from nbgrader.api import Base

    engines = sqlalchemy.create_engine(source), sqlalchemy.create_engine(target)
    try:
        with engines[0].connect() as read, engines[1].begin() as write:
            for table in reversed(Base.metadata.sorted_tables):
                write.execute(table.delete())
            for table in Base.metadata.sorted_tables:  # parents before the rows that point at them
                rows = [dict(row._mapping) for row in read.execute(table.select())]
                if rows:
                    write.execute(table.insert(), rows)
    finally:
        for engine in engines:
            engine.dispose()


def test_a_planted_class_graded_for_real(planted, gradebook_db, tmp_path, monkeypatch, capsys):
    """The class graded once (the slow part), then, on each database, every check: `course stats` from a folder
    inside the course (the command line's main, run in this process), the lesson report's section and the semester
    report's."""
    from course.cli import main

    root = shutil.copytree(planted, tmp_path / "project") / "autograder"
    if gradebook_db.url is not None:  # the hub config points the course at PostgreSQL: the same rows there
        copy_rows(f"sqlite:///{root / 'gradebook.db'}", gradebook_db.url)
        (root / "gradebook.db").unlink()
    assert configured_gradebook(root).url == (gradebook_db.url or f"sqlite:///{root / 'gradebook.db'}")
    monkeypatch.chdir(root / "submitted" / "stu07")
    capsys.readouterr()
    status = main(["stats", "lesson05"])
    out, err = capsys.readouterr()
    assert status == 0, err
    check_figures(root, out)
    check_reports(root)


def check_figures(root: Path, out: str) -> None:
    """The report finds each planted property, with the figures numpy and scipy give from the gradebook."""
    assert f"the course at {root.parent}" in out
    data = json.loads((root / "reports" / "lesson05-items.json").read_text("utf-8"))
    rows = list(csv.DictReader(io.StringIO((root / "reports" / "lesson05-items.csv").read_text("utf-8"))))
    assert list(rows[0]) == [
        "item",
        "kind",
        "max_points",
        "n",
        "mean",
        "facility",
        "sd",
        "discrimination",
        "upper_lower",
        "alpha_if_deleted",
        "flags",
    ]
    items = {(r["kind"], r["item"]): r for r in data["items"]}
    scores, totals = gradebook_matrix(configured_gradebook(root).url)
    # the class as planted, read back from the gradebook
    assert scores[:, CODE.index("comm-volume")].tolist() == [1] * N
    assert scores[:, CODE.index("formulas")].tolist() == [0 if s in MISCONCEIVED else 1 for s in range(N)]
    assert scores[:, 4:].tolist() == [[question_scores(s)[q] for q in QUESTIONS] for s in range(N)]
    assert data["left_out"] == {"pending": 1}  # stu40: handed in, waiting for a grader
    sums = scores.sum(axis=1)
    test = data["test"]
    assert test["n"] == N and test["items"] == 7
    assert test["mean"] == pytest.approx(sums.mean(), abs=1e-9)
    assert test["sd"] == pytest.approx(sums.std(ddof=1), abs=1e-9)
    assert test["alpha"] == pytest.approx(alpha(scores), abs=1e-9)
    assert test["sem"] == pytest.approx(sums.std(ddof=1) * np.sqrt(1 - alpha(scores)), abs=1e-9)
    assert test["pass_line"] == 8 and test["pass_rate"] == pytest.approx((totals >= 8).mean(), abs=1e-9)
    maxima = [1, 1, 1, 1, 2, 2, 2]
    for j, item in enumerate(CODE + QUESTIONS):
        row = items[("code" if j < 4 else "question", item)]
        x, rest = scores[:, j], sums - scores[:, j]
        assert row["n"] == N
        assert row["mean"] == pytest.approx(x.mean(), abs=1e-9)
        assert row["facility"] == pytest.approx(x.mean() / maxima[j], abs=1e-9)
        assert row["sd"] == pytest.approx(x.std(ddof=1), abs=1e-9)
        if np.ptp(x) == 0:
            assert row["discrimination"] is None
        elif j < 4:  # a right-or-wrong code item: the point-biserial correlation
            assert row["discrimination"] == pytest.approx(stats.pointbiserialr(x, rest).statistic, abs=1e-9)
        else:
            assert row["discrimination"] == pytest.approx(np.corrcoef(x, rest)[0, 1], abs=1e-9)
        assert row["upper_lower"] == pytest.approx(upper_lower(x, sums, maxima[j]), abs=1e-9)
        assert row["alpha_if_deleted"] == pytest.approx(alpha(np.delete(scores, j, axis=1)), abs=1e-9)
    flags = {key: {f["flag"] for f in r["flags"]} for key, r in items.items()}
    assert {"everybody", "no-discrimination"} <= flags[("code", "comm-volume")]  # everyone gets it
    assert {"nobody", "no-discrimination"} <= flags[("question", "Q1")]  # nobody gets it
    assert "negative" in flags[("question", "Q2")] and items[("question", "Q2")]["discrimination"] < 0
    assert not any(f in flags[("question", "Q3")] for f in ("negative", "low-discrimination", "unreliable"))
    # no NaN in any cell: a figure without variance is an empty cell, with the flag saying why
    csv_q1 = next(r for r in rows if r["item"] == "Q1")
    assert csv_q1["discrimination"] == "" and "无法计算区分度" in csv_q1["flags"]
    # each check, visible and hidden, named by its line; the ZeRO-1 visible check is what the misconception fails
    zero1 = items[("check", "zero_memory_per_gpu(7_000_000_000, 8, 1) == 38_500_000_000")]
    held = np.array([s not in MISCONCEIVED for s in range(N)], float)
    assert zero1["facility"] == pytest.approx(held.mean(), abs=1e-9) and zero1["hidden"] is False
    assert zero1["discrimination"] == pytest.approx(stats.pointbiserialr(held, sums - scores[:, 0]).statistic, abs=1e-9)
    assert any(r["kind"] == "check" and r["hidden"] for r in data["items"])
    assert any(f["flag"] == "redundant" for r in data["items"] if r["kind"] == "check" for f in r["flags"])
    # veto items: the share of students not vetoed
    assert items[("veto", "activation-shard")]["facility"] == pytest.approx((N - 2) / N, abs=1e-9)
    # the shared misconception first, then the veto hint; each pointing back to the lesson, examples anonymised
    first, second = data["misconceptions"][:2]
    assert (first["kind"], first["id"], first["students"], first["items"]) == (
        "misconception",
        "zero1-shards-grads",
        12,
        ["formulas"],
    )
    assert first["points_lost"] == 12
    assert first["section"] == "2. ZeRO 阶段 1、2、3 的显存拆解与数学推导"  # as lesson05's checks.yml names it
    assert first["link"] == "../../_site/answer/lesson05.html#2-zero-阶段-123-的显存拆解与数学推导"
    assert (second["kind"], second["id"], second["students"], second["items"]) == (
        "veto-hint",
        "activation-shard",
        6,
        ["Q1"],
    )
    assert second["link"].endswith("lesson05.html#q1")
    assert "某同学" in second["example"]
    text = json.dumps(data, ensure_ascii=False) + (root / "reports" / "lesson05-items.csv").read_text("utf-8")
    for who in ("stu0", "stu1", "stu2", "stu3", "stu4", "王小明", "小明", "LMS-77"):
        assert who not in text
    assert "reteach: ZeRO-1 把梯度也分片了 (12 students)" in out


def check_reports(root: Path) -> None:
    """The lesson's HTML report and the semester report end with the same figures, naming no student."""
    project = root.parent
    data = json.loads((root / "reports" / "lesson05-items.json").read_text("utf-8"))
    html = make_report(project, "lesson05", item_analysis=lesson_section(project, "lesson05")).html.read_text("utf-8")
    section = html.split('<section class="item-analysis" id="items">', 1)[1]
    assert f"{data['test']['alpha']:.3f}" in section.split('id="items-alpha"', 1)[1][:40]
    q2 = section.split('<tr class="question" data-item="Q2"', 1)[1].split("</tr>", 1)[0]
    assert 'data-flag="negative"' in q2
    assert section.count('class="item-dot"') == 4 + 3 + 1  # code items, questions, the veto recorded
    assert 'data-id="zero1-shards-grads" data-students="12"' in section
    for s in range(N):
        assert student(s) not in section
    semester = make_semester_report(project).html.read_text("utf-8").split('id="item-analysis"', 1)[1]
    row = semester.split('data-lesson="lesson05"', 1)[1].split('data-item="Q2"', 1)[1].split("</tr>", 1)[0]
    assert f"{next(r for r in data['items'] if r['item'] == 'Q2')['discrimination']:.2f}" in row
    assert 'data-flag="negative"' in row
