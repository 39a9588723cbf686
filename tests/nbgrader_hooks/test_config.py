"""The course's nbgrader config sets defaults: what a system, hub or user config sets wins over it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from course.grading.gradebook import configured_gradebook, nbgrader_config
from course.nbgrader_hooks.config import COURSE_ID
from course.workflows.grade import run_nbgrader
from tests.gradebooks import hub_config

COURSE_CONFIG = Path(__file__).parents[2] / "autograder" / "nbgrader_config.py"


@pytest.fixture
def course_root(tmp_path) -> Path:
    """A course root holding only the course's nbgrader_config.py."""
    root = tmp_path / "autograder"
    root.mkdir()
    shutil.copy(COURSE_CONFIG, root)
    return root


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
    hub_config(tmp_path / "hub", ['c.CourseDirectory.course_id = "hub-course"', 'c.Exchange.root = "/srv/exchange"',
                                  'c.CourseDirectory.db_url = "postgresql://grader:pw@db.example/gradebook"',
                                  'c.GenerateFeedback.HTMLExporter.template_name = "hub_feedback"',
                                  'c.AssignLatePenalties.plugin_class = "nbgrader.plugins.LateSubmissionPlugin"'])
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
    hub_config(tmp_path / "hub", ['c.CourseDirectory.course_id = "hub-course"', 'c.Exchange.root = "/srv/exchange"',
                                  'c.CourseDirectory.root = "/srv/course/autograder"',
                                  'c.CourseDirectory.db_url = "postgresql://grader:pw@db.example/gradebook"',
                                  'c.GradingSandbox.memory_bytes = 2**30'])
    config = nbgrader_config(demo)
    assert configured_gradebook(demo).url == f"sqlite:///{demo / 'gradebook.db'}"  # never the real class's
    assert (config.CourseDirectory.root, config.CourseDirectory.course_id, config.Exchange.root) == (
        str(demo), f"{COURSE_ID}-demo", str(demo / "exchange"))
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
