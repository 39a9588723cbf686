"""course build: both variants built, executed, offline; a no-op rebuild is instant; failures leave _site alone."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from course.site.pipeline import build_course
from course.config import load_config
from course.errors import CourseError

pytestmark = pytest.mark.slow

SITE_FILES = ["index.html", "lesson05.html", "lesson05.ipynb"]


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_each_variant_has_index_page_and_notebook(built_site, variant):
    for name in SITE_FILES:
        assert (built_site / variant / name).stat().st_size > 500, name
    nb = json.loads((built_site / variant / "lesson05.ipynb").read_text("utf-8"))
    assert nb["metadata"]["course"]["variant"] == variant


def test_answer_page_shows_the_executed_7b_table(built_site):
    page = (built_site / "answer" / "lesson05.html").read_text("utf-8")
    assert "cell-output-stdout" in page
    assert "38.5     26.2     14.0" in page and "dp=1 时三档相等 ✓" in page


def test_answer_notebook_carries_the_solution_output(built_site):
    nb = json.loads((built_site / "answer" / "lesson05.ipynb").read_text("utf-8"))
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


def _copy_project(src: Path, dst: Path) -> Path:
    """A throwaway project with every build input of the real one (generated assets left out)."""
    config = load_config(src)
    for name in config.build_inputs:
        if (src / name).is_dir():
            shutil.copytree(src / name, dst / name, ignore=lambda d, names: [
                n for n in names if any((Path(d) / n) == src / g for g in config.generated_assets)])
        else:
            shutil.copy(src / name, dst / name)
    os.symlink(src / "node_modules", dst / "node_modules")
    return dst


def test_a_failing_cell_stops_the_build_and_keeps_the_old_site(project_root, tmp_path):
    proj = _copy_project(project_root, tmp_path)
    build_course(proj, variants=["student"])
    old = (proj / "_site" / "student" / "lesson05.html").read_bytes()
    lesson = proj / "lessons" / "lesson05.qmd"
    text = lesson.read_text("utf-8")
    lesson.write_text(text.replace("## 代码填空题", "```{python}\n#| label: boom\n1 / 0\n```\n\n## 代码填空题", 1), "utf-8")
    line = lesson.read_text("utf-8").splitlines().index("#| label: boom")
    with pytest.raises(CourseError, match=rf"lesson05.qmd, line {line}, cell boom: cell raised ZeroDivisionError"):
        build_course(proj, variants=["student"])
    assert (proj / "_site" / "student" / "lesson05.html").read_bytes() == old
    assert sorted(p.name for p in (proj / "_site").iterdir()) == ["student"]


def test_a_missing_image_stops_the_build_before_anything_is_written(project_root, tmp_path):
    proj = _copy_project(project_root, tmp_path)
    lesson = proj / "lessons" / "lesson05.qmd"
    lesson.write_text(lesson.read_text("utf-8").replace("## 本课目标", "![x](../assets/none.png)\n\n## 本课目标", 1))
    with pytest.raises(CourseError, match=r"lesson05.qmd, line \d+: image ../assets/none.png not found"):
        build_course(proj)
    assert not (proj / "_site").exists() or not any((proj / "_site").iterdir())


@pytest.mark.parametrize("variant", ["student", "answer"])
def test_both_variants_show_the_measured_table_and_figure(built_site, variant):
    page = (built_site / variant / "lesson05.html").read_text("utf-8")
    table = page.split('id="cell-lab-measured"', 1)[1].split('id="cell-lab-figure"', 1)[0]
    assert "<table" in table and "手写 ZeRO-3" in table and "FSDP2" in table and "ZeroRedundancyOptimizer" in table
    figure = page.split('id="cell-lab-figure"', 1)[1].split("</div>\n</div>", 1)[0]
    assert 'src="data:image/png;base64,' in figure and "图 5-5：实测与教材公式" in page
