"""The Pyodide runtime's own Python (CPython built for WebAssembly) run in node: the host's Python is another
version, so bytecode for the in-browser kernel can only be written by the runtime itself.

Without bytecode every module the kernel imports at start (the standard library's, IPython's, jedi's, …) is compiled
from source inside WebAssembly, in each student's browser at each start; the build compiles them once instead.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from course.errors import CourseError
from course.tools.node import run_node

SCRIPT = Path(__file__).with_name("run-pyodide.js")
COMPILER = Path(__file__).with_name("bytecode_in_pyodide.py")
BYTECODE = (SCRIPT, COMPILER)  # the files that make the bytecode: a change to them must rebuild it
MOUNT = "/work"  # where run-pyodide.js mounts the folder it is given
TIMEOUT = 600  # seconds: compiling the standard library and the kernel's wheels takes about 12 CPU-seconds


def run_python(runtime: Path, folder: Path, code: str, *, what: str) -> str:
    """Run CODE in the Pyodide at RUNTIME with FOLDER at /work; return what it printed; a failure names WHAT."""
    return run_node(SCRIPT, [str(runtime), str(folder)], code, what=what, timeout=TIMEOUT)


def compile_archives(runtime: Path, archives: list[Path]) -> str:
    """Replace each of ARCHIVES (the standard library's zip, wheels) by a copy holding its modules' bytecode for
    RUNTIME's Python; return that Python's magic number (hex). None is touched unless all compiled."""
    folder = Path(os.path.commonpath([archive.parent for archive in archives]))
    scratch = folder / ".bytecode"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    names = [archive.relative_to(folder).as_posix() for archive in archives]
    pairs = [(f"{MOUNT}/{name}", f"{MOUNT}/{scratch.name}/{index}") for index, name in enumerate(names)]
    code = f"{COMPILER.read_text('utf-8')}\nmain({json.dumps(pairs)})\n"
    try:
        magic = run_python(runtime, folder, code, what=f"bytecode for {', '.join(names)} in {folder}").strip()
        for index, archive in enumerate(archives):
            shutil.copymode(archive, scratch / str(index))
            os.replace(scratch / str(index), archive)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if not magic:
        raise CourseError(f"{runtime}: Pyodide's Python compiled {', '.join(names)} but did not print its magic number")
    return magic
