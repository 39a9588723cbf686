"""The lesson's assignment in the browser (JupyterLite, course.site.lite_site): in headless Chromium, from a loopback
HTTP server, every request that would leave the machine aborted.

For each graded lesson whose notebook runs in Pyodide, on the student site as `course preview` serves it: the lesson
page's "在浏览器中运行" link opens the assignment with a running kernel; Run All on the blank notebook stops at the
blanks; with the reference solutions typed in, Run All again passes every visible check; the work survives a reload
(browser storage); File → Download gives <stem>.ipynb, which `course grade` and stock `nbgrader autograde` both grade
to full marks. Opened from file://, the page and the lite entry say in Chinese that they need a web address. After a
re-release the saved work is neither replaced nor hiding the news: the page says a new version is out, and its button
keeps the old work under another name and opens the new one. One browser per module (kernel start ≈ 20-30 s).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import time
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.lesson_cases import GRADED, ROOT, each_graded_lesson, lesson, solutions
from tests.loopback import serving
from tests.offline_page import keep_offline
from tests.scratch_project import share_lite_bytecode

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.long(68)]
KERNEL_START = 180_000  # ms: Pyodide's first start on a loaded 2-core machine (about 20 s quiet)


@pytest.fixture(scope="module")
def serve():
    """Start a loopback server for a folder; return its base URL (each folder its own origin, so its own storage)."""
    with contextlib.ExitStack() as servers:
        yield lambda folder: servers.enter_context(serving(folder))


def guarded(browser, base: str):
    """A new page that may load only BASE (and data:/blob: URLs); the list of the aborted requests. The guard is on
    the page's browser context: a page's own routes never see its workers' requests, the kernel's among them
    (Pyodide, its wheels)."""
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 900})
    return page, keep_offline(page.context, (base + "/", "data:", "blob:"))


def saved_copy(page, logs: list[str]) -> str:
    """What the page's "在浏览器中运行" block found of its notebook in this browser (data-lite-saved)."""
    block = page.locator(".lite-launch[data-lite-saved]")
    try:
        block.wait_for(state="attached", timeout=60_000)
    except PlaywrightTimeout:
        fetched = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
        pytest.fail(f"the block never said what it found; console: {logs}; fetched: {fetched}")
    return block.get_attribute("data-lite-saved")


def browser_run(stem: str):
    """Whether the built site offers STEM's assignment in the browser (course.site.lite_page decides)."""
    from course.lesson.notebook_names import assignment_notebook
    from course.site.lite_page import browser_run as decide
    from course.site.plan import make_plan

    return decide(make_plan(ROOT), lesson(stem), ROOT / "_site" / "student" / assignment_notebook(stem))


def wait_until_saved(page, file: list[str], timeout_s: float = 30) -> None:
    """Wait until the browser's storage holds FILE ([storage, path, text]) with its text: saved, not just typed.
    (Polled here: wait_for_function takes an async check's promise for a truthy answer and does not wait.)"""
    deadline = time.monotonic() + timeout_s
    while not ((held := page.evaluate(STORED, file)).get("record") or {}).get("holds_text"):
        assert time.monotonic() < deadline, f"{file[1]} not saved with its text within {timeout_s} s: {held}"
        page.wait_for_timeout(100)


def menu(page, top: str, command: str) -> None:
    """Click a menu bar entry, then the item of that command (JupyterLab's command id)."""
    page.get_by_role("menuitem", name=top, exact=True).click()
    page.locator(f"li[data-command='{command}']").click()


