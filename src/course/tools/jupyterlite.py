"""JupyterLite with its Pyodide kernel (PyPI `jupyterlite-core`, `jupyterlite-pyodide-kernel`) and the Pyodide
runtime (npm `pyodide`): the in-browser Jupyter the student site offers, built offline, fetching nothing at view time.

The kernel wants, besides the runtime, the pure-Python wheels it loads at start (micropip, IPython and its
dependencies, jedi, parso, comm). `make` downloads them from PyPI once, pinned by hash (lite/pyodide-wheels.txt),
into this environment's share/course/pyodide-wheels/; the build lays them beside the runtime and rewrites
Pyodide's lock file so that it names exactly those files with their real sha256, and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from course.errors import CourseError, ToolMissing
from course.fileio import link_or_copy
from course.tools.pyodide_python import compile_archives

PACKAGES = ("jupyterlite-core", "jupyterlite-pyodide-kernel")
RUNTIME = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "package.json")
LOCK = "pyodide-lock.json"
WHEEL_NAME = re.compile(r"^(?P<name>[A-Za-z0-9_.]+?)-(?P<version>[0-9][^-]*)-.*\.whl$")
SETUP_HINT = "run `make` (it installs the pinned jupyterlite packages, npm pyodide and the kernel's wheels)"


def wheels_folder() -> Path:
    """Where `make` puts the wheels the kernel loads: inside this Python environment, shared by every project copy."""
    return Path(sys.prefix) / "share" / "course" / "pyodide-wheels"


def versions() -> dict[str, str]:
    """The installed versions of the JupyterLite packages, read from their metadata (nothing imported)."""
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            raise ToolMissing(f"{name} is not installed; {SETUP_HINT}") from None
    return found


def pyodide_folder(project_root: Path) -> Path:
    """The npm Pyodide runtime, checked to be the version the installed kernel was made for."""
    from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION

    folder = Path(project_root) / "node_modules" / "pyodide"
    try:
        version = json.loads((folder / "package.json").read_text("utf-8"))["version"]
    except (OSError, ValueError, KeyError):
        raise ToolMissing(f"npm package pyodide missing in {folder}; {SETUP_HINT}") from None
    if version != PYODIDE_VERSION:
        raise CourseError(
            f"{folder / 'package.json'}: pyodide {version}, but jupyterlite-pyodide-kernel "
            f"{metadata.version('jupyterlite-pyodide-kernel')} needs exactly {PYODIDE_VERSION}; "
            "pin that version in package.json and run `make`"
        )
    return folder


def pinned_wheels(requirements: Path) -> dict[str, set[str]]:
    """Each pinned wheel's normalised name → the sha256 hashes the requirements file allows for it."""
    pins: dict[str, set[str]] = {}
    if not requirements.is_file():
        raise CourseError(
            f"{requirements} not found: it pins the wheels the in-browser notebooks' kernel loads "
            "(`name==version --hash=sha256:…` per line; the course repository has one)"
        )
    for number, line in enumerate(requirements.read_text("utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name = re.split(r"[=<>~ ]", line, maxsplit=1)[0]
        hashes = set(re.findall(r"--hash=sha256:([0-9a-f]{64})", line))
        if not hashes:
            raise CourseError(f"{requirements.name}, line {number}: expected `name==version --hash=sha256:…`")
        pins[normalise(name)] = hashes
    return pins


def verified_wheels(requirements: Path) -> dict[str, Path]:
    """The downloaded wheels, by normalised name, each checked against its pinned hash."""
    folder, pins = wheels_folder(), pinned_wheels(requirements)
    found = {}
    for wheel in sorted(folder.glob("*.whl")):
        match = WHEEL_NAME.match(wheel.name)
        name = normalise(match["name"]) if match else ""
        if name in pins and sha256(wheel) in pins[name]:
            found[name] = wheel
    missing = sorted(set(pins) - set(found))
    if missing:
        raise ToolMissing(
            f"the Pyodide kernel's wheels {', '.join(missing)} are missing or do not match their "
            f"hashes in {folder}; {SETUP_HINT}"
        )
    return found


def write_runtime(project_root: Path, requirements: Path, static: Path, pypi: Path, bytecode: Path) -> list[str]:
    """Lay out the runtime in STATIC (lite's static/pyodide/) with the wheels its lock names, the other pinned wheels
    in PYPI (lite's pypi/, for piplite), the standard library and the wheels compiled to bytecode by the runtime's
    Python (kept in BYTECODE for the next build); return the lock's package names. The lock keeps only the packages
    laid out, each with the file's real name and sha256, so an import of anything else fails at once instead of
    fetching."""
    runtime, wheels = pyodide_folder(project_root), verified_wheels(requirements)
    static.mkdir(parents=True)
    pypi.mkdir(parents=True)
    for name in RUNTIME:
        link_or_copy(runtime / name, static / name)
    lock = json.loads((runtime / LOCK).read_text("utf-8"))
    packages = {normalise(k): v for k, v in lock["packages"].items()}
    kept = {}
    for name, wheel in wheels.items():
        if name in packages:
            kept[name] = {**packages[name], "file_name": wheel.name}
            link_or_copy(wheel, static / wheel.name)
        else:
            link_or_copy(wheel, pypi / wheel.name)
    archives = [static / "python_stdlib.zip", *sorted(static.glob("*.whl")), *sorted(pypi.glob("*.whl"))]
    compile_archives(runtime, archives, bytecode)
    for name, entry in kept.items():
        entry["sha256"] = sha256(static / entry["file_name"])
        lacking = [d for d in entry.get("depends", []) if normalise(d) not in kept]
        if lacking:
            raise CourseError(f"{requirements}: {name} needs {', '.join(lacking)}, which the file does not pin")
    (static / LOCK).write_text(json.dumps({**lock, "packages": kept}, indent=1, sort_keys=True), "utf-8")
    return sorted(kept)


def build(lite_dir: Path, contents: Path, output: Path) -> None:
    """`jupyter lite build` in LITE_DIR (its config, doit db and cache stay there) of CONTENTS into OUTPUT."""
    versions()
    extension = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "@jupyterlite" / "pyodide-kernel-extension"
    command = [
        sys.executable,
        "-m",
        "jupyterlite_core",
        "build",
        "--lite-dir",
        str(lite_dir),
        "--contents",
        str(contents),
        "--output-dir",
        str(output),
        f"--LiteBuildConfig.federated_extensions={extension}",
    ]
    proc = subprocess.run(command, cwd=lite_dir, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise CourseError(f"jupyter lite build failed in {lite_dir}: {(proc.stdout + proc.stderr)[-3000:]}")


def normalise(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256(path: Path) -> str:
    """The file's sha256, as the lock and the pins write it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
