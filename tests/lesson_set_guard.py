"""Which tests see the project's set of lessons: tests/test_adding_a_lesson.py reruns exactly those on a copy with a
lesson added, so every test that could assume lesson 5 is the only lesson must say that it sees them, by a marker
(`lesson_generic`, `every_lesson` or `sees_lessons`). This guard makes that sound for the fast tier (every test not
marked slow, browser, torch, sandbox or hub): in every run, such a test that saw the lesson set without one of those
markers fails, naming what it read. A test of a slower tier is rerun there only when marked.

A test sees the lesson set when, in its own process, during its setup, call or teardown or during the setup of a
fixture it uses (a session fixture's setup counts for every test using it):
- it lists a folder whose entries change when a lesson is added (the project root, lessons/, solutions/, autograder/,
  demo/, assets/ and what the build makes: _site/, .course-cache/, _freeze/, .quarto/, and anything below them),
  by os.listdir or os.scandir (Path.iterdir, Path.glob, glob, os.walk and shutil.copytree all end there);
- it opens a file of what the build makes from every lesson together (_site/, .course-cache/, _freeze/, .quarto/):
  every other file of the project reads the same with a lesson added, except the added lesson's own, which no test
  of this project names;
- it starts a process that can read the project: one whose working folder is in the project, or one given a path in
  one of the folders above (or the project itself);
- its code (or a function of the project's its code calls) reads a value that a module (of tests/, most often)
  computed by listing the lessons when it was imported, such as tests/lesson_cases.LESSONS, or it is parametrized
  over one.
Reading a file by a lesson's name (lessons/lesson05.qmd) or asking whether a path exists does not see the set.
Fixtures whose value is a fixed path, whatever their setup built (`built_site`), pass on nothing: the test's own
reads of what they built are judged.

Python's audit hooks (sys.addaudithook) report these calls; the hook is installed once per process when this module
is imported (conftest.py imports it before any test module, so listings made at import time are seen too) and costs
a set lookup for every other audited event.
"""

from __future__ import annotations

import ast
import os
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ROOT_S = str(ROOT)
# The project's folders whose listing changes when a lesson is added (a lesson's sources, its demo class, its rubric,
# its figures, its built pages and notebooks), and those of them whose files are made from every lesson together.
LISTED = frozenset(
    {"lessons", "solutions", "autograder", "demo", "assets", "_site", ".course-cache", "_freeze", ".quarto"}
)
ONE_LESSON = re.compile(r"lesson\d\d(?!\d)")  # a lesson's own file or folder: lesson05.qmd, lesson05/, lesson05-notes
BUILT_FROM_ALL = frozenset({"_site", ".course-cache", "_freeze", ".quarto"})
MARKERS = ("lesson_generic", "every_lesson", "sees_lessons")
# The slower tiers, which the copy does not rerun unless marked: the guard judges the fast tier (every other test).
SLOWER_TIERS = ("slow", "browser", "torch", "sandbox", "hub")
# Fixtures whose value is a fixed path of the project: the files their setup made are judged when a test reads them.
PATH_ONLY_FIXTURES = frozenset({"built_site", "project_root"})
LISTINGS = frozenset({"os.listdir", "os.scandir"})
STARTS = frozenset({"subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.spawn"})
EVENTS = LISTINGS | STARTS | {"open"}
INSTALLED = tuple({sys.prefix, sys.base_prefix, "<"})  # the environment's and Python's own modules, and frozen ones


class Recorder:
    """What each open scope (a test, a fixture's setup) saw, and what module imports saw while no scope was open."""

    def __init__(self) -> None:
        self.scopes: list[set[str]] = []
        self.at_import: dict[str, set[str]] = {}  # module file -> what its import-time code saw

    def saw(self, reason: str) -> None:
        """Record REASON in every open scope, or, outside them all, for the test module being imported."""
        if self.scopes:
            for scope in self.scopes:
                scope.add(reason)
            return
        module = importing_module()
        if module:
            self.at_import.setdefault(module, set()).add(reason)


RECORDER = Recorder()


