"""What a lesson page and the index say about running the lesson's notebook in the browser (JupyterLite).

A lesson gets a "在浏览器中运行" link when its notebook can run in Pyodide: every module its code imports is in
Python's standard library (less what Pyodide lacks or cannot run) or among the wheels the lite site ships
(lite/pyodide-wheels.txt); the front matter's `run-in-browser` overrides that (false: never; true: always). Otherwise
the page says why not and where to run it instead. The block carries what course-lite.js needs to tell a student, on
the page, that the work saved in the browser belongs to an older release (and to keep it under another name while
opening the new one), and that from file:// it cannot start.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from course.lesson.model import Lesson
from course.lesson.notebook_names import assignment_notebook, notes_notebook
from course.lesson.variants import Variant, get_variant
from course.site.lite_site import LITE, PINS, lite_path, storage_name
from course.site.plan import BuildPlan

# Standard-library modules Pyodide leaves out or cannot run in a browser tab (no processes, sockets, threads, terminal).
NOT_IN_PYODIDE = frozenset(
    {
        "curses",
        "dbm",
        "ensurepip",
        "fcntl",
        "grp",
        "idlelib",
        "multiprocessing",
        "pty",
        "pwd",
        "readline",
        "resource",
        "socket",
        "subprocess",
        "termios",
        "threading",
        "tkinter",
        "turtle",
        "turtledemo",
        "tty",
        "venv",
    }
)
IMPORT_NAMES = {"ipython": "IPython"}  # wheels whose module is not their name with underscores
FRONT_KEY = "run-in-browser"
# What a first open downloads, said in the block once lite/ is built (with_download_size): until then the block
# holds the words without a number, and so does each search index (course.site.search_documents skips the span).
DOWNLOAD = "lite-download"
DOWNLOAD_UNKNOWN = "，第一次打开要先下载它们"
DOWNLOAD_SPAN = re.compile(rf'(<span class="{DOWNLOAD}">)[^<]*(</span>)')
NOT_DOWNLOADED = ("files",)  # lite/'s copies of the notebooks: counted as part of no lesson's download


@dataclass(frozen=True)
class BrowserRun:
    """Whether a lesson's notebook runs in the browser: its lite path, or why not."""

    stem: str
    path: str | None
    reason: str = ""

    def url(self, to_site: str = "") -> str:
        """The link that opens the notebook in JupyterLite's notebook view, from a page TO_SITE below the site root
        ('' on the pandoc site and Quarto's index, '../' on Quarto's pages in lessons/)."""
        return f"{to_site}{LITE}/notebooks/index.html?path={self.path}"


def browser_notebook(variant: str | Variant, stem: str) -> str:
    """The site's notebook of a lesson that lite/ offers: the assignment students hand in where the variant offers
    it, else the reading notebook (with the answers, where the variant shows them)."""
    return (assignment_notebook if get_variant(variant).offers_assignment else notes_notebook)(stem)


def lite_notebooks(runs: dict[str, BrowserRun], variant: str | Variant, folder: Path) -> dict[str, Path]:
    """What lite/ ships (course.site.lite_site.build_lite): the notebook in FOLDER of each lesson that runs there."""
    return {stem: folder / browser_notebook(variant, stem) for stem, run in runs.items() if run.path}


def browser_runs(plan: BuildPlan, lessons: list[Lesson], variant: str | Variant, folder: Path) -> dict[str, BrowserRun]:
    """Whether each lesson runs in the browser, from its notebook in FOLDER (where the site's notebooks lie)."""
    return {
        lesson.stem: browser_run(plan, lesson, folder / browser_notebook(variant, lesson.stem)) for lesson in lessons
    }


