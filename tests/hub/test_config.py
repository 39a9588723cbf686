"""The hub's configuration: roster validation, each role's tools, and what JupyterHub is told (no hub started)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jupyterhub
import pytest
from traitlets.config import Config

from course.errors import CourseError
from course.hub.config import configure_hub
from course.hub.role_config import write_role_configs
from course.hub.roster import load_roster

ROOT = Path(__file__).resolve().parents[2]
ROSTER = """version: 1
instructors: [ada]
graders: [bob]
students: [cai, dan]
grading_account: grader-course
"""


@pytest.fixture
def roster(tmp_path) -> Path:
    path = tmp_path / "roster.yml"
    path.write_text(ROSTER, "utf-8")
    return path


def test_the_shipped_roster_is_valid():
    roster = load_roster(ROOT / "hub" / "roster.yml")
    assert roster.instructors and roster.graders and roster.students


def test_roster_roles(roster):
    r = load_roster(roster)
    assert r.staff == ("ada", "bob") and r.everyone == ("ada", "bob", "cai", "dan")
    assert r.role("bob") == "staff" and r.role("cai") == "student"


@pytest.mark.parametrize(
    "text, where",
    [
        (ROSTER.replace("students: [cai, dan]", "students: [cai, bob]"), "roster.yml, line 4: students/1: bob is also"),
        (
            ROSTER.replace("grading_account: grader-course", "grading_account: ada"),
            "roster.yml, line 5: grading_account: ada also logs in",
        ),
        (ROSTER.replace("graders: [bob]", "graders: [Bob Smith]"), "roster.yml, line 3: graders/0"),
        (ROSTER.replace("version: 1\n", ""), "roster.yml, line 1: (top level): missing key 'version'"),
    ],
)
def test_a_bad_roster_is_named_with_its_line(tmp_path, text, where):
    path = tmp_path / "roster.yml"
    path.write_text(text, "utf-8")
    with pytest.raises(CourseError) as err:
        load_roster(path)
    assert where in str(err.value)


def test_students_get_only_the_student_tools_staff_the_course_list_the_course_server_the_instructor_tools(tmp_path):
    paths = write_role_configs(tmp_path, "demo-course", tmp_path / "exchange")

    def hidden(role):
        page = json.loads((tmp_path / role / "labconfig" / "page_config.json").read_text("utf-8"))
        server = json.loads((tmp_path / role / "jupyter_server_config.d" / "course-hub-role.json").read_text("utf-8"))
        return (set(page["disabledExtensions"]), set(server["ServerApp"]["jpserver_extensions"]))

    lab, server = hidden("student")
    assert lab == {
        "@jupyter/nbgrader:formgrader",
        "@jupyter/nbgrader:create-assignment",
        "@jupyter/nbgrader:course-list",
    }
    assert server == {"nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"}
    assert "@jupyter/nbgrader:formgrader" in hidden("staff")[0]  # staff reach formgrader in the course's server
    assert "@jupyter/nbgrader:course-list" not in hidden("staff")[0]
    lab, server = hidden("course")
    assert not lab & {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment"}
    assert "@jupyter/nbgrader:assignment-list" in lab
    nbgrader = json.loads((tmp_path / "global" / "nbgrader_config.json").read_text("utf-8"))
    assert nbgrader == {
        "CourseDirectory": {"course_id": "demo-course"},
        "Exchange": {"root": str(tmp_path / "exchange")},
    }
    assert paths["student"] == [tmp_path / "student", tmp_path / "global"]


def test_the_hub_is_set_up_for_one_course_with_instructors_and_graders(tmp_path, roster, monkeypatch):
    for name in ("SHARED_PASSWORD", "PORT", "EXCHANGE_ROOT", "COURSE_ROOT", "ROSTER", "STATE_DIR"):
        monkeypatch.delenv(f"COURSE_HUB_{name}", raising=False)
    c = Config()
    c.CourseHub.roster = str(roster)
    c.CourseHub.state_dir = str(tmp_path / "state")
    c.CourseHub.course_root = str(tmp_path / "autograder")
    c.CourseHub.port = 18100
    hub = configure_hub(c, ROOT)
    assert c.JupyterHub.ip == c.JupyterHub.hub_ip == "127.0.0.1" and c.JupyterHub.port == 18100
    assert c.JupyterHub.authenticator_class == "pam"  # each account's own password unless a trial sets one
    assert c.Authenticator.allowed_users == {"ada", "bob", "cai", "dan"}
    groups = c.JupyterHub.load_groups
    assert groups[f"formgrade-{hub.course_id}"]["users"] == ["ada", "bob"]
    assert groups[f"nbgrader-{hub.course_id}"]["users"] == ["cai", "dan"]
    roles = {r["name"]: r for r in c.JupyterHub.load_roles}
    assert f"access:services!service={hub.course_id}" in roles[f"formgrade-{hub.course_id}"]["scopes"]
    [service] = c.JupyterHub.services
    assert service["name"] == hub.course_id and service["user"] == "grader-course"
    assert service["cwd"] == str((tmp_path / "autograder").resolve())
    assert service["url"] == "http://127.0.0.1:18103"
    assert service["environment"]["JUPYTER_CONFIG_PATH"].split(":")[0].endswith("/jupyter/course")
    exchange = tmp_path / "state" / "exchange"  # outside the course root: students never enter autograder/
    assert exchange.stat().st_mode & 0o7777 == 0o1777
    nbgrader = json.loads((tmp_path / "state" / "jupyter" / "global" / "nbgrader_config.json").read_text("utf-8"))
    assert nbgrader["Exchange"]["root"] == str(exchange)
    assert c.Spawner.cmd == service["command"] == [sys.executable, "-P", "-m", "course.hub.singleuser"]

    class Spawner:  # what the pre-spawn hook sees of a user's spawner
        def __init__(self, name):
            self.user = type("User", (), {"name": name})()
            self.environment = {"KEEP": "1"}

    for name, role in (("cai", "student"), ("bob", "staff")):
        spawner = Spawner(name)
        c.Spawner.pre_spawn_hook(spawner)
        assert spawner.environment["JUPYTER_CONFIG_PATH"].split(":")[0] == str(tmp_path / "state" / "jupyter" / role)
        assert spawner.environment["KEEP"] == "1"


def test_the_servers_start_jupyterhub_singleuser_without_the_unused_iri_checker(tmp_path):
    """The hub's servers are stock jupyterhub-singleuser (its version, its options), minus the IRI checker's grammars
    (rfc3987_syntax on lark), which every start would otherwise build."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    run = subprocess.run(
        [sys.executable, "-P", "-m", "course.hub.singleuser", "--version"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and run.stdout.strip() == jupyterhub.__version__, run.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
    assert {"jupyterhub.singleuser", "jsonschema"} <= imported and "lark" not in imported


def test_a_trial_logs_in_with_a_shared_password(tmp_path, roster, monkeypatch):
    monkeypatch.setenv("COURSE_HUB_SHARED_PASSWORD", "a-long-password")
    c = Config()
    c.CourseHub.roster = str(roster)
    c.CourseHub.state_dir = str(tmp_path / "state")
    c.CourseHub.course_root = str(tmp_path / "autograder")
    configure_hub(c, ROOT)
    assert c.JupyterHub.authenticator_class == "shared-password"
    assert c.SharedPasswordAuthenticator.user_password == "a-long-password"


def test_the_hub_command_names_missing_accounts(tmp_path, roster):
    from course.workflows.serve_hub import check_hub

    (tmp_path / "autograder").mkdir()
    with pytest.raises(CourseError, match="no local account ada, bob, cai, dan, grader-course; create each"):
        check_hub(ROOT, tmp_path / "autograder", roster, "a-long-password")