def importing_module() -> str | None:
    """The file of the innermost module, not of the installed environment, whose top-level code is running (None
    outside an import): a test module or a helper of tests/, imported while pytest collects."""
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "<module>" and not code.co_filename.startswith(INSTALLED):
            return code.co_filename
        frame = frame.f_back
    return None


def project_parts(path) -> tuple[str, ...] | None:
    """PATH's folders and name below the project root (() for the root itself), or None for a path outside it."""
    if isinstance(path, int):
        try:
            path = os.readlink(f"/proc/self/fd/{path}")
        except OSError:
            return None
    path = os.fsdecode(os.fspath(path)) if path is not None else "."
    if not path.startswith(ROOT_S):
        if os.path.isabs(path):
            return None
        path = os.path.join(os.getcwd(), path)
        if not path.startswith(ROOT_S):
            return None
    path = os.path.normpath(path)
    if path == ROOT_S:
        return ()
    return tuple(path[len(ROOT_S) + 1 :].split(os.sep)) if path.startswith(ROOT_S + os.sep) else None


def lists_the_set(parts: tuple[str, ...] | None) -> bool:
    """Whether the folder at PARTS lists what a lesson added changes: the root, or a folder of LISTED not inside
    one lesson's own (lessons/lesson05/, demo/classes/lesson05/, _site/student/lesson05_files/)."""
    if parts is None:
        return False
    return not parts or (parts[0] in LISTED and not any(ONE_LESSON.match(part) for part in parts[1:]))


def seen(event: str, args: tuple) -> str | None:
    """What the audited call EVENT(ARGS) reads of the lesson set, or None when it reads none of it."""
    if event == "open":
        parts = project_parts(args[0]) if isinstance(args[0], (str, bytes, os.PathLike)) else None
        return f"opened {args[0]}" if parts and parts[0] in BUILT_FROM_ALL else None
    if event in LISTINGS:
        return (
            f"listed {args[0] if args[0] is not None else os.getcwd()}"
            if lists_the_set(project_parts(args[0]))
            else None
        )
    return started(event, args)


def started(event: str, args: tuple) -> str | None:
    """The process EVENT(ARGS) starts, when it can read the project: run in it, or given a path of the lesson set."""
    if event == "subprocess.Popen":
        argv, cwd = args[1], args[2]
        argv = [argv] if isinstance(argv, (str, bytes, os.PathLike)) else list(argv or ())
        if project_parts(cwd) is not None:
            return f"ran {argv[:3]} in {cwd or os.getcwd()}"
    elif event == "os.system":
        argv = [args[0]]
        if project_parts(None) is not None:
            return f"ran {args[0]!r} in {os.getcwd()}"
    else:
        argv = list(args[1] or ())
        if project_parts(None) is not None:
            return f"ran {argv[:3]} in {os.getcwd()}"
    for arg in argv:
        text = os.fsdecode(arg) if isinstance(arg, (str, bytes, os.PathLike)) else ""
        for word in re.split(r"[\s=:,]", text):
            parts = project_parts(word) if os.path.isabs(word) else None
            if parts is not None and (not parts or parts[0] in LISTED):
                return f"ran {argv[:3]} on {word}"
    return None


def audit(event: str, args: tuple) -> None:
    """The audit hook: record what EVENT reads of the lesson set."""
    if event in EVENTS and (RECORDER.scopes or not ACTIVE_TEST_RUN):
        reason = seen(event, args)
        if reason:
            RECORDER.saw(reason)


ACTIVE_TEST_RUN = False  # tests have started: from then on only open scopes record
sys.addaudithook(audit)


def referenced_names(code: types.CodeType) -> set[str]:
    """The global names CODE and the functions defined in it refer to."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= referenced_names(const)
    return names


def imported_names(source_file: str) -> set[str]:
    """The names a module's import statements bind (values of other modules, which its own listing did not make)."""
    tree = ast.parse(Path(source_file).read_text("utf-8"))
    return {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }


def tainted_values() -> list[tuple[object, str]]:
    """Each value a module computed at import while listing the lessons, with its 'module.NAME': the module's globals
    but modules, classes, the project root and what it imported."""
    found = []
    for module in list(sys.modules.values()):
        source_file = getattr(module, "__file__", None)
        if source_file not in RECORDER.at_import:
            continue
        imported = imported_names(source_file)
        for name, value in vars(module).items():
            if name.startswith("__") or name in imported or isinstance(value, (types.ModuleType, type)):
                continue
            if not (isinstance(value, Path) and value == ROOT):
                found.append((value, f"{module.__name__}.{name}"))
    return found