def browser_run(plan: BuildPlan, lesson: Lesson, notebook: Path) -> BrowserRun:
    """Whether NOTEBOOK (the site's file of LESSON that lite/ would ship) can run in Pyodide, and where it lies."""
    declared = lesson.front.get(FRONT_KEY)
    if not notebook.is_file():
        return BrowserRun(lesson.stem, None, "本课没有可在浏览器中运行的作业 notebook。")
    data = notebook.read_bytes()
    if declared is False:
        return BrowserRun(lesson.stem, None, f"本课在课文开头声明不在浏览器中运行（{FRONT_KEY}: false）。")
    missing = sorted(imported_modules(data) - available_modules(plan.root))
    if missing and declared is not True:
        names = "、".join(f"`{m}`" for m in missing)
        return BrowserRun(lesson.stem, None, f"本课代码要导入 {names}，浏览器中的 Python（Pyodide）没有这些模块。")
    return BrowserRun(lesson.stem, lite_path(lesson.stem))


def imported_modules(notebook: bytes) -> set[str]:
    """The top-level modules the notebook's code cells import (IPython's % and ! lines skipped)."""
    found = set()
    for cell in json.loads(notebook).get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source", ""))
        code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
        try:
            tree = ast.parse(code)
        except SyntaxError:  # an exercise with blanks (______) is still a name; anything else: read the lines
            found |= set(re.findall(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", code, re.MULTILINE))
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found


def available_modules(project_root: Path) -> set[str]:
    """What an import finds in the lite site's Pyodide: the standard library it runs, and the shipped wheels."""
    from course.tools.jupyterlite import pinned_wheels

    wheels = pinned_wheels(Path(project_root) / LITE / PINS)
    shipped = {IMPORT_NAMES.get(name, name.replace("-", "_")) for name in wheels}
    return (set(sys.stdlib_module_names) - NOT_IN_PYODIDE) | shipped | {"__future__"}


def page_markdown(plan: BuildPlan, variant: str | Variant, run: BrowserRun, to_site: str = "") -> str:
    """The block at the top of a lesson page: the link, what the browser keeps and (where the variant offers the
    assignment) how to hand in; or why not. TO_SITE leads from the page to the site root (BrowserRun.url)."""
    if run.path is None:
        return (
            f"::: {{.lite-unavailable}}\n**不能在浏览器中运行**：{run.reason}"
            "请在课程的 JupyterHub 或装好课程环境的电脑上打开 notebook。\n:::\n\n"
        )
    variant = get_variant(variant)
    storage = json.dumps(storage_name(plan, variant.name), ensure_ascii=False)
    attrs = f'data-lite-path="{run.path}" data-lite-storage={storage} data-lite-stem="{run.stem}"'
    saved = (
        "你的修改保存在这个浏览器里（清除浏览器的网站数据会把它们一起删掉）；"
        f"完成后用 File → Download 下载 `{run.stem}.ipynb` 再提交（装有本课程工具时可先用 `course check` 检查）。"
    )
    if not variant.offers_assignment:
        saved = f"这是{variant.label} notebook，在浏览器中运行可以核对每个检查。"
    return (
        f"::: {{.lite-launch {attrs}}}\n[在浏览器中运行]({run.url(to_site)}){{.lite-link}}：不用安装任何软件，"
        f"在浏览器里打开本课的 notebook（JupyterLite，Python 由 Pyodide 运行[{DOWNLOAD_UNKNOWN}]{{.{DOWNLOAD}}}）。"
        f"{saved}\n:::\n\n"
    )


def download_megabytes(lite: Path) -> int:
    """The most a first open of LITE (a built lite/) downloads, in MB (10^6 bytes) rounded up: every file of its
    JupyterLite and Pyodide, the lessons' notebooks left out so that a notebook's edit changes no other page."""
    total = sum(
        path.stat().st_size
        for path in lite.rglob("*")
        if path.is_file() and path.relative_to(lite).parts[0] not in NOT_DOWNLOADED
    )
    return -(-total // 10**6)


def with_download_size(page: str, megabytes: int) -> str:
    """PAGE (a built page's HTML) with its in-browser block saying how much a first open downloads."""
    return DOWNLOAD_SPAN.sub(rf"\g<1>，第一次打开最多下载 {megabytes} MB\g<2>", page)


def index_link(run: BrowserRun | None) -> str:
    """The index's link for one lesson ('' when it does not run in the browser); course-lite.js adds the lesson page's
    note beside it when the index is opened from file://."""
    return f"[在浏览器中运行]({run.url()}){{.lite-index-link}}" if run and run.path else ""