def cell_index(notebook: Path, grade_id: str) -> int:
    """The position of the cell with this nbgrader grade id in the notebook file."""
    cells = nbformat.read(notebook, as_version=4).cells
    return next(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def type_into(page, index: int, code: str) -> None:
    """Replace the text of the INDEXth cell's editor with CODE, as a student typing (pasting) it."""
    editor = page.locator(".jp-NotebookPanel .jp-Cell").nth(index).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(code)


# What the browser's JupyterLite storage (IndexedDB) holds of one file, never creating its database: the databases,
# the stores of this one, and the file's record, with whether its content holds TEXT.
STORED = """async ([name, path, text]) => {
  const all = (await indexedDB.databases()).map(d => d.name);
  if (!all.includes(name)) return {databases: all};
  const db = await new Promise(r => { const q = indexedDB.open(name); q.onsuccess = () => r(q.result); });
  const stores = [...db.objectStoreNames];
  const record = stores.includes('files') ? await new Promise(r => {
    const q = db.transaction('files').objectStore('files').get(path); q.onsuccess = () => r(q.result); }) : undefined;
  db.close();
  return {databases: all, stores, record: record && {type: record.type, content: typeof record.content,
    last_modified: record.last_modified, holds_text: JSON.stringify(record.content || null).includes(text)}}; }"""
# The execution counts the prompts of the code cells with their source shown show (the checks helper's source is
# hidden, and so is its prompt); a cell not run, or running, shows none (null).
COUNTS = """() => [...document.querySelectorAll(
    '.jp-NotebookPanel .jp-CodeCell:not(:has(.jp-InputPlaceholder)) .jp-InputPrompt')]
  .map(e => { const m = /\\[(\\d+)\\]/.exec(e.innerText); return m ? +m[1] : null; })"""
# Every code cell with its source shown has run since the count N.
ALL_RAN_AFTER = f"n => {{ const c = ({COUNTS})(); return c.length > 0 && c.every(k => k !== null && k > n); }}"
# What a student sees when the notebook opens: the first cell's heading, the first code cell's text, the code cells
# whose source is hidden (and what they show), and whether every code editor wraps its long lines (a phone's editor
# is narrower than a line of the exercise).
OPENING = """() => { const cells = [...document.querySelectorAll('.jp-NotebookPanel .jp-Cell')];
  const code = cells.filter(c => c.classList.contains('jp-CodeCell'));
  const hidden = code.filter(c => c.querySelector('.jp-InputPlaceholder'));
  const editor = c => c.querySelector('.jp-InputArea .cm-content');
  return {heading: (cells[0].querySelector('.jp-RenderedMarkdown h1') || {innerText: ''}).innerText,
          first_code: editor(code[0]) ? editor(code[0]).innerText : '',
          hidden: hidden.length, hidden_text: hidden.map(c => c.innerText).join(' '),
          wrapping: code.filter(c => editor(c)).every(c => editor(c).classList.contains('cm-lineWrapping'))}; }"""
KERNEL_READY = ".jp-KernelStatus-success"  # the toolbar's kernel status: started and idle
ERRORS = ".jp-NotebookPanel .jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"


@pytest.fixture(scope="module")
def worked(built_site, chromium, tmp_path_factory):
    """Per lesson, once: a student's session in the browser, from the lesson page to the downloaded notebook, on
    the student site as `course preview` serves it."""
    from course.site.serve_preview import PreviewServer

    done = {}
    with PreviewServer(built_site / "student", 0) as server:
        base = server.url.rstrip("/")

        def work(stem: str) -> dict:
            if stem not in done:
                done[stem] = _work(
                    chromium, base, stem, built_site / "student", tmp_path_factory.mktemp(f"lite-{stem}")
                )
            return done[stem]

        yield work


def _work(browser, base: str, stem: str, site: Path, tmp: Path) -> dict:
    """Open the lesson page, follow its link, run the blank notebook, type the solutions, run, save, download."""
    page, remote = guarded(browser, base)
    missing = []  # files the site's pages ask for and the site lacks (JupyterLite's included)
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 and r.url.startswith(base) else None)
    page.goto(f"{base}/{stem}.html")
    link = page.locator(".lite-launch a.lite-link")
    seen = {"link": link.count(), "href": link.first.get_attribute("href")}
    link.first.click()
    page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=60_000)
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell .jp-RenderedMarkdown h1", timeout=30_000)
    seen["opening"] = page.evaluate(OPENING)
    # for a second or more after the cells show (longer on a loaded machine) the notebook has no kernel yet: the
    # toolbar reads none, then initializing and connecting; the student runs all once it says the kernel is ready
    page.wait_for_selector(KERNEL_READY, timeout=KERNEL_START)
    menu(page, "Run", "runmenu:run-all")
    page.wait_for_selector(ERRORS, timeout=KERNEL_START)
    seen["blank_error"] = page.locator(ERRORS).first.inner_text()
    release = site / "lite" / "files" / browser_run(stem).path
    for label, code in solutions(stem).items():
        type_into(page, cell_index(release, label), code)
    seen["blank_run"] = max(k for k in page.evaluate(COUNTS) if k is not None)
    menu(page, "Run", "runmenu:run-all")  # again, as a student does: the kernel keeps what the blank run defined
    page.wait_for_function(ALL_RAN_AFTER, arg=seen["blank_run"], timeout=KERNEL_START)
    # the kernel's status says the run is over: the notebook's execution indicator, after a Run All that stopped at
    # an error, was still not idle 60 s after this second run
    page.wait_for_selector(KERNEL_READY, timeout=60_000)
    seen["errors_with_solution"] = [e.inner_text()[:300] for e in page.locator(ERRORS).all()]
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !document.querySelector('.jp-NotebookPanel.jp-mod-dirty')", timeout=30_000)
    with page.expect_download() as download:
        menu(page, "File", "docmanager:download")
    seen["download_name"] = download.value.suggested_filename
    seen["download"] = tmp / f"{stem}.ipynb"
    download.value.save_as(seen["download"])
    page.reload()
    page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=60_000)
    label, code = next(iter(solutions(stem).items()))
    blank = nbformat.read(release, as_version=4).cells[cell_index(release, label)].source
    typed = next(line.strip() for line in code.splitlines() if line.strip() and line.strip() not in blank)
    try:
        page.wait_for_function(
            "t => document.querySelector('.jp-NotebookPanel').innerText.includes(t)", arg=typed, timeout=15_000
        )
        seen["kept_after_reload"] = True
    except PlaywrightTimeout:
        seen["kept_after_reload"] = typed
    seen["release"], seen["remote"], seen["missing"] = release, remote, missing
    page.close()
    return seen


