"""One JupyterLite site per variant, in <site>/lite/: the lessons' notebooks to run in the browser, offline.

A declared step of `course build`, after a variant's notebooks are in staging. Its inputs: the committed config in
lite/ (jupyter_lite_config.json, jupyter-lite.json, overrides.json: every cell drawn, the pinned wheels), npm
Pyodide's package.json and file list, the
installed JupyterLite versions (lite_fingerprint: no jupyterlite import, so a build with nothing to do stays fast),
and the notebooks it ships. It builds in one fixed folder per variant, .course-cache/lite/<variant>/, removed whole
before each run (JupyterLite's doit database then never skips a real change), and only when that folder's key
differs from the inputs; the result is hard-linked into the site. The Pyodide runtime lies once in each lite/, shared
by every lesson.

Each notebook lies at the top of lite/'s files as <stem>.ipynb, the name students hand it in under: JupyterLite's
File → Download names the file after its whole path, so a notebook in a folder would download as
"<folder>_<stem>.ipynb". JupyterLite keeps a student's saved copy in the browser under that path, where it hides a
newer release of the same file, never replaced by it; course-lite.js tells the student on the lesson page when the
saved copy's read-only cells differ from the release's and offers to keep it under another name.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from course.errors import CourseError
from course.site.plan import BuildPlan

LITE = "lite"  # the folder in each site, and the committed config's folder in the project
COPIED = ("jupyter_lite_config.json", "jupyter-lite.json", "overrides.json")  # lite/ files the build reads as they are
PINS = "pyodide-wheels.txt"  # the wheels the kernel loads, pinned by hash (course.tools.jupyterlite)
BYTECODE_CACHE = ".bytecode"  # beside the variants' folders: their runtime's bytecode, compiled once for all
FILE_NOTE = (  # what lite/'s own pages show when opened from disk, where JupyterLite cannot start
    '<div lang="zh-CN" style="font:16px/1.7 sans-serif;max-width:40em;margin:3em auto;padding:0 1em">'
    '<h1 style="font-size:1.3em">需要通过网址打开</h1><p>浏览器中的 notebook（JupyterLite）只能从网址（http:// 或 '
    "https://）打开，不能从本地文件（file://）打开。请打开课程网站的网址；在课程仓库里可以运行 "
    "<code>course preview</code>，再打开它给出的 http://127.0.0.1:… 地址。</p>"
    '<p><a href="{index}">← 返回课程首页</a>（各课的页面都在那里）</p></div>'
)


def lite_fingerprint(plan: BuildPlan) -> str:
    """Hash of what every lite/ is built from besides its notebooks (read without importing JupyterLite)."""
    from course.tools.jupyterlite import versions
    from course.tools.pyodide_python import BYTECODE

    h = hashlib.sha256(json.dumps(versions(), sort_keys=True).encode())
    for name in (*COPIED, PINS):
        path = plan.root / LITE / name
        h.update(f"\0{name}\0".encode() + (path.read_bytes() if path.is_file() else b"-"))
    runtime = plan.root / "node_modules" / "pyodide"
    for path in sorted(runtime.glob("*")) if runtime.is_dir() else []:
        h.update(f"\0{path.name}\0{path.stat().st_size}".encode())
    for path in BYTECODE:  # what compiles the runtime's Python modules to bytecode
        h.update(f"\0{path.name}\0".encode() + path.read_bytes())
    package = runtime / "package.json"
    h.update(package.read_bytes() if package.is_file() else b"-")
    return h.hexdigest()


def lite_path(stem: str) -> str:
    """Where the lesson's notebook lies in JupyterLite: <stem>.ipynb, at the top."""
    return f"{stem}.ipynb"


def storage_name(plan: BuildPlan, variant: str) -> str:
    """The browser database JupyterLite saves this variant's work in (student and answer never share one)."""
    return f"JupyterLite Storage - {plan.config.course_title} - {variant}"


def build_lite(plan: BuildPlan, variant: str, out: Path, notebooks: dict[str, Path]) -> dict[str, str]:
    """Build OUT/lite/ holding NOTEBOOKS (stem → the site's notebook file in OUT); return stem → its lite path."""
    paths = {stem: lite_path(stem) for stem in notebooks}
    work = plan.cache_dir / LITE / variant
    key = _key(plan, variant, notebooks, paths)
    if not (work / ".key").is_file() or (work / ".key").read_text("utf-8") != key or not (work / "output").is_dir():
        _rebuild(plan, variant, work, notebooks, paths)
        (work / ".key").write_text(key, "utf-8")
    _link_tree(work / "output", out / LITE)
    check_lite(out / LITE, {paths[stem]: nb.read_bytes() for stem, nb in notebooks.items()})
    return paths


def _key(plan: BuildPlan, variant: str, notebooks: dict[str, Path], paths: dict[str, str]) -> str:
    """Everything one variant's lite/ is made from: the shared inputs, its storage name and its notebooks."""
    h = hashlib.sha256(f"{lite_fingerprint(plan)}\0{storage_name(plan, variant)}\0{PAGE_ICONS}".encode())
    for stem in sorted(notebooks):
        h.update(f"\0{paths[stem]}\0".encode() + notebooks[stem].read_bytes())
    return h.hexdigest()


