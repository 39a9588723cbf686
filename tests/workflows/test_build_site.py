"""course build: both variants built, executed, offline; a no-op rebuild is instant; failures leave _site alone."""

from __future__ import annotations

import json
import re
import shutil
import time

import pytest

from course.errors import CourseError
from course.lesson.notebook_names import assignment_notebook, notes_notebook
from course.workflows.build_site import build_course
from tests.lesson_cases import each_lesson
from tests.project_copy import ADDED, copy_built, copy_project, with_added_lesson

pytestmark = [pytest.mark.slow, pytest.mark.long(50)]


@each_lesson
@pytest.mark.parametrize("variant", ["student", "answer"])
def test_each_variant_has_index_page_and_notebook(built_site, variant, stem):
    for name in ("index.html", f"{stem}.html", notes_notebook(stem)):
        assert (built_site / variant / name).stat().st_size > 500, name
    nb = json.loads((built_site / variant / notes_notebook(stem)).read_text("utf-8"))
    assert nb["metadata"]["course"] == {"lesson": stem, "variant": variant, "notebook": "notes"}
    assert f'href="{stem}.html"' in (built_site / variant / "index.html").read_text("utf-8")


def test_answer_page_shows_the_executed_7b_table(built_site):
    page = (built_site / "answer" / "lesson05.html").read_text("utf-8")
    assert "cell-output-stdout" in page
    assert "38.5     26.2     14.0" in page and "dp=1 时三档相等 ✓" in page


def test_answer_notebook_carries_the_solution_output(built_site):
    nb = json.loads((built_site / "answer" / "lesson05-notes.ipynb").read_text("utf-8"))
    solution = [c for c in nb["cells"] if c["metadata"].get("course", {}).get("course_role") == "solution"]
    assert "".join(solution[0]["outputs"][0]["text"]).count("21.0") == 3


def test_exercise_is_marked_not_run(built_site):
    page = (built_site / "student" / "lesson05.html").read_text("utf-8")
    assert 'class="cell cell-not-run"' in page and "构建时不执行" in page


def test_rebuild_with_nothing_changed_is_a_no_op(built_site, project_root):
    before = (built_site / "student" / "lesson05.html").stat().st_mtime_ns
    start = time.perf_counter()
    result = build_course(project_root)
    assert result.up_to_date and time.perf_counter() - start < 1.0
    assert (built_site / "student" / "lesson05.html").stat().st_mtime_ns == before


def test_a_failing_cell_stops_the_build_and_keeps_the_old_site(built_site, tmp_path_factory, tmp_path):
    proj = copy_built(with_added_lesson(tmp_path_factory), tmp_path / "project")  # a built site, made once per run
    shutil.rmtree(proj / "_site" / "answer")  # the student site alone, as a student build leaves it
    old = (proj / "_site" / "student" / "lesson05.html").read_bytes()
    lesson = proj / "lessons" / "lesson05.qmd"
    text = lesson.read_text("utf-8")
    lesson.write_text(
        text.replace("## 代码填空题", "```{python}\n#| label: boom\n1 / 0\n```\n\n## 代码填空题", 1), "utf-8"
    )
    line = lesson.read_text("utf-8").splitlines().index("#| label: boom")
    with pytest.raises(CourseError, match=rf"lesson05.qmd, line {line}, cell boom: cell raised ZeroDivisionError"):
        build_course(proj, variants=["student"])
    assert (proj / "_site" / "student" / "lesson05.html").read_bytes() == old
    assert sorted(p.name for p in (proj / "_site").iterdir()) == ["student"]


def test_a_missing_image_stops_the_build_before_anything_is_written(built_site, tmp_path):
    proj = copy_project(tmp_path / "project")
    lesson = proj / "lessons" / "lesson05.qmd"
    lesson.write_text(lesson.read_text("utf-8").replace("## 本课目标", "![x](../assets/none.png)\n\n## 本课目标", 1))
    with pytest.raises(CourseError, match=r"lesson05.qmd, line \d+: image ../assets/none.png not found"):
        build_course(proj)
    assert not (proj / "_site").exists() or not any((proj / "_site").iterdir())


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_both_variants_teach_the_measurements_figure_first_full_table_collapsed(built_site, variant):
    page = (built_site / variant / "lesson05.html").read_text("utf-8")
    section = page.split("扩展（选读）", 1)[1]
    figure, rest = section.split('id="cell-lab-summary"', 1)
    assert (
        'src="data:image/png;base64,' in figure
        and "图 5-5：每个 rank 的状态内存（实测）与每步每个 rank 的通信（按记录的集合通信计算）" in figure
    )
    assert 'alt="条形图' in figure and "LabFigure" not in page
    summary, full = rest.split('id="cell-lab-measured"', 1)
    assert summary.count("✓ 与公式一致") == 5 and summary.count("≠（原因见下）") == 2 and "0.667 倍" in summary
    assert full.index("<table") > 0 and "手写 ZeRO-3" in full and "ZeroRedundancyOptimizer" in full
    collapsed = page.split("完整结果表", 1)[0].rsplit("<details", 1)[1]
    assert "</details>" not in collapsed  # the full table sits inside a closed <details>


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_both_variants_state_fsdp2s_between_steps_state_as_the_lab_measured_it(built_site, variant):
    """The 实测 note's between-steps sentence is the one lesson_view derives from the report the build used."""
    from course.lab.lesson_view import between_steps_phrase, fsdp_refinement
    from course.lab.report_file import read_report
    from course.site.check_markup import _VisibleText

    measured = built_site.parent / "assets" / "lab" / "zero_measured.json"
    report = read_report(measured)
    n = max(r["ranks"] for r in report["rows"])
    row = next(r for r in report["rows"] if r["implementation"] == "fsdp2_reshard" and r["ranks"] == n)
    parser = _VisibleText()
    parser.feed((built_site / variant / "lesson05.html").read_text("utf-8"))
    text = "".join(parser.parts)
    stated = between_steps_phrase(report, row).split("：")[0]  # up to the reason, which holds code the page styles
    assert stated in text and stated.endswith("每个 rank 的状态为 12Ψ/N")
    assert "步与步之间每卡状态恰为" not in text
    assert "实验（N = " in fsdp_refinement(measured) and f"实验（N = {n}）" in text


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_both_variants_drop_the_status_leftover_and_list_the_readings(built_site, variant):
    from course.site.check_markup import _VisibleText

    page = (built_site / variant / "lesson05.html").read_text("utf-8")
    parser = _VisibleText()
    parser.feed(page)
    text = "".join(parser.parts)
    assert "状态：" not in text and "未开始" not in text
    readings = text.rsplit("官方主参考", 1)[1]  # the section, not the table of contents
    assert "Ultra-Scale Playbook" in readings and "PyTorch distributed documentation" in readings
    assert 'href="https://huggingface.co/spaces/nanotron/ultrascale-playbook"' in page


