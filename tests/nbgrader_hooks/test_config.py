"""The course's nbgrader config sets defaults: what a system, hub or user config or the command line sets wins over
it, whichever section it is set in (traitlets reads a base class's section before the class's own)."""

from __future__ import annotations

import functools
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from traitlets.config import Config, Configurable

from course.grading.gradebook import configured_gradebook, nbgrader_config
from course.nbgrader_hooks.config import COURSE_ID, course_settings
from course.workflows.grade import run_nbgrader
from tests.gradebooks import hub_config

COURSE_CONFIG = Path(__file__).parents[2] / "autograder" / "nbgrader_config.py"


def course_options() -> list[tuple[str, ...]]:
    """Every option the course's nbgrader config sets: its sections (nested ones too), then its name."""

    def walk(section: Config, path: tuple[str, ...]):
        for key, value in section.items():
            yield from walk(value, (*path, key)) if isinstance(value, Config) else [(*path, key)]

    course = Config()
    course_settings(course, COURSE_CONFIG.parent)
    return sorted(walk(course, ()))


def configurable(name: str, option: str | None = None) -> type:
    """The configurable class of that name (a config section's name) that has OPTION (nbgrader has two classes named
    Exchange); the course's steps are imported first, as its config names some by their dotted path."""
    import course.nbgrader_hooks.formgrader  # noqa: F401
    import course.nbgrader_hooks.similarity_evidence  # noqa: F401

    todo = [Configurable]
    while todo:
        cls = todo.pop()
        if cls.__name__ == name and (option is None or option in cls.class_traits()):
            return cls
        todo.extend(cls.__subclasses__())
    raise LookupError(f"{name}.{option}")


def declared_by(section: str, option: str) -> str:
    """The most general section that configures OPTION of SECTION's class: the base class declaring it (what
    nbgrader's aliases set, e.g. `--to` → ExportPlugin.to)."""
    return next(
        k.__name__
        for k in reversed(configurable(section, option).__mro__)
        if isinstance(k, type) and issubclass(k, Configurable) and option in k.class_own_traits()
    )


def seen_by(config: Config, sections: tuple[str, ...]) -> Config:
    """The config traitlets gives an instance of sections[-1] whose parents are the sections before it."""
    node = None
    for name in sections:
        node = SimpleNamespace(parent=node, section_names=configurable(name).section_names)
        node._find_my_config = functools.partial(Configurable._find_my_config, node)
    return node._find_my_config(config)


@pytest.fixture
def nbgrader_app(tmp_path, monkeypatch):
    """Start nbgrader's app in a folder with the course's config and ARGV on its command line; its final config."""
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setattr(sys, "path", list(sys.path))  # nbgrader puts the folder it runs in on it

    def start(root: Path, argv: list[str]) -> Config:
        from nbgrader.apps.baseapp import NbGrader

        monkeypatch.chdir(root)
        app = NbGrader.instance()
        try:
            app.initialize(argv)
            return app.config
        finally:
            app.reset()

    return start


OPTIONS = course_options()


@pytest.fixture
def course_root(tmp_path) -> Path:
    """A course root holding only the course's nbgrader_config.py, in a course project of its own."""
    (tmp_path / "pyproject.toml").write_text("[tool.course]\n", "utf-8")
    root = tmp_path / "autograder"
    root.mkdir()
    shutil.copy(COURSE_CONFIG, root)
    return root


def test_the_course_project_around_the_course_root_gives_the_hints_lessons_and_web_assets(course_root, tmp_path):
    config = Config()
    course_settings(config, course_root)
    assert config.GraderHints.lessons_dir == str(tmp_path.resolve() / "lessons")
    assert config.OfflineScripts.project_root == str(tmp_path.resolve())
    alone = tmp_path / "server" / "autograder"
    shutil.copytree(course_root, alone)
    (tmp_path / "pyproject.toml").unlink()  # the course root standing alone: nbgrader's own defaults
    standalone = Config()
    course_settings(standalone, alone)
    assert "lessons_dir" not in standalone.GraderHints and "project_root" not in standalone.OfflineScripts


def test_without_a_hub_config_the_course_defaults_apply(course_root, tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "no-hub"))
    config = nbgrader_config(course_root)
    assert config.CourseDirectory.course_id == COURSE_ID
    assert config.Exchange.root == str(course_root / "exchange")
    assert configured_gradebook(course_root).url == f"sqlite:///{course_root / 'gradebook.db'}"
    assert "SandboxExecute" in str(config.Autograde.autograde_preprocessors)
    assert config.AssignLatePenalties.plugin_class.__name__ == "CourseLatePenalty"  # the declared late policy


