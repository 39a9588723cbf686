"""Run a lesson's cells in a real Jupyter kernel, reusing earlier results when nothing changed.

Kernel state flows from cell to cell, so the cache key covers every evaluated cell of the variant,
in order, plus the files their `depends` option names.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import nbformat

from course.errors import CourseError, Location
from course.fileio import write_atomic
from course.lesson.model import CodeCell, Lesson

Outputs = dict[str, list[dict[str, Any]]]
CACHE_FORMAT = 1


def execute_cells(lesson: Lesson, *, cache_dir: Path, kernel: str, timeout: int) -> Outputs:
    """Outputs of every evaluated cell, keyed by cell label; raises CourseError on a failing cell."""
    cells = [c for c in lesson.cells() if c.evaluated]
    key = cache_key(lesson, cells, kernel)
    cached = cache_dir / "exec" / f"{key}.json"
    if cached.exists():
        return json.loads(cached.read_text("utf-8"))
    outputs = _run(lesson, cells, kernel=kernel, timeout=timeout) if cells else {}
    write_atomic(cached, json.dumps(outputs, ensure_ascii=False))
    return outputs


def cache_key(lesson: Lesson, cells: list[CodeCell], kernel: str) -> str:
    """Content hash of what determines the outputs: kernel, cells in order, their dependencies."""
    h = hashlib.sha256(f"{CACHE_FORMAT}\0{kernel}\0{sys.version_info[:2]}\0{lesson.path.name}".encode())
    for cell in cells:
        h.update(json.dumps([cell.label, cell.source, dict(cell.options)], sort_keys=True, ensure_ascii=False).encode())
        for dep in cell.options.get("depends", ()):
            h.update(_dependency_digest(lesson, cell, dep).encode())
    return h.hexdigest()[:32]


def _dependency_digest(lesson: Lesson, cell: CodeCell, dep: str) -> str:
    """Hash a file, or every file under a folder, named by a cell's `depends` option."""
    base = (lesson.path.parent / dep).resolve()
    files = (
        sorted(p for p in base.rglob("*") if p.is_file() and "__pycache__" not in p.parts) if base.is_dir() else [base]
    )
    if not base.exists():
        raise CourseError(
            f"depends: {dep} does not exist (looked at {base})", Location(lesson.path, cell.line, cell.label)
        )
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(base.parent)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _run(lesson: Lesson, cells: list[CodeCell], *, kernel: str, timeout: int) -> Outputs:
    """Execute the cells one by one in a fresh kernel started in the lesson's folder (nbclient imported here: a build
    whose cells are all cached, and every Quarto hook, starts no kernel)."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c.source) for c in cells]
    client = NotebookClient(
        nb,
        kernel_name=kernel,
        timeout=timeout,
        allow_errors=False,
        resources={"metadata": {"path": str(lesson.path.parent)}},
        config=_kernel_config(),
    )
    outputs: Outputs = {}
    with client.setup_kernel(env=_kernel_env()):
        for index, (cell, nb_cell) in enumerate(zip(cells, nb.cells)):
            where = Location(lesson.path, cell.line, cell.label)
            try:
                client.execute_cell(nb_cell, index)
            except CellExecutionError as exc:
                raise CourseError(f"cell raised {exc.ename}: {exc.evalue}", where) from None
            except (CellTimeoutError, DeadKernelError) as exc:
                raise CourseError(f"cell did not finish: {type(exc).__name__}: {exc}", where) from None
            outputs[cell.label] = [_plain(o) for o in nb_cell.outputs]
    return outputs


def _kernel_config():
    """Encrypt the build's kernel connection where the kernel supports it (ipykernel's kernelspec declares CurveZMQ):
    ipykernel 7 otherwise warns on every start that it talks over TCP in plain text."""
    import zmq
    from traitlets.config import Config

    return Config({"KernelManager": {"transport_encryption": "auto" if zmq.has("curve") else "disabled"}})


def _kernel_env() -> dict[str, str]:
    """The build's environment for the kernel, with a headless matplotlib."""
    return {
        **os.environ,
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }


def _plain(output: Any) -> dict[str, Any]:
    """An nbformat output as plain JSON data."""
    return json.loads(json.dumps(output))
