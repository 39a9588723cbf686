"""Which tests see the project's set of lessons: tests/test_adding_a_lesson.py reruns exactly those on a copy with a
lesson added, so every test that could assume lesson 5 is the only lesson must say that it sees them, by a marker
(`lesson_generic`, `every_lesson`, or `sees_lessons`, which SEES_LESSONS below gives the tests it names). This guard
makes that sound for the fast tier (every test not marked slow, browser, torch, sandbox or hub): in every run, such a
test that saw the lesson set without one of those markers fails, naming what it read. A test of a slower tier is
rerun there only when marked.

A test sees the lesson set when, in its own process, during its setup, call or teardown or during the setup of a
fixture it uses (a session fixture's setup counts for every test using it):
- it lists a folder whose entries change when a lesson is added (the project root, lessons/, solutions/, autograder/,
  demo/, assets/ and what the build makes: _site/, .course-cache/, _freeze/, .quarto/, and anything below them),
  by os.listdir or os.scandir (Path.iterdir, Path.glob, glob, os.walk and shutil.copytree all end there);
- it opens a file of what the build makes from every lesson together (_site/, .course-cache/, _freeze/, .quarto/):
  every other file of the project reads the same with a lesson added, except the added lesson's own, which no test
  of this project names;
- it starts a process that can read the project: one told to work in it (its `cwd`), one that inherits a working
  folder in the project and looks for a project there (the course's command, Quarto, git, make, ruff, ESLint, node,
  pytest, a shell command), or one given a path in one of the folders above (or the project itself);
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
PROJECT_FINDERS = frozenset({"course", "quarto", "git", "make", "ruff", "eslint", "node", "npm", "npx", "pytest"})
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


def finds_a_project(argv: list[str]) -> bool:
    """Whether the program ARGV looks for a project in its working folder when given no path (the course's command,
    Quarto, git, make, the linters, pytest), as a program that works on what it is given (pandoc, a kernel) does not."""
    words = [os.path.basename(os.fsdecode(arg)) for arg in argv[:3] if isinstance(arg, (str, bytes, os.PathLike))]
    if not words:
        return True
    if words[0].startswith("python"):
        return len(words) > 2 and words[1] == "-m" and words[2] in PROJECT_FINDERS
    return words[0] in PROJECT_FINDERS or (words[0] in ("sh", "bash") and "-c" in words)


def started(event: str, args: tuple) -> str | None:
    """The process EVENT(ARGS) starts, when it can read the project: run in it (by its own choice of folder or, for a
    program that finds a project in its working folder, by inheriting this one's), or given a path of the lesson set."""
    if event == "subprocess.Popen":
        argv, cwd = args[1], args[2]
        argv = [argv] if isinstance(argv, (str, bytes, os.PathLike)) else list(argv or ())
    else:
        argv, cwd = [args[0]] if event == "os.system" else list(args[1] or ()), None
    if project_parts(cwd) is not None and (cwd is not None or event == "os.system" or finds_a_project(argv)):
        return f"ran {argv[:3]} in {cwd or os.getcwd()}"
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
            # this setup's record replaces the last one: the tests that use its value (this test alone, for a
            # function-scoped fixture) are judged by what it saw, never by an earlier test's setup of the fixture
            self.fixture_saw[id(fixturedef)] = scope

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item):
        if self.test_saw is None:  # the first test was opened by the fixture
            self.start_test()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item, nextitem):
        if nextitem is None:  # the last test's teardown ends the session's fixtures too: theirs is nobody's
            RECORDER.scopes = []

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
                f"{item.nodeid} sees the project's lessons but is not marked {' or '.join(MARKERS)}: add it to "
                "SEES_LESSONS in tests/lesson_set_guard.py (tests/test_adding_a_lesson.py reruns only the marked "
                "ones with a lesson added): " + "; ".join(sorted(saw)[:5])
            )

    def through_fixtures(self, item) -> set[str]:
        """What the setups of ITEM's fixtures saw, those whose values it uses: its own, and those of broader scope
        set up before it in this process."""
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


