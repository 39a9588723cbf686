"""Python files of a course project, imported from their paths rather than from sys.path.

A reference solution is loaded on its own, so a figure is computed from this project's file and not from
whatever `solutions` package happens to be importable. A lesson's data folder (lessons/lessonNN/) is not a
package on sys.path either: its modules are imported as one private package per folder, so figures.py can keep
its drawing code in modules beside it and import them relatively (`from .chart import draw`), and two lessons
may use the same module names without meeting.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from course.errors import CourseError, Location


def load_file(path: Path, shown: str, missing: str) -> ModuleType:
    """Import one project file under a private name; MISSING says why its absence matters."""
    name = "_course_project_" + shown.replace("/", "_").replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except FileNotFoundError:
        raise CourseError(missing, Location(shown)) from None
    except SyntaxError as exc:
        raise _invalid_python(exc, path, shown) from None
    return module


def _package_name(data_dir: Path) -> str:
    """The private package a data folder's modules live in: one per folder, whatever the lesson is called."""
    folder = Path(data_dir).resolve()
    return f"_course_lesson_data_{folder.name}_{hashlib.sha256(str(folder).encode('utf-8')).hexdigest()[:12]}"


def load_data_module(data_dir: Path, name: str, shown: str) -> ModuleType:
    """Import DATA_DIR/NAME.py afresh (its siblings too, once it imports them) as a module of the folder's package."""
    package = _package_name(data_dir)
    for stale in [key for key in sys.modules if key == package or key.startswith(package + ".")]:
        del sys.modules[stale]  # an edited lesson is read again, never served from an earlier import
    spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
    spec.submodule_search_locations = [str(Path(data_dir).resolve())]
    sys.modules[package] = importlib.util.module_from_spec(spec)
    try:
        return importlib.import_module(f"{package}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.{name}":
            raise
        raise CourseError(f"expected a Python module {name}.py in the lesson's data folder", Location(shown)) from None
    except SyntaxError as exc:
        raise _invalid_python(exc, Path(data_dir) / f"{name}.py", shown) from None


def _invalid_python(exc: SyntaxError, path: Path, shown: str) -> CourseError:
    """Name the file and line a syntax error is in, as SHOWN names PATH: PATH itself, or a module beside it."""
    broken = Path(exc.filename or path).resolve()
    where = Path(shown).with_name(broken.name).as_posix() if broken.parent == Path(path).resolve().parent else broken
    return CourseError(f"expected valid Python: {exc.msg}", Location(where, exc.lineno))