def test_student_site_offers_the_released_assignment(built_site):
    index = (built_site / "student" / "index.html").read_text("utf-8")
    assert 'href="lesson05.ipynb"' in index and 'href="lesson05-notes.ipynb"' in index and "提交作业" in index
    nb = json.loads((built_site / "student" / "lesson05.ipynb").read_text("utf-8"))
    graded = [c["metadata"]["nbgrader"] for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")]
    assert sorted(g["grade_id"] for g in graded) == sorted(
        [
            "test-formulas",
            "test-fp32-accum",
            "test-comm-volume",
            "test-dp1-cross-check",
            "answer-Q1",
            "answer-Q2",
            "answer-Q3",
        ]
    )
    assert all("checksum" in g for g in graded)  # stock nbgrader released it
    assert not (built_site / "answer" / "lesson05.ipynb").exists()
    assert 'href="lesson05.ipynb"' not in (built_site / "answer" / "index.html").read_text("utf-8")


def test_unconverted_markup_stops_the_build_naming_the_line(built_site, tmp_path):
    """The old bug: a callout title with \\" inside is not a div to pandoc; its ::: line leaked onto the page."""
    proj = copy_project(tmp_path / "project")
    lesson = proj / "lessons" / "lesson05.qmd"
    text = lesson.read_text("utf-8").replace(
        "## 本课目标", '::: {.callout-note title="实验对\\"FSDP 就是 ZeRO-3\\"的细化"}\n说明。\n:::\n\n## 本课目标', 1
    )
    lesson.write_text(text, "utf-8")
    line = next(n for n, s in enumerate(text.splitlines(), start=1) if '\\"FSDP' in s)
    with pytest.raises(
        CourseError, match=rf"lesson05.qmd, line {line}: student/lesson05.html shows unconverted markup"
    ):
        build_course(proj, variants=["student"])
    assert not (proj / "_site" / "student").exists()


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_chinese_text_uses_chinese_quotes(built_site, variant):
    """ASCII "…" around Chinese renders as “…“ with smart quotes; the lesson writes “ ” (code is exempt)."""
    from course.site.check_markup import _VisibleText

    parser = _VisibleText()
    parser.feed((built_site / variant / "lesson05.html").read_text("utf-8"))
    text = "".join(parser.parts)
    assert text.count("“") == text.count("”") > 10
    assert not re.findall(r'[\u4e00-\u9fff]["\u201c\u201d]?"|"[\u4e00-\u9fff]', text)


def test_an_edit_rebuilds_its_lesson_alone_and_a_title_edit_rebuilds_every_lesson(
    built_site, tmp_path_factory, tmp_path
):
    """The other lesson's files stay the same files (hard-linked from the old site); the index still lists both.
    The project with a lesson added and built is made once per run (tests/project_copy.py); this test's copy of it
    is up to date."""
    proj = copy_built(with_added_lesson(tmp_path_factory), tmp_path / "project")
    assert build_course(proj).up_to_date
    site = proj / "_site"
    kept = {p: p.stat().st_ino for v in ("student", "answer") for p in (site / v).glob("lesson05*") if p.is_file()}
    kept |= {p: p.stat().st_ino for v in ("student", "answer") for p in (site / v).glob("lesson05/*")}  # its scripts
    assert len(kept) == 10  # pages and notebooks, the answer site's departures page, each site's two page assets
    qmd = proj / "lessons" / f"{ADDED}.qmd"
    qmd.write_text(qmd.read_text("utf-8").replace("## 本课目标", "## 本课目标\n\n新加的一句。", 1), "utf-8")
    result = build_course(proj)
    assert result.rebuilt == {"student": [ADDED], "answer": [ADDED]}
    assert {p: p.stat().st_ino for p in kept} == kept and not set(kept) & set(result.pages)
    assert "新加的一句" in (site / "answer" / f"{ADDED}.html").read_text("utf-8")
    index = (site / "student" / "index.html").read_text("utf-8")
    assert all(f'href="{assignment_notebook(s)}"' in index for s in ("lesson05", ADDED))
    assert build_course(proj).up_to_date
    qmd.write_text(qmd.read_text("utf-8").replace("测试添加的一课", "改了标题的一课", 1), "utf-8")
    assert build_course(proj, variants=["student"]).rebuilt == {"student": ["lesson05", ADDED]}
    assert "改了标题的一课" in (site / "student" / "index.html").read_text("utf-8")
