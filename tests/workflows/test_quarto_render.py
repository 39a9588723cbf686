"""Quarto renders the course as well as the pandoc path: plain `quarto render --profile student|answer` (as a Quarto
user types it) and `course build --renderer quarto`, with a real Quarto, on a copy of the project with a lesson added
by `course new` whose exercise and solution draw a matplotlib figure.

Both ways of rendering are shared by every check (module fixtures): plain `quarto render --profile answer` makes the
answer site, `course build --renderer quarto` the student site in the same checkout, and a plain single-page render over
the latter rewrites its page with the very bytes course build wrote. Checked on both sites: only the course's
lessons are rendered; each page has the pandoc page's h2/h3 headings, figure captions and number of formulas; in
Chromium, with every request off the machine aborted, every formula is typeset and nothing is requested; "第 N 课" is a
link exactly when lesson N exists; every local link and image resolves; the index lists every lesson; nothing scrolls
sideways at 390 px; no solution is in the student site (what `course publish` commits) and no freeze cache is left; the
in-browser notebooks (lite/ at the site's root) are those of the pandoc site, each lesson page says what the pandoc page
says about running it in the browser, its link and the index's open a notebook the site holds, and opened from file://
the student page adds the pandoc page's note that it needs a web address (site_libs/course-lite.js); the answer site has
each lesson's departures page, its places linked to Quarto's own anchors, and the student site none; lesson 5's
calculator shows the lesson's numbers on Quarto's pages of both variants. As a student reads the pages
(tests/site/page_checks.py, as for the pandoc site): diagrams drawn the pandoc pages' way (labels in their boxes,
readable on their fill, at 390 and 1280 px), no link inside a link (Quarto's sidebar and next link hold lesson titles),
search snippets without TeX, and from file:// the search says it needs the address.

Needs Quarto 1.7+: COURSE_TEST_QUARTO (set by `make test` from ../shared/tools/quarto/setup.sh) or `quarto` on PATH.
"""

from __future__ import annotations

import html
import json
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course.lesson.departures import load_departures
from course.lesson.notebook_names import assignment_notebook, notes_notebook
from course.lesson.parse_qmd import parse_lesson
from course.site.check_leaks import script_leaks, solution_leaks
from course.site.departures_page import pandoc_page
from course.site.fingerprint import STAMP
from course.site.lite_page import DOWNLOAD_UNKNOWN
from course.site.plan import make_plan
from tests.offline_page import keep_offline
from tests.project_copy import ADDED, ADDED_SENTENCE, copy_built, with_added_lesson
from tests.shared_browser import kept_open
from tests.site.answer_leaks import answer_only_snippets, lite_shipped
from tests.site.page_checks import (
    CAPTION_STYLES,
    DIAGRAM_COUNT,
    SNIPPET_SOURCE,
    UNTYPESET,
    figures,
    mermaid_problems,
    nested_links,
    opens_full_size,
)

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.long(235)]

ROOT_LESSON5 = Path(__file__).resolve().parents[2] / "lessons" / "lesson05.qmd"
VARIANTS = ("student", "answer")
# How each variant is rendered here: `course build --renderer quarto` renders the student site, which `course publish`
# commits and where a render with the wrong profile would show the answers; plain `quarto render`, as a Quarto user
# types it, the answer site. Both run the same project scripts; that course build's pages are plain Quarto's, byte for
# byte, is checked by a plain render of one page over its site (test_a_single_page_render_restages_only_its_lesson).
BUILT_VARIANT, PLAIN_VARIANT = "student", "answer"
NOT_FOUND = (
    "Quarto not found: these tests render the course with a real Quarto 1.7 or later. `make test` installs "
    "one from ../shared/tools/quarto/setup.sh when that script is there (CI has it); or set "
    "COURSE_TEST_QUARTO=$(../shared/tools/quarto/setup.sh), or put Quarto (quarto.org) on PATH"
)
PLOT_EXERCISE = """
## 画图练习

```{python}
#| label: ex-plot
#| course_role: exercise
#| eval: false
import matplotlib.pyplot as plt
plt.plot([1, 2, 3], [______ for v in [1, 2, 3]])
plt.show()
```

::: {.content-visible when-profile="answer"}
```{python}
#| label: solution-plot
#| course_role: solution
#| fig-alt: "折线图：三个点沿一条直线上升"
import matplotlib.pyplot as plt
plt.plot([1, 2, 3], [2 * v + 17 for v in [1, 2, 3]])
plt.show()
```
:::
"""


