"""Runs inside Pyodide, never on the host (course.tools.pyodide_python feeds it to the runtime's own Python): write
copies of Python archives with every module compiled to bytecode for this very Python, its sources kept.

The standard library's zip gets <module>.pyc beside each <module>.py, where zipimport looks first (it never reads
__pycache__); a wheel gets __pycache__/<module>.<cache tag>.pyc, where the import system looks for a module installed
from it, and its RECORD lists them. The bytecode is unchecked-hash (PEP 552), as Pyodide's own distribution compiles
it: the import system takes it without reading the source, which stays for tracebacks, inspect and IPython's `??`
(a standard library without its sources measured no faster to start).
"""

import base64
import hashlib
import importlib.util
import py_compile
import sys
import sysconfig
import zipfile

SCRATCH = "/tmp/module.py"  # in Pyodide's memory file system


def bytecode(source: bytes, shown_as: str, archive: str) -> bytes:
    """SOURCE compiled to an unchecked-hash .pyc whose code names SHOWN_AS; a syntax error names ARCHIVE's member."""
    with open(SCRATCH, "wb") as file:
        file.write(source)
    try:
        py_compile.compile(
            SCRATCH,
            cfile=SCRATCH + "c",
            dfile=shown_as,
            doraise=True,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
    except py_compile.PyCompileError as error:
        raise SystemExit(f"{archive}: {shown_as} does not compile: {error.msg}") from None
    with open(SCRATCH + "c", "rb") as file:
        return file.read()


def record_line(name: str, data: bytes) -> str:
    """A wheel RECORD's line for the file NAME holding DATA."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def compile_archive(source: str, target: str) -> None:
    """Write TARGET: the archive SOURCE with its modules' bytecode added (and named in its RECORD, for a wheel)."""
    wheel = source.endswith(".whl")
    home = sysconfig.get_path("purelib") if wheel else next(p for p in sys.path if p.endswith(".zip"))
    added = []
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        members = old.infolist()
        present = {info.filename for info in members}
        for info in members:
            name = info.filename
            if name.endswith(".py") and not (wheel and (".dist-info/" in name or ".data/" in name)):
                pyc = importlib.util.cache_from_source(name) if wheel else name + "c"
                if pyc in present:  # compiled already (an archive that ships its bytecode)
                    continue
                added.append((pyc, bytecode(old.read(info), f"{home}/{name}", source), info.date_time))
        for info in members:
            data = old.read(info)
            if wheel and info.filename.endswith(".dist-info/RECORD"):
                lines = data.decode("utf-8").splitlines() + [record_line(n, d) for n, d, _ in added]
                data = "\n".join(lines).encode("utf-8") + b"\n"
            new.writestr(info, data)
        for name, data, date_time in added:
            new.writestr(zipfile.ZipInfo(name, date_time), data, zipfile.ZIP_DEFLATED)


def main(pairs: list[tuple[str, str]]) -> None:
    """Compile each (source, target) pair."""
    for source, target in pairs:
        compile_archive(source, target)
