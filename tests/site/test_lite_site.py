"""The in-browser notebooks' site (course.site.lite_site, course.site.lite_page, course.tools.jupyterlite): what it
ships and checks, which lessons get a link, and when `course build` rebuilds it."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

from course.errors import CourseError
from course.site.lite_page import (
    DOWNLOAD,
    DOWNLOAD_UNKNOWN,
    browser_run,
    download_megabytes,
    imported_modules,
    page_markdown,
)
from course.site.lite_site import check_lite
from course.site.plan import make_plan
from tests.lesson_cases import ROOT, each_lesson


def notebook(tmp_path: Path, *sources: str) -> Path:
    """A notebook file of code cells with these sources."""
    path = tmp_path / "lesson07.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources]), path)
    return path


def test_the_modules_a_notebook_imports_are_read_from_its_code_blanks_and_magics_included(tmp_path):
    path = notebook(
        tmp_path,
        "import math, os.path\nfrom collections import abc",
        "%matplotlib inline\nimport json",
        "from . import local\nx = ______",
        "def f(:\n    import torch.distributed as dist",
    )
    assert imported_modules(path.read_bytes()) == {"math", "os", "collections", "json", "torch"}


@pytest.mark.parametrize(
    "front, sources, runs, reason",
    [
        ({}, ["import math\nfrom IPython.display import display"], True, ""),
        ({}, ["import torch\nimport numpy as np"], False, "`numpy`、`torch`"),
        (
            {},
            ["import subprocess"],
            False,
            "`subprocess`",
        ),  # in the standard library, but no processes in a browser tab
        ({"run-in-browser": False}, ["import math"], False, "run-in-browser: false"),
        ({"run-in-browser": True}, ["import torch"], True, ""),  # the author says it runs (e.g. a guarded import)
    ],
)
def test_a_lesson_runs_in_the_browser_when_pyodide_has_what_it_imports_or_its_front_matter_says(
    tmp_path, front, sources, runs, reason
):
    plan = make_plan(ROOT)
    run = browser_run(plan, SimpleNamespace(stem="lesson07", front=front), notebook(tmp_path, *sources))
    assert (run.path is not None) == runs and reason in run.reason
    block = page_markdown(plan, "student", run)
    if runs:
        assert run.path == "lesson07.ipynb" and f"]({run.url()}){{.lite-link}}" in block and "File → Download" in block
        assert "](../lite/notebooks/index.html?path=lesson07.ipynb)" in page_markdown(plan, "student", run, "../")
    else:
        assert "不能在浏览器中运行" in block and "lite-link" not in block and reason in block


def test_the_front_matter_key_must_be_true_or_false(tmp_path):
    from course.lesson.parse_qmd import parse_lesson

    qmd = tmp_path / "lesson07.qmd"
    qmd.write_text('---\ntitle: "第 7 课"\nlesson: 7\nrun-in-browser: "no"\n---\n\n## 本课目标\n', "utf-8")
    with pytest.raises(CourseError, match="run-in-browser"):
        parse_lesson(qmd)


def test_the_no_op_check_fingerprints_the_lite_inputs_without_importing_jupyterlite():
    code = (
        "import sys; from course.site.plan import make_plan; from course.site.lite_site import lite_fingerprint;"
        f"print(lite_fingerprint(make_plan({str(ROOT)!r}))); "
        "print(any(m.startswith('jupyterlite') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert len(out[0]) == 64 and out[1] == "False"


def test_the_npm_pyodide_must_be_the_version_the_kernel_pins(tmp_path):
    from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION

    from course.tools.jupyterlite import pyodide_folder

    assert pyodide_folder(ROOT) == ROOT / "node_modules" / "pyodide"  # package.json pins the kernel's version
    (tmp_path / "node_modules" / "pyodide").mkdir(parents=True)
    (tmp_path / "node_modules" / "pyodide" / "package.json").write_text('{"version": "314.0.8"}', "utf-8")
    with pytest.raises(CourseError, match=f"needs exactly {PYODIDE_VERSION}"):
        pyodide_folder(tmp_path)


@pytest.mark.slow
def test_the_built_runtime_is_local_and_its_lock_names_exactly_the_wheels_beside_it(built_site):
    lite = built_site / "student" / "lite"
    settings = json.loads((lite / "jupyter-lite.json").read_text("utf-8"))["jupyter-config-data"]
    kernel = settings["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert kernel["pyodideUrl"] == "./static/pyodide/pyodide.mjs" and kernel["disablePyPIFallback"] is True
    pyodide = lite / "static" / "pyodide"
    lock = json.loads((pyodide / "pyodide-lock.json").read_text("utf-8"))
    assert {"micropip", "ipython", "jedi", "parso", "traitlets"} <= set(lock["packages"])
    for entry in lock["packages"].values():
        assert hashlib.sha256((pyodide / entry["file_name"]).read_bytes()).hexdigest() == entry["sha256"]
    assert sorted(p.name for p in pyodide.glob("*.whl")) == sorted(e["file_name"] for e in lock["packages"].values())
    assert "comm" in json.loads((lite / "pypi" / "all.json").read_text("utf-8"))  # for piplite, not in the lock
    assert (lite / "static" / "pyodide" / "pyodide.asm.wasm").stat().st_nlink >= 2  # one runtime, linked, per variant


# Run in the shipped runtime: its magic number, and which module files it compiles from source importing the kernel's
# modules (the standard library's from its zip; IPython and its dependencies unpacked as Pyodide installs a wheel).
IMPORTS_COMPILED = """
import builtins, importlib.util, json, sys, zipfile
from pathlib import Path
for wheel in sorted(Path("/work").glob("*.whl")):
    zipfile.ZipFile(wheel).extractall("/tmp/site")
