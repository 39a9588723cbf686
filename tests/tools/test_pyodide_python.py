"""course.tools.pyodide_python: the runtime's own Python compiles archives in node once per set of inputs, and a
failure names what failed and leaves the archives and the cache as they were. (The shipped site's bytecode, checked
against the runtime's magic number: tests/site/test_lite_site.py.)"""

from __future__ import annotations

import zipfile

import pytest

from course.errors import CourseError
from course.tools.pyodide_python import compile_archives
from tests.lesson_cases import ROOT

RUNTIME = ROOT / "node_modules" / "pyodide"


def wheel(path, **modules: str):
    """A wheel at PATH holding MODULES (name → source) and a RECORD."""
    with zipfile.ZipFile(path, "w") as zipped:
        for name, source in modules.items():
            zipped.writestr(f"{name}.py", source)
        zipped.writestr(
            "demo-1.dist-info/RECORD", "".join(f"{n}.py,,\n" for n in modules) + "demo-1.dist-info/RECORD,,\n"
        )
    return path


@pytest.mark.slow
def test_archives_are_compiled_once_into_the_cache_and_a_failure_names_the_module_and_leaves_nothing_half_written(
    tmp_path,
):
    good = wheel(tmp_path / "good-1-py3-none-any.whl", ok="x = 1\n")
    original = good.read_bytes()
    compile_archives(RUNTIME, [good], tmp_path / "cache")
    (compiled,) = (tmp_path / "cache").iterdir()
    pyc = [n for n in zipfile.ZipFile(good).namelist() if n.startswith("__pycache__/ok.") and n.endswith(".pyc")]
    assert len(pyc) == 1 and good.stat().st_ino == next(compiled.iterdir()).stat().st_ino
    (tmp_path / "again").mkdir()
    again = tmp_path / "again" / good.name
    again.write_bytes(original)
    compile_archives(RUNTIME, [again], tmp_path / "cache")  # the same bytes: no node run, the cache's file linked
    assert again.stat().st_ino == good.stat().st_ino

    bad = wheel(tmp_path / "demo-1-py3-none-any.whl", fine="y = 2\n", broken="def f(:\n")
    again.unlink()  # a link to the cache's file: written anew, not through the link
    again.write_bytes(original)
    before = {p: p.read_bytes() for p in (again, bad)}
    with pytest.raises(CourseError, match=r"demo-1-py3-none-any\.whl: .*broken\.py does not compile"):
        compile_archives(RUNTIME, [again, bad], tmp_path / "cache")
    assert {p: p.read_bytes() for p in before} == before  # neither archive replaced,
    assert list((tmp_path / "cache").iterdir()) == []  # no partial bytecode, and the older set's gone