def test_a_hub_config_wins_over_the_course_defaults(course_root, tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "hub"))
    hub_config(
        tmp_path / "hub",
        [
            'c.CourseDirectory.course_id = "hub-course"',
            'c.Exchange.root = "/srv/exchange"',
            'c.CourseDirectory.db_url = "postgresql://grader:pw@db.example/gradebook"',
            'c.GenerateFeedback.HTMLExporter.template_name = "hub_feedback"',
            'c.AssignLatePenalties.plugin_class = "nbgrader.plugins.LateSubmissionPlugin"',
        ],
    )
    config = nbgrader_config(course_root)
    assert config.CourseDirectory.course_id == "hub-course" and config.Exchange.root == "/srv/exchange"
    where = configured_gradebook(course_root)
    assert where.url == "postgresql://grader:pw@db.example/gradebook"
    assert where.shown == "postgresql://grader:***@db.example/gradebook"
    assert where.source == str(tmp_path / "hub" / "nbgrader_config.py")
    assert "SandboxExecute" in str(config.Autograde.autograde_preprocessors)  # what the hub leaves alone stays
    feedback = config.GenerateFeedback.HTMLExporter  # a nested section: the hub's key wins, the course's others stay
    assert feedback.template_name == "hub_feedback" and any("nbgrader" in p for p in feedback.extra_template_paths)
    assert config.AssignLatePenalties.plugin_class == "nbgrader.plugins.LateSubmissionPlugin"  # the hub's policy


def test_the_demo_course_keeps_its_own_gradebook_root_and_id_whatever_a_hub_sets(tmp_path, monkeypatch):
    from course.workflows.demo_cycle import CONFIG

    demo = tmp_path / "demo"
    demo.mkdir()
    (demo / "nbgrader_config.py").write_text(CONFIG, "utf-8")
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "hub"))
    hub_config(
        tmp_path / "hub",
        [
            'c.CourseDirectory.course_id = "hub-course"',
            'c.Exchange.root = "/srv/exchange"',
            'c.CourseDirectory.root = "/srv/course/autograder"',
            'c.CourseDirectory.db_url = "postgresql://grader:pw@db.example/gradebook"',
            "c.GradingSandbox.memory_bytes = 2**30",
        ],
    )
    config = nbgrader_config(demo)
    assert configured_gradebook(demo).url == f"sqlite:///{demo / 'gradebook.db'}"  # never the real class's
    assert (config.CourseDirectory.root, config.CourseDirectory.course_id, config.Exchange.root) == (
        str(demo),
        f"{COURSE_ID}-demo",
        str(demo / "exchange"),
    )
    assert config.GradingSandbox.memory_bytes == 2**30  # the hub's sandbox settings still apply


@pytest.mark.slow
def test_stock_release_assignment_uses_the_hubs_exchange_root_and_course_id(released, tmp_path, monkeypatch):
    exchange = tmp_path / "exchange"
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "hub"))
    hub_config(tmp_path / "hub", ['c.CourseDirectory.course_id = "hub-course"', f"c.Exchange.root = {str(exchange)!r}"])
    root = tmp_path / "autograder"
    shutil.copytree(released, root)
    run_nbgrader(root, "release_assignment", "lesson05")
    assert (exchange / "hub-course" / "outbound" / "lesson05" / "lesson05.ipynb").is_file()
    assert not (root / "exchange").exists() and not (exchange / COURSE_ID).exists()


def test_every_option_the_course_sets_reaches_nbgraders_apps_by_default(
    course_root, nbgrader_app, tmp_path, monkeypatch
):
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "no-hub"))
    course = Config()
    course_settings(course, course_root)
    loaded = nbgrader_app(course_root, [])
    for *sections, option in OPTIONS:
        expected = functools.reduce(lambda c, name: c[name], sections, course)[option]
        assert seen_by(loaded, tuple(sections))[option] == expected, (*sections, option)


@pytest.mark.parametrize("option", OPTIONS, ids=".".join)
def test_the_command_line_wins_over_each_course_default(course_root, nbgrader_app, option, tmp_path, monkeypatch):
    *sections, name = option
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "no-hub"))
    loaded = nbgrader_app(course_root, [f"--{declared_by(sections[-1], name)}.{name}=typed"])
    assert seen_by(loaded, tuple(sections))[name] == "typed"


@pytest.mark.parametrize("option", OPTIONS, ids=".".join)
def test_a_hub_config_wins_over_each_course_default(course_root, nbgrader_app, option, tmp_path, monkeypatch):
    *sections, name = option
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "hub"))
    hub_config(tmp_path / "hub", [f"c.{declared_by(sections[-1], name)}.{name} = 'from the hub'"])
    assert seen_by(nbgrader_app(course_root, []), tuple(sections))[name] == "from the hub"
    assert seen_by(nbgrader_config(course_root), tuple(sections))[name] == "from the hub"  # as `course` reads it


def test_the_demo_course_keeps_its_export_file_unless_the_command_line_names_one(tmp_path, nbgrader_app, monkeypatch):
    from course.workflows.demo_cycle import CONFIG

    demo = tmp_path / "demo"
    demo.mkdir()
    (demo / "nbgrader_config.py").write_text(CONFIG, "utf-8")
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "hub"))
    hub_config(tmp_path / "hub", ['c.ExportPlugin.to = "/srv/course/grades.csv"'])  # the real class's
    assert seen_by(nbgrader_app(demo, []), ("CsvExportPlugin",))["to"] == str(demo / "reports" / "grades.csv")
    assert seen_by(nbgrader_app(demo, ["--ExportPlugin.to=mine.csv"]), ("CsvExportPlugin",))["to"] == "mine.csv"