sys.path.insert(0, "/tmp/site")
compiled, compile_source = [], builtins.compile
builtins.compile = lambda source, name, *a, **k: compiled.append(str(name)) or compile_source(source, name, *a, **k)
import IPython, jedi, email.mime.text, tomllib
builtins.compile = compile_source
print(json.dumps({"magic": importlib.util.MAGIC_NUMBER.hex(), "tag": sys.implementation.cache_tag,
                  "compiled": [n for n in compiled if n.endswith(".py")], "stdlib": sys.modules["tomllib"].__file__}))
"""


@pytest.mark.slow
def test_the_shipped_standard_library_and_wheels_hold_bytecode_for_pyodides_own_python(built_site):
    """Each module of the standard library's zip and of every wheel comes with its bytecode (magic number and cache
    tag asked of the shipped runtime itself), unchecked-hash as Pyodide compiles its own, its source kept; each
    wheel's RECORD names every file with its hash; and the runtime imports IPython compiling nothing from source."""
    from course.tools.pyodide_python import run_python

    lite = built_site / "student" / "lite"
    runtime = lite / "static" / "pyodide"
    found = json.loads(run_python(runtime, runtime, IMPORTS_COMPILED, what="the imports' check"))
    assert found["compiled"] == [] and found["stdlib"].endswith("/tomllib/__init__.pyc")
    header = bytes.fromhex(found["magic"]) + (1).to_bytes(4, "little")  # flags: hash-based, unchecked
    for archive in [runtime / "python_stdlib.zip", *runtime.glob("*.whl"), *(lite / "pypi").glob("*.whl")]:
        with zipfile.ZipFile(archive) as zipped:
            members = {name: zipped.read(name) for name in zipped.namelist() if not name.endswith("/")}
        wheel = archive.suffix == ".whl"
        sources = [n for n in members if n.endswith(".py") and not (wheel and ".dist-info/" in n)]
        assert sources, archive
        for name in sources:
            folder, _, stem = name.rpartition("/")
            pyc = f"{folder}/__pycache__/{stem[:-3]}.{found['tag']}.pyc".lstrip("/") if wheel else name + "c"
            assert members[pyc][:8] == header, (archive.name, pyc)
        if wheel:
            record = next(data for name, data in members.items() if name.endswith(".dist-info/RECORD"))
            listed = {line.split(",")[0]: line.split(",")[1] for line in record.decode().splitlines() if line}
            assert set(listed) == set(members), archive.name
            for name, data in members.items():
                digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                assert listed[name] == ("" if name.endswith("/RECORD") else f"sha256={digest}"), (archive, name)


