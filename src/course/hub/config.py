"""The course's JupyterHub settings, applied by hub/jupyterhub_config.py to JupyterHub's config object.

Set up as nbgrader's documentation does for one course with several graders: every account is a local unix
account and each server runs as its owner (LocalProcessSpawner, from this project's .venv); the course's shared
server is a hub service named after the course id, run by the grading account in the course root, and reached
only by the group formgrade-<course id> (instructors and graders); students form nbgrader-<course id>.
Everyone's servers read the hub-level nbgrader settings (course id, exchange root) and their role's tools
(course.hub.role_config). Each setting below is a CourseHub option, set in jupyterhub_config.py
(`c.CourseHub.port = 8000`) or, for `course hub`, from the environment variable COURSE_HUB_<NAME>.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from traitlets import Integer, Unicode, default
from traitlets.config import Configurable

from course.hub.role_config import write_role_configs
from course.hub.roster import load_roster
from course.nbgrader_hooks.config import COURSE_ID

ENV_PREFIX = "COURSE_HUB_"


def _from_env(name: str, fallback: str) -> str:
    """A setting's value from COURSE_HUB_<NAME>, else FALLBACK."""
    return os.environ.get(ENV_PREFIX + name.upper(), fallback)


class CourseHub(Configurable):
    """Where the course lives and who uses it, for the hub."""

    project_root = Unicode(help="The course repository: its .venv runs every server, its node_modules the proxy.").tag(
        config=True
    )
    course_root = Unicode(help="The nbgrader course root the course's shared server (formgrader) runs in.").tag(
        config=True
    )
    roster = Unicode(help="The roster file (schema course/hub-roster/v1): accounts per role.").tag(config=True)
    state_dir = Unicode(help="Where the hub keeps its database, cookie secret and the roles' Jupyter config.").tag(
        config=True
    )
    exchange_root = Unicode(help="nbgrader's exchange (Exchange.root) for everyone on the hub.").tag(config=True)
    course_id = Unicode(help="nbgrader's course id; also the name of the course's shared server.").tag(config=True)
    port = Integer(
        help="The hub's public port on 127.0.0.1; the next three serve the hub's API, the proxy's "
        "API and the course's shared server."
    ).tag(config=True)
    shared_password = Unicode(
        help="If set, every roster account logs in with this password "
        "(SharedPasswordAuthenticator, for a trial); otherwise with its own (PAM)."
    ).tag(config=True)

    @default("project_root")
    def _project_root(self):
        return str(Path.cwd())

    @default("course_root")
    def _course_root(self):
        return _from_env("course_root", str(Path(self.project_root) / "autograder"))

    @default("roster")
    def _roster(self):
        return _from_env("roster", str(Path(self.project_root) / "hub" / "roster.yml"))

    @default("state_dir")
    def _state_dir(self):
        return _from_env("state_dir", str(Path(self.project_root) / ".course-hub"))

    @default("exchange_root")
    def _exchange_root(self):
        # outside the course root, so students never need to enter it; the course's own config only sets a
        # default Exchange.root, which this hub-level value overrides for everyone, the course's server included
        return _from_env("exchange_root", str(Path(self.state_dir) / "exchange"))

    @default("course_id")
    def _course_id(self):
        return _from_env("course_id", COURSE_ID)

    @default("port")
    def _port(self):
        return int(_from_env("port", "8000"))

    @default("shared_password")
    def _shared_password(self):
        return _from_env("shared_password", "")


def configure_hub(c, project_root: Path) -> CourseHub:
    """Fill JupyterHub's config C for the course whose repository is PROJECT_ROOT."""
    if "project_root" not in c.CourseHub:
        c.CourseHub.project_root = str(project_root)
    hub = CourseHub(config=c)
    roster = load_roster(Path(hub.roster))
    state = Path(hub.state_dir).resolve()
    state.mkdir(parents=True, exist_ok=True)
    exchange = Path(hub.exchange_root)
    exchange.mkdir(parents=True, exist_ok=True)
    exchange.chmod(0o1777)  # as nbgrader asks: everyone writes, nobody removes others' files
    configs = write_role_configs(state / "jupyter", hub.course_id, exchange)
    venv_bin = Path(sys.executable).parent
    singleuser = [sys.executable, "-P", "-m", "course.hub.singleuser"]  # -P: nothing from the cwd shadows it
    path = os.pathsep.join([str(venv_bin), "/usr/local/bin", "/usr/bin", "/bin"])  # nbgrader runs alembic from PATH

    def environment(role: str) -> dict[str, str]:
        """What a server of ROLE finds: its tools, the hub-level nbgrader settings, the project's tools."""
        return {"JUPYTER_CONFIG_PATH": os.pathsep.join(map(str, configs[role])), "PATH": path}

    c.JupyterHub.ip = "127.0.0.1"
    c.JupyterHub.port = hub.port
    c.JupyterHub.hub_ip = "127.0.0.1"
    c.JupyterHub.hub_port = hub.port + 1
    c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{hub.port + 2}"
    c.ConfigurableHTTPProxy.command = [
        str(Path(hub.project_root) / "node_modules" / ".bin" / "configurable-http-proxy")
    ]
    c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
    c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
    c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")

    c.Authenticator.allowed_users = set(roster.everyone)
    if hub.shared_password:
        c.JupyterHub.authenticator_class = "shared-password"
        c.SharedPasswordAuthenticator.user_password = hub.shared_password
    else:
        c.JupyterHub.authenticator_class = "pam"

    c.JupyterHub.spawner_class = "localprocess"
    c.Spawner.cmd = singleuser
    c.Spawner.default_url = "/lab"
    c.Spawner.start_timeout = c.Spawner.http_timeout = 180  # a JupyterLab start on a busy two-core machine

    def give_role(spawner) -> None:
        """Before a user's server starts: the tools of that user's role (a new dict, never the shared default)."""
        spawner.environment = {**spawner.environment, **environment(roster.role(spawner.user.name))}

    c.Spawner.pre_spawn_hook = give_role

    course, staff, students = hub.course_id, f"formgrade-{hub.course_id}", f"nbgrader-{hub.course_id}"
    c.JupyterHub.load_groups = {
        staff: {"users": list(roster.staff)},
        students: {"users": list(roster.students)},
        "instructors": {"users": list(roster.instructors)},
    }
    c.JupyterHub.load_roles = [
        # formgrade-<course>: open the course's shared server, and let the course list find it
        {
            "name": staff,
            "groups": [staff],
            "scopes": [f"access:services!service={course}", "list:services", f"read:services!service={course}"],
        },
        # instructors also see and restart their students' servers
        {
            "name": "course-instructor",
            "groups": ["instructors"],
            "scopes": ["admin-ui", f"list:users!group={students}", f"admin:servers!group={students}"],
        },
        # a server's token may do what its owner may (the course list asks the hub for the course's server)
        {"name": "server", "scopes": ["inherit"]},
    ]
    c.JupyterHub.services = [
        {
            "name": course,
            "url": f"http://127.0.0.1:{hub.port + 3}",
            "command": singleuser,
            "user": roster.grading_account,
            "cwd": str(Path(hub.course_root).resolve()),
            "oauth_no_confirm": True,
            "environment": {**environment("course"), "JUPYTERHUB_DEFAULT_URL": "/lab"},
        }
    ]
    return hub