# The fast tier's tests that see the lessons (found by this guard), marked `sees_lessons` as pytest collects them.
SEES_LESSONS = frozenset(
    {
        "tests/commands/test_where.py::test_an_unknown_lesson_names_what_exists_and_the_nearest",
        "tests/commands/test_where.py::test_grade_force_with_a_mistyped_student_names_the_nearest",
        "tests/grading/test_deadlines.py::test_a_bad_due_date_names_its_line",
        "tests/grading/test_deadlines.py::test_a_due_date_with_its_offset_becomes_nbgraders_naive_utc",
        "tests/grading/test_load_checks.py::test_a_batch_parses_the_checks_once_and_a_changed_file_again",
        "tests/grading/test_load_checks.py::test_the_course_root_keeps_the_checks_its_source_notebook_was_made_with",
        "tests/lab/test_formulas.py::test_memory_matches_reference_solution",
        "tests/lesson/test_departures.py::test_the_real_lessons_departures_load",
        "tests/lesson/test_discover.py::test_the_real_lessons_are_found_with_their_data",
        "tests/lesson/test_parse_qmd.py::test_every_label_form_the_course_uses_is_free_of_quarto_reserved_prefixes",
        "tests/lesson_content/test_lesson05_fsdp_practice.py::test_each_section_prints_the_formulas_values_on_both_variants",
        "tests/lesson_content/test_lesson05_fsdp_practice.py::test_section_6_prints_the_playbooks_benchmark_from_its_data",
        "tests/lesson_content/test_lesson05_numbers.py::test_the_built_pages_show_the_formulas_values",
        "tests/lesson_content/test_lesson05_text.py::test_llama2_70b_layer_is_counted_from_its_shapes",
        "tests/lesson_content/test_lesson05_text.py::test_the_70b_example_is_computed_and_says_it_does_not_fit",
        "tests/lesson_content/test_lesson05_text.py::test_the_built_page_shows_the_70b_example",
        "tests/lesson_content/test_lesson05_text.py::test_the_fsdp_unit_bound_is_the_formulas_modules",
        "tests/nbgrader_hooks/test_autograde_before_release.py::test_stock_autograde_before_the_release_writes_nothing",
        "tests/nbgrader_hooks/test_formgrader.py::test_formgrader_shows_each_questions_key_points_after_its_answer",
        "tests/nbgrader_hooks/test_similarity_evidence.py::test_evidence_sits_below_the_answer_it_concerns_for_graders_only",
        "tests/similarity/test_command.py::test_command_prints_pairs_and_writes_reports",
        "tests/similarity/test_command.py::test_missing_release_is_a_located_error",
        "tests/similarity/test_command.py::test_no_submissions_writes_an_empty_report",
        "tests/similarity/test_find_pairs.py::test_each_planted_pair_is_found_for_its_own_reason",
        "tests/similarity/test_find_pairs.py::test_planted_copies_found_honest_answers_not_flagged",
        "tests/similarity/test_find_pairs.py::test_spans_cover_the_shared_text_not_the_lesson",
        "tests/similarity/test_report_section.py::test_failing_check_patterns_come_from_the_gradebook",
        "tests/similarity/test_report_section.py::test_report_has_the_section_and_the_strongest_pair_column",
        "tests/site/test_lite_page.py::test_a_site_that_offers_the_assignment_runs_it_and_says_how_to_hand_it_in",
        "tests/site/test_lite_page.py::test_the_offer_is_the_models",
        "tests/site/test_lite_page.py::test_the_block_says_the_size_once_lite_is_built_and_says_it_again_when_it_changes",
        "tests/site/test_lite_site.py::test_a_lesson_runs_in_the_browser_when_pyodide_has_what_it_imports_or_its_front_matter_says",
        "tests/site/test_quarto_config.py::test_quarto_renders_only_the_course_lessons_as_a_website_with_sidebar_page_navigation_search_and_toc",
        "tests/site/test_quarto_config.py::test_the_quarto_site_and_front_page_carry_the_course_title",
        "tests/site/test_render_page.py::test_a_mention_of_another_lesson_links_to_it_only_when_it_exists_and_never_to_itself",
        "tests/site/test_render_page.py::test_an_image_alone_in_its_paragraph_is_a_figure_with_its_alt_text_as_caption",
        "tests/site/test_render_page.py::test_only_a_page_with_a_diagram_loads_mermaid",
        "tests/site/test_select_variant.py::test_lua_filter_on_the_raw_source_agrees_with_select_variant",
        "tests/test_architecture.py::test_src_names_no_lessons_own_module",
        "tests/test_lint.py::test_the_tree_is_clean",
        "tests/tools/test_quarto.py::test_a_quarto_older_than_1_7_is_refused_and_1_7_is_used",
        "tests/tools/test_quarto.py::test_a_site_built_by_another_renderer_or_version_is_rebuilt_whole",
        "tests/tools/test_quarto.py::test_auto_renders_with_quarto_only_when_one_is_found_and_a_bad_renderer_names_its_line",
        "tests/workflows/test_check_notebook.py::test_another_lessons_notebook_named_as_this_lesson_is_the_wrong_assignment",
        "tests/workflows/test_check_notebook.py::test_the_lessons_reading_notebook_is_not_the_assignment_and_says_which_to_hand_in",
        "tests/workflows/test_draw_figures.py::test_a_copy_of_the_project_names_lesson5s_inputs_as_the_project_does",
        "tests/workflows/test_draw_figures.py::test_a_deleted_image_is_redrawn",
        "tests/workflows/test_draw_figures.py::test_a_missing_input_names_the_file",
        "tests/workflows/test_draw_figures.py::test_a_solution_without_the_memory_function_is_named",
        "tests/workflows/test_draw_figures.py::test_an_unreadable_cache_means_redraw_not_failure",
        "tests/workflows/test_draw_figures.py::test_cache_dir_comes_from_course_config",
        "tests/workflows/test_draw_figures.py::test_editing_the_lessons_drawing_module_redraws_that_figure_from_the_edited_code",
        "tests/workflows/test_draw_figures.py::test_editing_the_solution_redraws_only_the_memory_chart_from_the_edited_file",
        "tests/workflows/test_draw_figures.py::test_first_build_draws_everything_and_a_rebuild_draws_nothing",
        "tests/workflows/test_draw_figures.py::test_lesson5_declares_its_figures_and_the_lab_with_their_inputs_relative_to_the_project",
        "tests/workflows/test_quarto_hooks.py::test_the_includes_folder_in_quarto_yml_must_be_the_build_cache",
        "tests/workflows/test_quarto_hooks.py::test_the_lessons_rendered_are_those_quarto_names_and_all_of_them_on_a_whole_render",
        "tests/workflows/test_quarto_hooks.py::test_the_variant_is_the_course_profile_among_quartos_active_ones_else_answer",
        "tests/workflows/test_render_quarto.py::test_a_lesson_page_lies_where_each_renderer_writes_it",
        "tests/workflows/test_site_steps.py::test_a_departures_page_in_the_student_site_stops_the_render_and_not_in_the_answer_site",
        "tests/workflows/test_site_steps.py::test_a_solution_line_on_a_student_page_stops_the_render_and_not_on_the_answer_page",
        "tests/workflows/test_site_steps.py::test_each_step_with_inputs_of_its_own_has_a_fingerprint_that_follows_them",
        "tests/workflows/test_site_steps.py::test_the_cdn_polyfill_is_removed_and_nothing_else_may_come_from_another_host",
    }
)