@each_graded_lesson
def test_the_page_links_the_assignment_in_the_browser_or_says_why_not(built_site, stem):
    run = browser_run(stem)
    page = (built_site / "student" / f"{stem}.html").read_text("utf-8")
    index = (built_site / "student" / "index.html").read_text("utf-8")
    if run.path is None:
        assert "lite-unavailable" in page and "lite-link" not in page and run.reason
        return
    assert page.count('class="lite-link"') == 1 and f"lite/notebooks/index.html?path={run.path}" in page
    assert f"lite/notebooks/index.html?path={run.path}" in index  # the index shows it per lesson
    assert (built_site / "student" / "lite" / "files" / run.path).is_file()


@each_graded_lesson
def test_the_notebook_opens_on_its_title_with_the_checks_helper_collapsed_and_wrapping_code(worked, stem):
    if browser_run(stem).path is None:
        pytest.skip("the lesson does not run in the browser (its page says why)")
    opening = worked(stem)["opening"]
    assert opening["heading"].startswith(lesson(stem).title), opening["heading"]
    assert opening["first_code"] and "_CourseChecks" not in opening["first_code"]  # the exercise, not the helper
    assert opening["hidden"] == 1 and "_CourseChecks" not in opening["hidden_text"]  # collapsed, source hidden
    assert opening["wrapping"]
    assert worked(stem)["missing"] == []  # no 404: Notebook 7's tab icons are shipped (lite_site.PAGE_ICONS)