def label_of(value, tainted: list[tuple[object, str]]) -> str | None:
    """The 'module.NAME' of VALUE when it is one of TAINTED (compared by identity)."""
    return next((label for candidate, label in tainted if candidate is value), None)


def reads_import_time_listing(function, tainted: list[tuple[object, str]], depth: int = 3) -> str | None:
    """The import-time listing FUNCTION's code reads (a value, or a function of the project's that reads one)."""
    code = getattr(function, "__code__", None)
    if code is None or depth == 0 or not tainted:
        return None
    scope = function.__globals__
    for name in referenced_names(code) & scope.keys():
        value = scope[name]
        label = None if callable(value) else label_of(value, tainted)
        if label:
            return f"read {label}, which listed the lessons when imported"
        if isinstance(value, types.FunctionType) and not value.__code__.co_filename.startswith(INSTALLED):
            found = reads_import_time_listing(value, tainted, depth - 1)
            if found:
                return found
    return None


class LessonSetGuard:
    """The pytest plugin: a scope per test and per fixture setup; a test unmarked that saw the set fails."""

    def __init__(self) -> None:
        self.fixture_saw: dict[int, set[str]] = {}  # id(FixtureDef) -> what its setup saw
        self.test_saw: set[str] | None = None
        self.tainted: list[tuple[object, str]] | None = None

    def start_test(self) -> None:
        """Open the scope of the test about to be set up."""
        self.test_saw = set()
        RECORDER.scopes = [self.test_saw]

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        scope: set[str] = set()
        RECORDER.scopes.append(scope)
        try:
            yield
        finally:
            RECORDER.scopes = [open_scope for open_scope in RECORDER.scopes if open_scope is not scope]
            if scope:
                self.fixture_saw[id(fixturedef)] = scope

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        if self.test_saw is None:  # the first test was opened by the fixture
            self.start_test()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if call.when == "call":
            self.test_saw |= self.through_fixtures(item) | self.through_imports(item)
        if call.when != "teardown":
            return
        saw, self.test_saw = self.test_saw or set(), None
        RECORDER.scopes = []
        if saw and report.passed and not any(item.get_closest_marker(name) for name in MARKERS + SLOWER_TIERS):
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} sees the project's lessons but is not marked {' or '.join(MARKERS)} "
                "(tests/test_adding_a_lesson.py reruns only the marked ones with a lesson added): "
                + "; ".join(sorted(saw)[:5])
            )

    def through_fixtures(self, item) -> set[str]:
        """What the setups of ITEM's fixtures saw (those set up before it in this process included)."""
        found: set[str] = set()
        for name, fixturedef in getattr(item, "_request")._fixture_defs.items():
            if name not in PATH_ONLY_FIXTURES:
                found |= {f"fixture {name}: {reason}" for reason in self.fixture_saw.get(id(fixturedef), ())}
        return found

    def through_imports(self, item) -> set[str]:
        """The import-time listing ITEM's function reads or is parametrized over."""
        if self.tainted is None:
            self.tainted = tainted_values()
        found = reads_import_time_listing(getattr(item, "obj", None), self.tainted)
        for mark in item.iter_markers("parametrize"):
            values = mark.args[1] if len(mark.args) > 1 else mark.kwargs.get("argvalues")
            label = label_of(values, self.tainted)
            if label:
                found = f"parametrized over {label}, which listed the lessons when imported"
        return {found} if found else set()


@pytest.fixture(scope="session", autouse=True)
def lessons_seen_only_when_marked(request) -> None:
    """Every test from here on is judged: one that saw the lesson set without a marker saying so fails."""
    global ACTIVE_TEST_RUN
    ACTIVE_TEST_RUN = True
    guard = LessonSetGuard()
    guard.start_test()  # the first test is being set up already
    request.config.pluginmanager.register(guard, "lesson-set-guard")  # to the session's end: the last test's
    # teardown, which tears this fixture down too, is judged after it