# The tests marked with one of MARKERS, as this run collected them (before -m/-k deselect any).
MARKED = pytest.StashKey[list]()


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark `sees_lessons` each test of SEES_LESSONS (all its parameters), so that -m selects it; keep the marked."""
    if item.nodeid.split("[", 1)[0] in SEES_LESSONS:
        item.add_marker(pytest.mark.sees_lessons)
    if any(item.get_closest_marker(name) for name in MARKERS):
        item.config.stash.setdefault(MARKED, []).append(item)


def marked_tests(config: pytest.Config) -> list[pytest.Item]:
    """The tests this run collected marked with one of MARKERS (lesson-generic ones: each lesson's case)."""
    return config.stash.get(MARKED, [])


def files_to_rerun(config: pytest.Config) -> list[Path] | None:
    """The test files a run with a lesson added must collect, when this run collected the whole suite (else None):
    those holding a marked test (a lesson-generic test has a case for every lesson, so a file holding none here
    holds none there), and those importing, directly or through other modules of the project, a module that listed
    the lessons when imported (their own import could fail with a lesson added)."""
    from tests.collection_order import COLLECTED_FILES, collected_whole_suite

    if not collected_whole_suite(config):
        return None
    reading = importers({Path(file) for file in RECORDER.at_import}, project_modules(ROOT))
    marked = {item.path for item in marked_tests(config)}
    return [path for path in config.stash[COLLECTED_FILES] if path in marked or path in reading]


def project_modules(root: Path) -> dict[str, Path]:
    """The Python modules of ROOT's tests/ and src/, by their dotted names."""
    modules = {}
    for top, folder in ((root, root / "tests"), (root / "src", root / "src")):
        for path in folder.rglob("*.py"):
            parts = path.relative_to(top).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def importers(listing: set[Path], modules: dict[str, Path]) -> set[Path]:
    """The files of MODULES that are in LISTING or import, directly or through other modules, one that is."""
    imports = {path: imported_modules(name, path, modules) for name, path in modules.items()}
    found = {path for path in imports if path in listing}
    while added := {path for path, imported in imports.items() if path not in found and imported & found}:
        found |= added
    return found


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[Path]:
    """The files of MODULES the module NAME, at PATH, imports (at its top or inside a function)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) + 1 - node.level] if node.level else []
            module = ".".join([*base, *filter(None, [node.module])])
            names = [module] + [f"{module}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {modules[imported] for imported in names if imported in modules}
    return found


@pytest.fixture(scope="session", autouse=True)
def lessons_seen_only_when_marked(request) -> None:
    """Every test from here on is judged: one that saw the lesson set without a marker saying so fails."""
    global ACTIVE_TEST_RUN
    ACTIVE_TEST_RUN = True
    guard = LessonSetGuard()
    guard.start_test()  # the first test is being set up already
    request.config.pluginmanager.register(guard, "lesson-set-guard")  # to the session's end: the last test's
    # teardown, which tears this fixture down too, is judged after it