@each_graded_lesson
def test_the_link_opens_the_notebook_with_a_kernel_that_stops_at_the_blanks(worked, stem):
    if browser_run(stem).path is None:
        pytest.skip("the lesson does not run in the browser (its page says why)")
    seen = worked(stem)
    assert seen["link"] == 1 and seen["href"].startswith("lite/notebooks/index.html?path=")
    assert "NameError" in seen["blank_error"] and "______" in seen["blank_error"]
    assert not seen["remote"]  # nothing left the machine: Pyodide, its wheels and the app all came from the site


@each_graded_lesson
def test_with_the_reference_solution_every_check_passes_and_the_work_survives_a_reload(worked, stem):
    if browser_run(stem).path is None:
        pytest.skip("the lesson does not run in the browser (its page says why)")
    seen = worked(stem)
    code_cells = [c for c in nbformat.read(seen["release"], as_version=4).cells if c.cell_type == "code"]
    assert not seen["errors_with_solution"]
    ran = [c.execution_count for c in nbformat.read(seen["download"], as_version=4).cells if c.cell_type == "code"]
    first = seen["blank_run"] + 1
    assert ran == list(range(first, first + len(code_cells)))  # every cell ran again in order, the checks helper too
    assert seen["kept_after_reload"] is True, seen["kept_after_reload"]
    assert not seen["remote"]


@each_graded_lesson
def test_the_downloaded_notebook_grades_full_marks_with_course_grade_and_stock_autograde(worked, tmp_path, stem):
    if browser_run(stem).path is None:
        pytest.skip("the lesson does not run in the browser (its page says why)")
    from nbgrader.api import Gradebook

    from course.grading.gradebook import configured_gradebook
    from course.workflows.grade import grade_assignment, run_nbgrader

    seen = worked(stem)
    assert seen["download_name"] == f"{stem}.ipynb"  # the name nbgrader expects: what the student hands in
    downloaded = nbformat.read(seen["download"], as_version=4)
    assert downloaded.metadata.kernelspec.name == "python"  # JupyterLite's Pyodide kernel, graded with no flag
    shipped = nbformat.read(seen["release"], as_version=4)
    assert [c.metadata.get("nbgrader") for c in downloaded.cells] == [c.metadata.get("nbgrader") for c in shipped.cells]
    roots = {"course": tmp_path / "course" / "autograder", "stock": tmp_path / "stock" / "autograder"}
    _course_root(roots["course"], stem)
    shutil.copytree(roots["course"], roots["stock"])  # released once: the same course root, graded two ways
    for root in roots.values():
        folder = root / "submitted" / "browser-student" / stem
        folder.mkdir(parents=True)
        shutil.copyfile(seen["download"], folder / f"{stem}.ipynb")
    run = grade_assignment(roots["course"], stem)
    assert not run.student("browser-student").flagged
    run_nbgrader(roots["stock"], "autograde", stem)
    for root in roots.values():
        with Gradebook(configured_gradebook(root).url) as gb:
            nb = gb.find_submission_notebook(stem, stem, "browser-student")
            assert nb.max_code_score > 0 and nb.code_score == nb.max_code_score, root


def _course_root(root: Path, stem: str) -> None:
    """A course root holding this project's nbgrader config, rubric, checks and source of STEM, released afresh."""
    from course.workflows.grade import release

    source = ROOT / "autograder"
    root.mkdir(parents=True)
    shutil.copy(source / "nbgrader_config.py", root)
    for folder in ("rubrics", "checks"):
        shutil.copytree(source / folder, root / folder)
    shutil.copytree(source / "source" / stem, root / "source" / stem)
    release(root, stem)