@pytest.fixture(scope="module")
def quarto() -> str:
    """The Quarto binary the tests render with; skipped, saying how to get one, where there is none; a
    COURSE_TEST_QUARTO that names no usable Quarto fails, naming that variable (the one the developer set)."""
    from course.errors import ToolMissing
    from course.tools.quarto import find_quarto

    wanted = os.environ.get("COURSE_TEST_QUARTO") or shutil.which("quarto")
    if not wanted:
        pytest.skip(NOT_FOUND)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("QUARTO", wanted)  # tests/conftest.py keeps the other tests' builds off Quarto
        try:
            return str(find_quarto().path)
        except ToolMissing as exc:
            if not os.environ.get("COURSE_TEST_QUARTO"):
                raise
            pytest.fail(f"COURSE_TEST_QUARTO={wanted} is not a usable Quarto: {exc}", pytrace=False)


@pytest.fixture(scope="module")
def project(quarto, built_site, project_root, tmp_path_factory) -> Path:
    """A copy of the project with lesson 9 added by `course new` (built once per run: tests/project_copy.py), its
    text now naming lessons 5 and 7 and holding a formula, plus an exercise and a solution that plot; built with
    pandoc (lesson 9's figures, nbgrader source and the pandoc site the Quarto pages are compared with), that site
    then moved aside. The build runs here, with the course package the shared project was built with (the lessons'
    fingerprints hash it by its path), so only lesson 9's pages are made again; lesson 5's, whose inputs did not
    change, are the shared build's. Asks for Quarto first, so that without one nothing is copied or built before
    the skip."""
    from course.workflows.build_site import build_course

    root = copy_built(with_added_lesson(tmp_path_factory), tmp_path_factory.mktemp("quarto") / "project")
    inherit_lite_builds(project_root, root)
    qmd = root / "lessons" / f"{ADDED}.qmd"
    text = qmd.read_text("utf-8").replace(ADDED_SENTENCE, "本课接着第 5 课，第 7 课尚未发布。$a^2 + b^2 = c^2$")
    qmd.write_text(text.replace("## 问答题", PLOT_EXERCISE + "\n## 问答题", 1), "utf-8")
    build_course(root, renderer="pandoc")
    shutil.move(root / "_site", root.parent / "pandoc")  # Quarto renders into an empty _site, as on a fresh clone
    return root


def inherit_lite_builds(source: Path, root: Path) -> None:
    """ROOT's JupyterLite builds (.course-cache/lite/VARIANT/) replaced by SOURCE's, hard-linked (a build never writes
    through a file: it removes the folder and starts afresh). Lesson 9's plot leaves the browser, so each variant's
    lite/ holds lesson 5's notebook alone, as the real project's does; each build's key (its inputs, notebooks
    included) decides whether the copy's builds reuse it, and the sites' lite/ is checked as before."""
    from course.site.lite_site import LITE

    source_cache, cache = make_plan(source).cache_dir / LITE, make_plan(root).cache_dir / LITE
    for variant in VARIANTS:
        if (source_cache / variant / ".key").is_file():
            shutil.rmtree(cache / variant, ignore_errors=True)
            shutil.copytree(source_cache / variant, cache / variant, copy_function=os.link)


def course(root: Path, *args: str, env: dict | None = None) -> str:
    """`course ARGS` in ROOT, importing ROOT's own package; fails the test with its output."""
    return run([sys.executable, "-m", "course", *args], root, env)


