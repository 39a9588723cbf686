"""The Pyodide runtime's own Python (CPython built for WebAssembly) run in node: the host's Python is another
version, so bytecode for the in-browser kernel can only be written by the runtime itself.

Without bytecode every module the kernel imports at start (the standard library's, IPython's, jedi's, …) is compiled
from source inside WebAssembly, in each student's browser at each start; the build compiles them once instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from course.fileio import link_or_copy
from course.tools.node import run_node

SCRIPT = Path(__file__).with_name("run-pyodide.js")
COMPILER = Path(__file__).with_name("bytecode_in_pyodide.py")
BYTECODE = (SCRIPT, COMPILER)  # the files that make the bytecode: a change to them must rebuild it
MOUNT = "/work"  # where run-pyodide.js mounts the folder it is given
TIMEOUT = 600  # seconds: compiling the standard library and the kernel's wheels takes 12-20 CPU-seconds


def run_python(runtime: Path, folder: Path, code: str, *, what: str) -> str:
    """Run CODE in the Pyodide at RUNTIME with FOLDER at /work; return what it printed; a failure names WHAT."""
    return run_node(SCRIPT, [str(runtime), str(folder)], code, what=what, timeout=TIMEOUT)


def compile_archives(runtime: Path, archives: list[Path], cache: Path) -> None:
    """Replace each of ARCHIVES (the standard library's zip, wheels) by a copy holding its modules' bytecode for
    RUNTIME's Python. The copies are made once per set of inputs, in CACHE/<their key>/ (the only folder kept there),
    and hard-linked: every variant's build, and every rebuild with the same runtime and archives, reuses them."""
    h = hashlib.sha256((runtime / "package.json").read_bytes())
    for path in (*BYTECODE, *archives):
        h.update(f"\0{path.name}\0".encode() + path.read_bytes())
    compiled = cache / h.hexdigest()
    names = [f"{index}-{archive.name}" for index, archive in enumerate(archives)]
    if not compiled.is_dir():
        _compile(runtime, dict(zip(names, archives)), compiled)
    for name, archive in zip(names, archives):
        link_or_copy(compiled / name, archive)


def _compile(runtime: Path, archives: dict[str, Path], compiled: Path) -> None:
    """Make the folder COMPILED: each of ARCHIVES (its name there → the archive) compiled; it appears whole or not."""
    scratch = compiled.with_name(f".{compiled.name}.partial")
    for old in compiled.parent.glob("*") if compiled.parent.is_dir() else []:
        shutil.rmtree(old)  # earlier runtimes' or wheels' bytecode, and what an interrupted compile left
    (scratch / "in").mkdir(parents=True)
    (scratch / "out").mkdir()
    for name, archive in archives.items():
        link_or_copy(archive, scratch / "in" / name)
    pairs = [(f"{MOUNT}/in/{name}", f"{MOUNT}/out/{name}") for name in archives]
    code = f"{COMPILER.read_text('utf-8')}\nmain({json.dumps(pairs)})\n"
    try:
        run_python(runtime, scratch, code, what=f"bytecode for {', '.join(map(str, archives.values()))}")
        for name in archives:
            os.chmod(scratch / "out" / name, 0o644)
        os.replace(scratch / "out", compiled)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