def test_opened_from_disk_the_page_the_lite_entry_and_the_index_say_they_need_a_web_address(built_site, browser):
    stem = next(s for s in GRADED if browser_run(s).path)
    page = browser.new_page()
    page.goto((built_site / "student" / f"{stem}.html").as_uri())
    note = page.locator(".lite-launch .lite-file-note")
    note.wait_for(timeout=10_000)
    assert note.is_visible() and "网址" in note.inner_text() and "course preview" in note.inner_text()
    page.goto(
        (built_site / "student" / "lite" / "notebooks" / "index.html").as_uri() + f"?path={browser_run(stem).path}"
    )
    page.wait_for_function(
        "() => document.body && document.body.innerText.includes('需要通过网址打开')", timeout=10_000
    )
    assert "course preview" in page.inner_text("body")
    back = page.get_by_role("link", name="← 返回课程首页")
    assert back.get_attribute("href") == "../../index.html"  # not a dead end: the front page lists every lesson
    back.click()
    page.wait_for_load_state("load")
    assert page.url == (built_site / "student" / "index.html").as_uri()
    link = page.locator("a.lite-index-link").first  # the index's link carries the lesson page's note
    note = page.locator("a.lite-index-link + .lite-file-note").first
    assert link.is_visible() and note.is_visible() and "网址" in note.inner_text()
    page.close()


def test_a_re_release_does_not_replace_the_saved_work_and_the_page_says_a_new_version_is_out(
    built_site, serve, browser, tmp_path
):
    """Work saved on release 1 stays in the browser; after release 2 the page says so, and its button keeps that
    work under another name and opens release 2."""
    from course.site.lite_site import build_lite, storage_name
    from course.site.plan import make_plan

    stem = next(s for s in GRADED if browser_run(s).path)
    site = tmp_path / "site"
    shutil.copytree(built_site / "student", site, copy_function=os.link)
    base = serve(site)
    page, remote = guarded(browser, base)
    logs = []
    page.on("console", lambda m: logs.append(m.text[:200]) if m.type == "error" else None)
    page.on("pageerror", lambda e: logs.append(str(e)))
    page.goto(f"{base}/{stem}.html")
    assert saved_copy(page, logs) == "none"  # nothing saved in this browser yet
    page.locator(".lite-launch a.lite-link").click()
    page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=60_000)
    release = site / "lite" / "files" / browser_run(stem).path
    type_into(page, cell_index(release, next(iter(solutions(stem)))), "# 我在第一版里写的进度\n")
    page.keyboard.press("Control+s")
    plan = make_plan(ROOT)
    wait_until_saved(page, [storage_name(plan, "student"), release.name, "我在第一版里写的进度"])
    page.goto(f"{base}/{stem}.html")  # the page compares the saved copy with the release it fetches
    assert saved_copy(page, logs) == "current"
    assert page.locator(".lite-new-release").count() == 0  # saved work of the current release: nothing to say

    second = nbformat.read(release, as_version=4)  # release 2: the instructor fixed a read-only cell's text
    locked = next(c for c in second.cells if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("locked"))
    locked.source += "\n\n（第二版：修正了一处说明。）"
    notebook = tmp_path / f"{stem}.ipynb"
    nbformat.write(second, notebook)
    plan = dataclasses.replace(plan, config=dataclasses.replace(plan.config, cache_dir=str(tmp_path / "cache")))
    share_lite_bytecode(plan.cache_dir)  # the runtime's compiled bytecode: the same for every build, made once
    shutil.rmtree(site / "lite")
    build_lite(plan, "student", site, {stem: notebook})

    page.goto(f"{base}/{stem}.html")
    assert saved_copy(page, logs) == "old"
    button = page.locator(".lite-launch .lite-new-release button.lite-keep-old")
    assert "新版本" in page.locator(".lite-new-release").inner_text()
    kept_as = button.get_attribute("data-keep-as")
    button.click()
    page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=60_000)
    page.wait_for_function(
        "() => document.querySelector('.jp-NotebookPanel').innerText.includes('第二版')", timeout=15_000
    )
    assert "我在第一版里写的进度" not in page.locator(".jp-NotebookPanel").inner_text()
    page.goto(f"{base}/lite/notebooks/index.html?path={kept_as}")
    page.wait_for_function(
        "() => (document.querySelector('.jp-NotebookPanel') || document.body).innerText"
        ".includes('我在第一版里写的进度')",
        timeout=60_000,
    )  # the old work, kept
    assert not remote
    page.close()
