"""Which notebook a site runs in the browser and what its lesson page's block says (course.site.lite_page) follow
whether the variant offers the assignment (course.lesson.variants), not its name."""

from __future__ import annotations

from dataclasses import replace

from course.lesson.notebook_names import assignment_notebook, notes_notebook
from course.lesson.variants import ANSWER, STUDENT
from course.site.lite_page import (
    DOWNLOAD,
    DOWNLOAD_UNKNOWN,
    BrowserRun,
    browser_notebook,
    download_megabytes,
    page_markdown,
    with_download_size,
)
from course.site.plan import make_plan
from tests.lesson_cases import ROOT

HAND_IN = "再提交（装有本课程工具时可先用 `course check` 检查）"


def test_a_site_that_offers_the_assignment_runs_it_and_says_how_to_hand_it_in():
    plan, run = make_plan(ROOT), BrowserRun("lesson05", "lesson05.ipynb")
    assert (
        browser_notebook(STUDENT, "lesson05")
        == browser_notebook("student", "lesson05")
        == assignment_notebook("lesson05")
    )
    assert HAND_IN in page_markdown(plan, STUDENT, run)
    assert browser_notebook(ANSWER, "lesson05") == notes_notebook("lesson05")
    block = page_markdown(plan, "answer", run)
    assert HAND_IN not in block and f"这是{ANSWER.label} notebook" in block


def test_the_offer_is_the_models():
    plan, run = make_plan(ROOT), BrowserRun("lesson05", "lesson05.ipynb")
    withheld, offered = replace(STUDENT, offers_assignment=False), replace(ANSWER, offers_assignment=True)
    assert browser_notebook(withheld, "lesson05") == notes_notebook("lesson05")
    assert HAND_IN not in page_markdown(plan, withheld, run)
    assert browser_notebook(offered, "lesson05") == assignment_notebook("lesson05")
    assert HAND_IN in page_markdown(plan, offered, run)


def test_a_first_open_downloads_at_most_every_file_of_lite_but_the_notebooks_in_mb_rounded_up(tmp_path):
    lite = tmp_path / "lite"
    sizes = {"static/pyodide/pyodide.asm.wasm": 2_000_000, "index.html": 1, "files/lesson05.ipynb": 10**7}
    for path, size in sizes.items():
        (lite / path).parent.mkdir(parents=True, exist_ok=True)
        (lite / path).write_bytes(b"x" * size)
    assert download_megabytes(lite) == 3  # 2 000 001 bytes; the notebook is not counted
    (lite / "index.html").unlink()
    assert download_megabytes(lite) == 2


def test_the_block_says_the_size_once_lite_is_built_and_says_it_again_when_it_changes():
    block = page_markdown(make_plan(ROOT), STUDENT, BrowserRun("lesson05", "lesson05.ipynb"))
    assert f"[{DOWNLOAD_UNKNOWN}]{{.{DOWNLOAD}}}" in block and "MB" not in block  # no number typed into the page
    page = f'<p>（JupyterLite，Python 由 Pyodide 运行<span class="{DOWNLOAD}">{DOWNLOAD_UNKNOWN}</span>）。</p>'
    sized = with_download_size(page, 47)
    assert sized == page.replace(DOWNLOAD_UNKNOWN, "，第一次打开最多下载 47 MB")
    assert with_download_size(sized, 48) == page.replace(DOWNLOAD_UNKNOWN, "，第一次打开最多下载 48 MB")
    assert with_download_size("<p>不能在浏览器中运行</p>", 47) == "<p>不能在浏览器中运行</p>"
