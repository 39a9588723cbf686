"""Each role's Jupyter configuration on the hub, written as config folders that a server finds on JUPYTER_CONFIG_PATH.

As nbgrader's documentation sets a hub up, students get only the student tools (the Assignments tab and Validate),
staff get the course list, which links to formgrader in the course's shared server, and that server (run by the
grading account in the course root) gets formgrader and the Create Assignment toolbar. The tools are switched off
where they do not belong both in JupyterLab (page_config.json's disabledExtensions) and on the server
(jpserver_extensions), so a hidden tool's API is not served either. The folder `global` holds the hub-level
nbgrader settings every role reads (the course id and the exchange root) and keeps JupyterLab from fetching
news or update checks from the internet.
"""

from __future__ import annotations

import json
from pathlib import Path

from course.fileio import write_atomic

# nbgrader's JupyterLab plugins and the server extensions behind them.
LAB = {
    "formgrader": "@jupyter/nbgrader:formgrader",
    "create-assignment": "@jupyter/nbgrader:create-assignment",
    "course-list": "@jupyter/nbgrader:course-list",
    "assignment-list": "@jupyter/nbgrader:assignment-list",
}
SERVER = {
    "formgrader": "nbgrader.server_extensions.formgrader",
    "course-list": "nbgrader.server_extensions.course_list",
    "assignment-list": "nbgrader.server_extensions.assignment_list",
}

# The tools each role's servers do NOT get (validate is everyone's).
HIDDEN = {
    "student": ("formgrader", "create-assignment", "course-list"),
    "staff": ("formgrader", "create-assignment", "assignment-list"),
    "course": ("assignment-list", "course-list"),
}


def config_path(folder: Path, role: str) -> list[Path]:
    """The JUPYTER_CONFIG_PATH entries of ROLE's servers: its own folder first, then the hub-level one."""
    return [Path(folder) / role, Path(folder) / "global"]


def write_role_configs(folder: Path, course_id: str, exchange_root: Path) -> dict[str, list[Path]]:
    """Write FOLDER/{global,student,staff,course}; returns each role's JUPYTER_CONFIG_PATH entries."""
    folder = Path(folder)
    nbgrader = {"CourseDirectory": {"course_id": course_id}, "Exchange": {"root": str(exchange_root)}}
    _write_json(folder / "global" / "nbgrader_config.json", nbgrader)
    _write_json(
        folder / "global" / "jupyter_server_config.json",
        {"LabApp": {"news_url": None, "check_for_updates_class": "jupyterlab.NeverCheckForUpdate"}},
    )
    paths = {}
    for role, hidden in HIDDEN.items():
        own = folder / role
        _write_json(
            own / "labconfig" / "page_config.json", {"disabledExtensions": {LAB[tool]: True for tool in hidden}}
        )
        _write_json(
            own / "jupyter_server_config.d" / "course-hub-role.json",
            {"ServerApp": {"jpserver_extensions": {SERVER[t]: False for t in hidden if t in SERVER}}},
        )
        paths[role] = config_path(folder, role)
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)  # every account's server reads its role's folder
    return paths


def _write_json(path: Path, data: dict) -> None:
    """One config file, written whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