def run(cmd: list[str], root: Path, env: dict | None = None) -> str:
    """CMD in ROOT with ROOT's `course` importable; fails the test with its output."""
    full = {**os.environ, "PYTHONPATH": str(root / "src"), "QUARTO_PYTHON": sys.executable, **(env or {})}
    proc = subprocess.run(cmd, cwd=root, env=full, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, f"{' '.join(cmd)}:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def rendered(project, quarto) -> Path:
    """The project's _site holding both variants, rendered one after the other into it: plain `quarto render
    --profile answer`, then `course build --renderer quarto --variant student`."""
    run([quarto, "render", "--profile", PLAIN_VARIANT], project)
    course(project, "build", "--renderer", "quarto", "--variant", BUILT_VARIANT, env={"QUARTO": quarto})
    return project / "_site"


def site_files(site: Path) -> dict[str, Path]:
    """Every file of a built site by its path in the site, the build's stamp left out."""
    return {p.relative_to(site).as_posix(): p for p in sorted(site.rglob("*")) if p.is_file() and p.name != STAMP}


def same_file(a: Path, b: Path) -> bool:
    """A and B hold the same bytes (one file hard-linked twice, as lite/ is from its build cache, or equal files)."""
    return os.path.samefile(a, b) or a.read_bytes() == b.read_bytes()


def test_course_build_stamps_its_site_and_leaves_the_one_plain_quarto_rendered_before_it(rendered):
    """course build records what it built in its site's stamp, which plain `quarto render` never writes; building the
    student site left the answer site plain Quarto had rendered into the same _site in place."""
    assert (rendered / BUILT_VARIANT / STAMP).is_file() and not (rendered / PLAIN_VARIANT / STAMP).exists()
    assert len(site_files(rendered / PLAIN_VARIANT)) > 10


LESSON_REF = r'<a href="(?:\.\./lessons/)?lesson(\d\d)\.html" class="lesson-ref"'  # Quarto writes links from the root


def main_html(page: Path) -> str:
    """The <main> element of a page, where the lesson's text is on both renderers."""
    return re.search(r"<main\b.*?</main>", page.read_text("utf-8"), re.S).group(0)


def text_of(fragment: str) -> str:
    """Visible text of an HTML fragment, whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def headings(page: Path) -> list[str]:
    return [text_of(h) for h in re.findall(r"<h[23]\b.*?</h[23]>", main_html(page), re.S)]


def captions(page: Path) -> list[str]:
    """The course's numbered figure captions ("图 5-3：…") a reader sees: figcaptions, and the pandoc page's caption
    under a cell's figure (div.figure-caption), whose figcaption repeats the image's alt text instead."""
    found = re.findall(
        r'<figcaption[^>]*>(.*?)</figcaption>|<div class="figure-caption">(.*?)</div>', main_html(page), re.S
    )
    return [text for a, b in found if re.match(r"图 ?\d+-\d+", text := text_of(a or b))]


def formulas(page: Path) -> int:
    return len(re.findall(r'<span class="math (?:inline|display)">', main_html(page)))


def lesson_stems(project: Path) -> list[str]:
    return [p.stem for p in make_plan(project).lessons]


def with_departures(project: Path) -> dict[str, list]:
    """The lessons with departures from their original, and those departures."""
    found = {
        stem: load_departures(parse_lesson(project / "lessons" / f"{stem}.qmd"), project)
        for stem in lesson_stems(project)
    }
    return {stem: entries for stem, entries in found.items() if entries}


@pytest.mark.parametrize("variant", VARIANTS)
def test_only_the_course_lessons_and_the_index_are_rendered(project, rendered, variant):
    site = rendered / variant
    pages = sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if p.relative_to(site).parts[0] not in ("site_libs", "lite")
    )  # Quarto's pages (lite/: JupyterLite's)
    departures = [pandoc_page(stem) for stem in with_departures(project)] if variant == "answer" else []
    assert pages == sorted(["index.html", *departures] + [f"lessons/{stem}.html" for stem in lesson_stems(project)])
    notebooks = sorted(p.name for p in (site / "lessons").glob("*.ipynb"))
    expected = [notes_notebook(s) for s in lesson_stems(project)]
    if variant == "student":
        expected += [assignment_notebook(s) for s in lesson_stems(project)]
    assert notebooks == sorted(expected)
    assert not (project / "_freeze").exists() and not list(project.rglob("*.quarto_ipynb"))


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_page_has_the_pandoc_pages_headings_captions_and_formulas(project, rendered, variant):
    for stem in lesson_stems(project):
        quarto_page, pandoc_page = (
            rendered / variant / "lessons" / f"{stem}.html",
            project.parent / "pandoc" / variant / f"{stem}.html",
        )
        assert headings(quarto_page) == headings(pandoc_page) and len(headings(pandoc_page)) > 3
        assert captions(quarto_page) == captions(pandoc_page) and captions(pandoc_page)
        assert formulas(quarto_page) == formulas(pandoc_page) > 0
        card_alts = re.findall(r'<img\b[^>]*\balt="([^"]+)"', main_html(pandoc_page))
        for alt in card_alts[: 2 if stem == "lesson05" else 1]:  # the .img-card and ![…](…) figures
            assert f'alt="{alt}"' in main_html(quarto_page), f"{stem}: figure lost its alt text {alt[:30]}"


@pytest.mark.parametrize("variant", VARIANTS)
def test_lesson_mentions_link_exactly_when_the_lesson_exists(project, rendered, variant):
    existing = {int(s[-2:]) for s in lesson_stems(project)}
    for stem in lesson_stems(project):
        page = main_html(rendered / variant / "lessons" / f"{stem}.html")
        mentioned = {int(n) for n in re.findall(r"第\s*(\d+)\s*课", text_of(page))}
        linked = {int(n) for n in re.findall(LESSON_REF, page)}
        assert linked == (mentioned & existing) - {int(stem[-2:])}, stem
    assert 9 in {int(n) for n in re.findall(LESSON_REF, main_html(rendered / variant / "lessons" / "lesson05.html"))}


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_local_link_and_image_resolves_and_the_index_lists_every_lesson(project, rendered, variant):
    site = rendered / variant
    broken = []
    for page in site.rglob("*.html"):
        for ref in re.findall(r'(?:href|src)="([^"]+)"', page.read_text("utf-8")):
            if re.match(r"^(?:[a-z]+:|#|//)", ref):
                continue
            target = (page.parent / html.unescape(ref.split("#")[0].split("?")[0])).resolve()
            if not (target.is_file() or (target / "index.html").is_file()):
                broken.append(f"{page.relative_to(site)} -> {ref}")
    assert broken == []
    index = (site / "index.html").read_text("utf-8")
    for stem in lesson_stems(project):
        title = parse_lesson(project / "lessons" / f"{stem}.qmd").title
        assert re.search(rf'<a href="(?:\./)?lessons/{stem}\.html"[^>]*>{re.escape(title)}</a>', index), stem
        assert re.search(rf'href="(?:\./)?lessons/{re.escape(notes_notebook(stem))}"', index), stem


def shown_text(path: Path) -> str:
    """A file's text as its reader sees it: a notebook's cell sources, joined; any other file as it is."""
    text = path.read_text("utf-8")
    return "\n".join("".join(c["source"]) for c in json.loads(text)["cells"]) if path.suffix == ".ipynb" else text


def test_no_solution_in_the_student_site_that_publish_commits(project, rendered):
    site = rendered / "student"
    lessons = [parse_lesson(project / "lessons" / f"{stem}.qmd") for stem in lesson_stems(project)]
    lesson5_answers = answer_only_snippets("lesson05")
    for path in [p for p in site.rglob("*") if p.is_file() and p.suffix in (".html", ".ipynb", ".json")]:
        text = shown_text(path)
        for lesson in lessons:
            assert not solution_leaks(lesson, text), f"{path.relative_to(site)} shows {lesson.stem}'s solution"
        if path.name.startswith("lesson05") or path.suffix == ".json":
            shown = re.sub(r"[*`$]", "", html.unescape(re.sub(r"<[^>]+>", "", text)))
            assert [s for s in lesson5_answers if s in shown] == [], path.name
    answer = (rendered / "answer" / "lessons" / f"{ADDED}.html").read_text("utf-8")
    assert solution_leaks(lessons[-1], answer), "the check finds the plotting solution where it belongs"


LITE_LINK = r'href="((?:\.\.?/)?lite/notebooks/index\.html)\?path=([^"&]+)"'  # Quarto's index writes ./lite/…
LITE_BLOCK = r'<div class="(lite-launch|lite-unavailable)"[^>]*>(.*?)</div>'


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_lesson_runs_in_the_browser_exactly_as_on_the_pandoc_site(project, rendered, variant):
    """The block atop each page (its link, or why there is none) and the index's links are the pandoc site's; each
    link opens a notebook in the site's lite/, the variant's own notebook (student: the assignment) byte for byte."""
    site, pandoc = rendered / variant, project.parent / "pandoc" / variant
    offered = {}
    for stem in lesson_stems(project):
        page, pandoc_page = main_html(site / "lessons" / f"{stem}.html"), main_html(pandoc / f"{stem}.html")
        block = [(kind_, text_of(inner)) for kind_, inner in re.findall(LITE_BLOCK, page, re.S)]
        assert block == [(k, text_of(inner)) for k, inner in re.findall(LITE_BLOCK, pandoc_page, re.S)], stem
        links = re.findall(LITE_LINK, page)
        assert (block[0][0] == "lite-launch") == bool(links) and len(links) <= 1, stem
        for href, path in links:
            assert (site / "lessons" / href).resolve().is_file(), href
            notebook = (assignment_notebook if variant == "student" else notes_notebook)(stem)
            assert (site / "lite" / "files" / path).read_bytes() == (site / "lessons" / notebook).read_bytes()
            offered[stem] = path
    assert "lesson05" in offered and ADDED not in offered  # lesson 9 imports matplotlib, which Pyodide lacks here
    assert sorted(p.name for p in (site / "lite" / "files").glob("*.ipynb")) == sorted(offered.values())
    index, pandoc_index = (site / "index.html").read_text("utf-8"), (pandoc / "index.html").read_text("utf-8")
    assert all((site / href).resolve().is_file() for href, _ in re.findall(LITE_LINK, index))
    listed, pandoc_listed = ([p for _, p in re.findall(LITE_LINK, text)] for text in (index, pandoc_index))
    assert sorted(listed) == sorted(pandoc_listed) == sorted(offered.values())


def test_the_answer_site_has_each_lessons_departures_page_linked_from_its_page_and_the_index_the_student_site_none(
    project, rendered
):
    """Each departure at a heading links to that section of Quarto's answer page (Quarto's own anchor, not the
    pandoc site's); the student site has no such page and no link to one."""
    departures = with_departures(project)
    assert "lesson05" in departures
    answer, student = rendered / "answer", rendered / "student"
    for stem, entries in departures.items():
        page = main_html(answer / pandoc_page(stem))
        places = re.findall(r"<h2\b.*?</h2>", page, re.S)
        assert len(places) == len(entries)
        ids = set(re.findall(r'\bid="([^"]+)"', (answer / "lessons" / f"{stem}.html").read_text("utf-8")))
        for place, entry in zip(places, entries):
            if entry.heading:
                [(target, anchor)] = re.findall(r'href="([^"#]+)#([^"]+)"', place)
                assert target.removeprefix("./") == f"lessons/{stem}.html" and html.unescape(anchor) in ids, entry.where
            else:
                assert f"<code>{entry.where}</code>" in place
        assert f'href="../{pandoc_page(stem)}"' in main_html(answer / "lessons" / f"{stem}.html")
        assert re.search(rf'href="(?:\./)?{pandoc_page(stem)}"', (answer / "index.html").read_text("utf-8"))
    assert not list(student.rglob("*departures*"))
    assert not [p for p in student.rglob("*.html") if "与原稿的差异" in p.read_text("utf-8")]


@pytest.mark.parametrize("variant", VARIANTS)
def test_lesson5s_calculator_on_quartos_page_shows_the_lessons_numbers(rendered, browser, variant):
    """The lesson's script and style come with Quarto's page (lessons/lesson05/) and hold no solution on the student
    site; opened from a link with a setting, and for random settings, it shows the formulas' numbers."""
    from tests.lesson_content.lesson05_calculator import assert_shows, fragment, random_setting

    site = rendered / variant
    script = site / "lessons" / "lesson05" / "zero-calc.js"
    assert script.is_file() and (site / "lessons" / "lesson05" / "zero-calc.css").is_file()
    assert not script_leaks(parse_lesson(ROOT_LESSON5), script.read_text("utf-8"))
    page = browser.new_page()
    remote, errors = keep_offline(page), []
    page.on("pageerror", lambda e: errors.append(str(e)))
    setting = {"psi": "7.5e9", "nd": "64", "stage": "3", "k": "12", "accum": "0", "card": "24"}
    page.goto((site / "lessons" / "lesson05.html").as_uri() + fragment(setting))
    page.wait_for_selector("#zero-calc [data-quantity=memory]")
    assert_shows(page, setting)
    rng = random.Random(variant)
    for _ in range(10):
        setting = random_setting(rng)
        page.evaluate(
            "hash => new Promise(done => { addEventListener('hashchange', done, {once: true}); "
            "location.hash = hash; })",
            fragment(setting),
        )
        assert_shows(page, setting)
    assert remote == [] and errors == []
    page.close()


def test_the_student_sites_in_browser_notebooks_hold_no_solution(project, rendered):
    shipped = lite_shipped(rendered / "student")
    lessons = [parse_lesson(project / "lessons" / f"{stem}.qmd") for stem in lesson_stems(project)]
    assert [p.name for p in shipped if p.suffix == ".ipynb"] and any(p.name == "all.json" for p in shipped)
    leaks = [f"{p.name}: {lesson.stem}" for p in shipped for lesson in lessons if solution_leaks(lesson, shown_text(p))]
    assert leaks == []
    answer = shown_text(rendered / "answer" / "lite" / "files" / "lesson05.ipynb")
    assert solution_leaks(lessons[0], answer), "the check finds lesson 5's solution where it belongs"


def test_quarto_search_index_has_the_chinese_text_of_every_lesson(project, rendered):
    entries = json.loads((rendered / "student" / "search.json").read_text("utf-8"))
    assert any("冗余" in e["text"] and "lesson05" in e["href"] for e in entries)
    assert {e["href"].split("#")[0] for e in entries} >= {f"lessons/{s}.html" for s in lesson_stems(project)}


@pytest.mark.parametrize("variant", VARIANTS)
def test_in_chromium_offline_every_formula_is_typeset_nothing_is_fetched_and_nothing_scrolls_at_390px(
    project, rendered, drawn, variant
):
    """On Quarto's pages of both variants, the front page included."""
    site = rendered / variant
    for path in [site / "index.html"] + [site / "lessons" / f"{s}.html" for s in lesson_stems(project)]:
        page, remote = drawn(path, 390)
        if path.name != "index.html":
            spans = page.locator("main span.math").count()
            assert spans == formulas(path) > 0 and page.locator("main span.math mjx-container").count() == spans
            assert page.locator("mjx-merror").count() == 0
        assert page.evaluate(UNTYPESET) == {"mathjax": False, "missing": []}, path
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"), path
        assert remote == [], path


def test_opened_from_disk_a_student_lesson_page_says_its_notebook_needs_a_web_address(rendered, drawn):
    """The pandoc page's note from site_libs/course-lite.js, on Quarto's page in lessons/ (its link is ../lite/…);
    the release the script compares a saved copy with is the site's lite/files/ notebook, found from that link.
    (The page opened from disk at 1280 px for the diagrams' check.)"""
    site = rendered / "student"
    page, remote = drawn(site / "lessons" / "lesson05.html", 1280)
    note = page.locator(".lite-launch .lite-file-note")
    note.wait_for(timeout=10_000)
    assert note.is_visible() and "网址" in note.inner_text() and "course preview" in note.inner_text()
    assert note.count() == 1 and remote == []
    path, release = page.evaluate(
        "() => { const b = document.querySelector('.lite-launch');"
        " return [b.dataset.litePath, liteFile(b, b.dataset.litePath)]; }"
    )
    assert release == (site / "lite" / "files" / path).as_uri() and (site / "lite" / "files" / path).is_file()


@pytest.fixture(scope="module")
def served(rendered):
    """The student site on a loopback HTTP server (Quarto's search fetches search.json, which a
    browser refuses from file://); stopped at the end."""
    from tests.loopback import serving

    with serving(rendered / "student") as base:
        yield base


@pytest.fixture(scope="module")
def search(chromium, served):
    """search(WORDS): lesson 5's page of the served student site (one page for the module's searches, offline but
    for the server), WORDS typed into Quarto's search box once what an earlier search typed is cleared and its
    results are gone, and shown once the results are; the page and the requests it made elsewhere."""

    def open_page(context, url: str):
        page = context.new_page()
        remote = keep_offline(page, (served, "data:"))
        page.goto(url)
        return page, remote

    with kept_open(chromium, open_page) as page_at:

        def typed(words: str):
            page, remote = page_at(f"{served}/lessons/lesson05.html")
            page.locator("#quarto-search").first.click()
            page.keyboard.press("Control+A")
            page.keyboard.press("Backspace")
            page.wait_for_function("() => document.querySelectorAll('.aa-Item').length === 0", timeout=15000)
            page.keyboard.type(words)
            page.locator(".aa-Item").first.wait_for(timeout=15000)
            return page, remote

        yield typed


def test_quarto_search_finds_chinese_offline_in_chromium(search):
    page, remote = search("冗余")
    found = page.locator(".aa-Item").all_inner_texts()
    assert any("冗余" in item and "第 5 课" in item for item in found) and remote == []


@pytest.fixture(scope="module")
def drawn(chromium, rendered):
    """drawn(PATH, WIDTH): the page, opened once in this module at WIDTH px, offline, its diagrams drawn and (a
    lesson's) formulas typeset, and the requests it made off the machine. The checks that read the same page at the
    same width share it (only the last of them, the figures' check, clicks on it); all closed at the end."""
    with kept_open(chromium, _drawn) as page_at:
        yield page_at


def _drawn(browser, path: Path, width: int):
    """PATH at WIDTH px, offline, once its diagrams are drawn (its formulas come typeset)."""
    page = browser.new_page()
    page.set_viewport_size({"width": width, "height": 844})
    remote = keep_offline(page)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    page.wait_for_function(
        "() => document.querySelectorAll('pre.mermaid').length === document.querySelectorAll('pre.mermaid svg').length",
        timeout=20000,
    )
    return page, remote


@pytest.mark.parametrize("width", (390, 1280))
@pytest.mark.parametrize("variant", VARIANTS)
def test_diagrams_are_drawn_as_on_the_pandoc_pages_and_no_link_holds_another(project, rendered, drawn, variant, width):
    site = rendered / variant
    for path in [site / "index.html"] + [site / "lessons" / f"{s}.html" for s in lesson_stems(project)]:
        page, remote = drawn(path, width)
        assert nested_links(page) == [], path.name
        if path.stem == "lesson05":
            assert page.evaluate(DIAGRAM_COUNT) == 2 and page.locator("svg.mermaid-js").count() == 0
            assert mermaid_problems(page) == []
        assert remote == [], path.name


def test_quarto_search_snippets_show_formulas_as_they_read(rendered):
    entries = json.loads((rendered / "student" / "search.json").read_text("utf-8"))
    assert not [e["text"][:80] for e in entries if SNIPPET_SOURCE.search(e["text"] + e.get("section", ""))]
    assert any("4Ψ/N_d" in e["text"] for e in entries)  # \\(\\frac{4\\Psi}{N_d}\\), as it reads
    blocks = [e["text"] for e in entries if "Pyodide 运行" in e["text"]]  # the in-browser block, as on the pandoc site
    assert blocks and not [text for text in blocks if DOWNLOAD_UNKNOWN in text or "MB" in text]


def test_quarto_search_marks_the_words_and_shows_no_tex_in_chromium(search):
    page, remote = search("N_d")
    items = page.locator(".aa-Item").all_inner_texts()
    assert items and not [t for t in items if SNIPPET_SOURCE.search(t)]
    assert page.locator(".aa-Item mark").count() > 0 and remote == []


def test_from_disk_the_quarto_search_says_it_needs_the_sites_address(rendered, drawn):
    """From file:// Quarto's search cannot load its index and would answer "no results" to every word: the box
    gives way to a note (site_libs/course-quarto.js) on every page. (The pages opened from disk at 1280 px for the
    diagrams' check, which reads them and clicks nothing.)"""
    site = rendered / "student"
    for path in (site / "index.html", site / "lessons" / "lesson05.html"):
        page, remote = drawn(path, 1280)
        note = page.locator(".course-search-file-note")
        assert note.count() == 1 and note.is_visible() and "网址" in note.inner_text(), path.name
        assert not page.locator("#quarto-search").first.is_visible() and remote == []


def test_a_cell_shown_but_not_run_carries_the_pandoc_pages_note(project, rendered):
    def notes(page: Path) -> list[str]:
        return [text_of(n) for n in re.findall(r'<div class="cell-note">(.*?)</div>', main_html(page), re.S)]

    for variant in VARIANTS:
        for stem in lesson_stems(project):
            pandoc_notes = notes(project.parent / "pandoc" / variant / f"{stem}.html")
            assert notes(rendered / variant / "lessons" / f"{stem}.html") == pandoc_notes, (variant, stem)
    assert notes(rendered / "student" / "lessons" / "lesson05.html")[0].startswith("此单元格仅供阅读")


def test_a_figure_a_cell_draws_has_its_authors_alt_text_on_both_renderers(project, rendered):
    """The answer page's plot (solution-plot) carries its fig-alt, on Quarto's page as on pandoc's."""
    for page in (
        rendered / "answer" / "lessons" / f"{ADDED}.html",
        project.parent / "pandoc" / "answer" / f"{ADDED}.html",
    ):
        cell = re.search(r'id="(?:cell-)?solution-plot".*?(<img\b[^>]*>)', main_html(page), re.S)
        assert cell and 'alt="折线图：三个点沿一条直线上升"' in cell.group(1), page


@pytest.mark.parametrize("width", (390, 1280))
def test_figures_open_full_size_keep_alt_text_as_alt_text_and_share_one_caption_style(project, rendered, drawn, width):
    page, remote = drawn(rendered / "answer" / "lessons" / "lesson05.html", width)
    found = figures(page)
    assert len(found) == 3  # 图 5-3, 5-4 and the cell's 图 5-5, as on the pandoc page
    for i, figure in enumerate(found):
        assert figure["link"] and figure["alt"] and not figure["alt_visible"], figure["alt"][:40]
        assert opens_full_size(page, i, "tap") and opens_full_size(page, i, "key"), figure["alt"][:40]
    styles = page.evaluate(CAPTION_STYLES)
    assert [s[0][:5] for s in styles] == [f"图 5-{n}" for n in range(1, 6)]
    assert {tuple(s[1:]) for s in styles} == {tuple(styles[0][1:])} and styles[0][1] == "center"
    assert remote == []


def test_from_disk_the_quarto_index_links_carry_the_lesson_pages_note(rendered, drawn):
    page, remote = drawn(rendered / "student" / "index.html", 1280)
    note = page.locator("a.lite-index-link + .lite-file-note")
    note.first.wait_for(timeout=10_000)
    assert note.count() == page.locator("a.lite-index-link").count() >= 1 and "网址" in note.first.inner_text()
    assert remote == []


def test_each_variant_keeps_its_includes_in_its_own_build_cache_folder(project, rendered):
    """Student and answer rendered one after the other in one checkout: each variant's lesson list and in-browser
    blocks survive in .course-cache/quarto/VARIANT/, each its own (nothing shared at the project root)."""
    cache = project / ".course-cache" / "quarto"
    for name in ("_lessons-index.md", "_lessons-browser.md"):
        student, answer = ((cache / variant / name).read_text("utf-8") for variant in VARIANTS)
        assert student != answer and not (project / name).exists(), name
    index = {variant: (cache / variant / "_lessons-index.md").read_text("utf-8") for variant in VARIANTS}
    offered = f"[作业 notebook](lessons/{assignment_notebook('lesson05')})"
    assert offered in index["student"] and offered not in index["answer"]
    assert pandoc_page("lesson05").replace(".html", ".qmd") in index["answer"]


def test_a_single_page_render_restages_only_its_lesson(project, rendered, quarto, tmp_path):
    """`quarto render lessons/lesson09.qmd --profile student` over a whole render (a copy of `course build
    --renderer quarto`'s): only lesson 9's notebooks are staged and copied again; lesson 5's staged notebooks, its
    notebooks and page in the site and lite/ (whose notebooks did not change) are left as they were; and the site
    is byte for byte course build's, lesson 9's page rendered again by plain Quarto included."""
    import time

    def link_lite(src: str, dst: str) -> str:
        """JupyterLite's files (the build cache's and the site's lite/) hard-linked: a render only removes and links
        them again (and a build of lite/ starts from an empty folder); every other file copied."""
        parts = Path(src).relative_to(project).parts
        if parts[0] not in ("_site", ".course-cache") or "lite" not in parts:
            return shutil.copy2(src, dst)
        os.link(src, dst)
        return dst

    root = tmp_path / "project"
    shutil.copytree(project, root, symlinks=True, ignore=shutil.ignore_patterns("answer"), copy_function=link_lite)
    staged, site = root / ".course-cache" / "quarto" / "student" / "lessons", root / "_site" / "student"
    files = [
        *staged.glob("*.ipynb"),
        *(site / "lessons").glob("*.ipynb"),
        site / "lessons" / "lesson05.html",
        site / "index.html",
        root / ".course-cache" / "lite" / "student" / ".key",
    ]
    before = {path: path.stat().st_mtime_ns for path in files}
    assert {p.name for p in staged.glob("*.ipynb")} == {notes_notebook(s) for s in ("lesson05", ADDED)} | {
        assignment_notebook(s) for s in ("lesson05", ADDED)
    }
    start = time.perf_counter()
    run([quarto, "render", f"lessons/{ADDED}.qmd", "--profile", "student"], root)
    print(f"single-page render: {time.perf_counter() - start:.1f} s")
    changed = {path.relative_to(root).as_posix() for path in files if path.stat().st_mtime_ns != before[path]}
    mine = {
        f"{folder}/{name(ADDED)}"
        for folder in (".course-cache/quarto/student/lessons", "_site/student/lessons")
        for name in (notes_notebook, assignment_notebook)
    }
    assert changed == mine
    assert (site / "lessons" / f"{ADDED}.html").stat().st_mtime_ns > before[site / "lessons" / "lesson05.html"]
    built, after = site_files(rendered / BUILT_VARIANT), site_files(site)
    assert list(after) == list(built) and len(built) > 10
    assert [name for name in built if not same_file(built[name], after[name])] == []