@pytest.mark.slow
def test_the_build_check_refuses_a_notebook_it_was_not_given_and_a_pyodide_from_elsewhere(built_site, tmp_path):
    lite = tmp_path / "lite"
    shutil.copytree(built_site / "student" / "lite", lite, copy_function=os.link)
    shipped = {p.name: p.read_bytes() for p in (lite / "files").glob("*.ipynb")}
    check_lite(lite, shipped)
    extra = lite / "files" / "lesson99.ipynb"
    extra.write_text("{}", "utf-8")
    with pytest.raises(CourseError, match="expected exactly the site's notebooks"):
        check_lite(lite, shipped)
    extra.unlink()
    config = lite / "jupyter-lite.json"
    text = config.read_text("utf-8").replace("./static/pyodide/pyodide.mjs", "https://cdn.jsdelivr.net/pyodide/x.mjs")
    config.unlink()
    config.write_text(text, "utf-8")
    with pytest.raises(CourseError, match="not the local Pyodide"):
        check_lite(lite, shipped)


@pytest.mark.slow
def test_a_lite_config_edit_rebuilds_the_in_browser_site_and_no_page(built_site, tmp_path_factory, tmp_path):
    """On a copy of the built project shared with other tests (tests/project_copy.py): its sites up to date."""
    from course.workflows.build_site import build_course
    from tests.project_copy import copy_built, with_added_lesson

    proj = copy_built(with_added_lesson(tmp_path_factory), tmp_path / "project")
    assert build_course(proj, variants=["student"]).up_to_date
    site = proj / "_site" / "student"
    pages = {p: p.stat().st_ino for p in site.glob("lesson*") if p.is_file()}  # the pages and notebooks
    overrides = proj / "lite" / "overrides.json"
    settings = json.loads(overrides.read_text("utf-8"))
    settings["@jupyterlab/notebook-extension:tracker"]["kernelShutdown"] = True
    overrides.write_text(json.dumps(settings), "utf-8")
    result = build_course(proj, variants=["student"])
    assert result.rebuilt == {"student": []} and {p: p.stat().st_ino for p in pages} == pages
    assert '"kernelShutdown": true' in (site / "lite" / "jupyter-lite.json").read_text("utf-8")
    start = time.perf_counter()
    assert build_course(proj, variants=["student"]).up_to_date and time.perf_counter() - start < 1.0


@pytest.mark.slow
def test_course_publish_puts_the_in_browser_site_on_the_student_branch(built_site, tmp_path):
    from course.workflows.publish import publish_variants

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True).stdout

    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "lesson01.qmd").write_text("---\ntitle: t\nlesson: 1\n---\n", "utf-8")
    shutil.copytree(built_site / "student", tmp_path / "_site" / "student", copy_function=os.link)
    git("init", "-q", "-b", "main")
    publish_variants(tmp_path, variants=("student",))
    tree = set(git("ls-tree", "-r", "--name-only", "student").split())
    built = {
        p.relative_to(built_site / "student").as_posix()
        for p in (built_site / "student" / "lite").rglob("*")
        if p.is_file()
    }
    assert built <= tree and {"lite/api/contents/all.json", "lite/static/pyodide/pyodide.asm.wasm"} <= built


@pytest.mark.slow
@each_lesson
def test_a_page_that_runs_its_notebook_in_the_browser_says_the_most_its_sites_lite_downloads(built_site, stem):
    """The number is the built lite/'s (course.site.lite_page.download_megabytes), on both variants' pages."""
    for variant in ("student", "answer"):
        site = built_site / variant
        page = (site / f"{stem}.html").read_text("utf-8")
        if 'class="lite-launch' not in page:
            assert DOWNLOAD not in page
            continue
        said = f'<span class="{DOWNLOAD}">，第一次打开最多下载 {download_megabytes(site / "lite")} MB</span>'
        assert said in page and DOWNLOAD_UNKNOWN not in page, variant