def _rebuild(plan: BuildPlan, variant: str, work: Path, notebooks: dict[str, Path], paths: dict[str, str]) -> None:
    """Lay out the lite folder (config, runtime, wheels, contents) afresh in WORK and run `jupyter lite build`."""
    from course.tools.jupyterlite import build, write_runtime

    shutil.rmtree(work, ignore_errors=True)
    lite_dir, contents = work / "lite", work / "contents"
    lite_dir.mkdir(parents=True)
    for name in COPIED:
        shutil.copyfile(plan.root / LITE / name, lite_dir / name)
    settings = json.loads((lite_dir / "jupyter-lite.json").read_text("utf-8"))
    settings["jupyter-config-data"]["contentsStorageName"] = storage_name(plan, variant)
    (lite_dir / "jupyter-lite.json").write_text(json.dumps(settings, ensure_ascii=False, indent=1), "utf-8")
    static, bytecode = lite_dir / "static" / "pyodide", plan.cache_dir / LITE / BYTECODE_CACHE
    write_runtime(plan.root, plan.root / LITE / PINS, static, lite_dir / "pypi", bytecode)
    for stem, notebook in notebooks.items():
        target = contents / paths[stem]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(notebook, target)
    contents.mkdir(exist_ok=True)
    build(lite_dir, contents, work / "output")
    _add_page_icons(work / "output")
    for page in (work / "output").glob("*/index.html"):
        _note_file_protocol(page, "../../index.html")
    _note_file_protocol(work / "output" / "index.html", "../index.html")


# The icons Notebook 7's page sets as the tab's icon (idle and busy) under the site's static/favicons/, which
# JupyterLite's build does not ship: without them each notebook page asks for two missing files.
PAGE_ICONS = ("favicon-notebook.ico", "favicon-busy-1.ico")


def _add_page_icons(output: Path) -> None:
    """Give OUTPUT the icons Notebook 7 asks for (JupyterLite's own notebook icon, under both names)."""
    icon = output / "notebooks" / "favicon.ico"
    if not icon.is_file():
        raise CourseError(
            f"{icon}: not found (did JupyterLite's build change?); the notebook page's icons come from it"
        )
    folder = output / "static" / "favicons"
    folder.mkdir(parents=True, exist_ok=True)
    for name in PAGE_ICONS:
        shutil.copyfile(icon, folder / name)


def _note_file_protocol(page: Path, index: str) -> None:
    """Make a JupyterLite page say, when opened from disk, that it needs a web address (it stays blank otherwise),
    with a link back to the site's front page at INDEX (lite/ lies at the site's root on both renderers)."""
    if not page.is_file():
        return
    note = FILE_NOTE.format(index=index)
    script = (
        "<script>if (location.protocol === 'file:') document.addEventListener('DOMContentLoaded', () => {"
        f"document.body.innerHTML = {json.dumps(note, ensure_ascii=False)};"
        "document.title = '需要通过网址打开';});</script>"
    )
    text = page.read_text("utf-8")
    if "<head>" not in text:
        raise CourseError(f"{page}: no <head> to add the file:// note to (did JupyterLite's page change?)")
    page.write_text(text.replace("<head>", f"<head>{script}", 1), "utf-8")


def check_lite(lite: Path, shipped: dict[str, bytes]) -> None:
    """What lite/ ships is what the site ships: its only notebooks are SHIPPED (lite path → the site's bytes), its
    contents index names nothing else, and Pyodide is the local, offline one with its lock beside it."""
    found = {p.relative_to(lite / "files").as_posix(): p for p in (lite / "files").rglob("*.ipynb")}
    if set(found) != set(shipped) or any(found[p].read_bytes() != data for p, data in shipped.items()):
        raise CourseError(
            f"{lite}/files holds {sorted(found)}, expected exactly the site's notebooks {sorted(shipped)}"
        )
    listed = set()
    for index in (lite / "api" / "contents").rglob("all.json"):
        listed |= {
            item["path"]
            for item in json.loads(index.read_text("utf-8")).get("content", [])
            if item.get("type") == "notebook"
        }
    if listed != set(shipped):
        raise CourseError(f"{lite}/api/contents lists the notebooks {sorted(listed)}, expected {sorted(shipped)}")
    settings = json.loads((lite / "jupyter-lite.json").read_text("utf-8"))["jupyter-config-data"]
    kernel = settings["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    url = kernel.get("pyodideUrl", "")
    if (
        not url.startswith("./")
        or not (lite / url).is_file()
        or not (lite / url).with_name("pyodide-lock.json").is_file()
    ):
        raise CourseError(f"{lite}/jupyter-lite.json: pyodideUrl {url!r} is not the local Pyodide with its lock")
    if kernel.get("disablePyPIFallback") is not True:
        raise CourseError(f"{lite}/jupyter-lite.json: disablePyPIFallback must be true (nothing fetched at view time)")


def _link_tree(src: Path, dst: Path) -> None:
    """Hard-link every file of SRC into DST (a copy across file systems); DST must not exist yet."""
    for folder, _, files in os.walk(src):
        target = dst / Path(folder).relative_to(src)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            try:
                os.link(Path(folder) / name, target / name)
            except OSError:
                shutil.copy2(Path(folder) / name, target / name)
