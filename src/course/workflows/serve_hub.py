"""Start the course's JupyterHub (hub/jupyterhub_config.py) on 127.0.0.1 after checking what it needs.

The hub runs as root so that each account's server runs as that account; the checks name what is missing
before anything starts: an account of the roster, the proxy (`npm install`), a folder other accounts cannot
enter on the way to the project's .venv (a checkout under /root: `--open-folders` lets them through), or a course
root the grading account does not own.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from course.errors import CourseError, Location, ToolMissing
from course.hub.config import ENV_PREFIX
from course.hub.roster import load_roster

MIN_PASSWORD = 8  # SharedPasswordAuthenticator refuses shorter shared passwords


def hub_environment(
    project_root: Path, *, course_root: Path, roster: Path, state_dir: Path, port: int, password: str | None
) -> dict[str, str]:
    """The environment `jupyterhub -f hub/jupyterhub_config.py` reads the CourseHub settings from."""
    env = dict(os.environ)
    env.update(
        {
            ENV_PREFIX + "PROJECT_ROOT": str(project_root),
            ENV_PREFIX + "COURSE_ROOT": str(course_root),
            ENV_PREFIX + "ROSTER": str(roster),
            ENV_PREFIX + "STATE_DIR": str(state_dir),
            ENV_PREFIX + "PORT": str(port),
        }
    )
    if password:
        env[ENV_PREFIX + "SHARED_PASSWORD"] = password
    return env


def check_hub(
    project_root: Path, course_root: Path, roster_path: Path, password: str | None, python: Sequence[Path] | None = None
) -> None:
    """Everything the hub needs before it starts, each failure naming the fix; PYTHON: the folders holding the Python
    the accounts' servers run (default: this one's, python_folders)."""
    if os.geteuid() != 0:
        raise CourseError(
            "the hub starts each account's server as that account, which needs root; run `course hub` as root"
        )
    if shutil.which("jupyterhub", path=str(Path(sys.executable).parent)) is None:
        raise ToolMissing("jupyterhub not installed in this environment; run `make` (pip install -e .)")
    proxy = project_root / "node_modules" / ".bin" / "configurable-http-proxy"
    if not proxy.exists():
        raise ToolMissing(f"{proxy} not found; run `make` (npm install)")
    if password is not None and len(password) < MIN_PASSWORD:
        raise CourseError(f"the shared password must have at least {MIN_PASSWORD} characters")
    roster = load_roster(roster_path)
    missing = [n for n in (*roster.everyone, roster.grading_account) if not _account_exists(n)]
    if missing:
        raise CourseError(
            "no local account " + ", ".join(missing) + "; create each with `useradd -m NAME`", Location(roster_path)
        )
    if not (course_root / "nbgrader_config.py").is_file():
        raise CourseError("not an nbgrader course root (no nbgrader_config.py)", Location(course_root))
    owner = pwd.getpwnam(roster.grading_account).pw_uid
    if course_root.stat().st_uid != owner:
        raise CourseError(
            f"the course's shared server runs as {roster.grading_account}, who must own the course "
            f"root: `chown -R {roster.grading_account} {course_root}`",
            Location(course_root),
        )
    closed = closed_folders(project_root, course_root, python)
    if closed:
        shown = " ".join(str(part) for part in closed)
        raise CourseError(
            f"other accounts' servers run this project's Python but cannot enter {shown} (a project "
            f"under /root, say): run `chmod o+x {shown}` (others may then pass through, not list or "
            "read them), or `course hub --open-folders`, which does just that"
        )


def open_folders(project_root: Path, course_root: Path, python: Sequence[Path] | None = None) -> list[Path]:
    """Let other accounts pass through (chmod o+x, nothing more) each folder on the way to the project's Python and
    the course root; the folders changed."""
    closed = closed_folders(project_root, course_root, python)
    for part in closed:
        part.chmod(part.stat().st_mode | stat.S_IXOTH)
    return closed


def closed_folders(project_root: Path, course_root: Path, python: Sequence[Path] | None = None) -> list[Path]:
    """Folders other accounts cannot enter on the way to the Python (PYTHON's folders, default this one's), .venv and
    sources they run, and to the course root the grading account owns."""
    python = python_folders() if python is None else python
    return closed_on_the_way((*python, project_root / "src", project_root / "node_modules", course_root.parent))


def python_folders() -> tuple[Path, ...]:
    """The folders holding the running Python: its program's, its installation and its environment (the .venv)."""
    return Path(sys.executable).resolve().parent, Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()


def closed_on_the_way(folders: Iterable[Path]) -> list[Path]:
    """Each of FOLDERS and their parents that other accounts cannot enter (no o+x), parents first."""
    closed = {
        part for folder in folders for part in (folder, *folder.parents) if not part.stat().st_mode & stat.S_IXOTH
    }
    return sorted(closed)


def _account_exists(name: str) -> bool:
    """Whether NAME is a local account."""
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def serve_hub(
    project_root: Path,
    *,
    course_root: Path,
    roster: Path,
    state_dir: Path,
    port: int,
    password: str | None,
    open_closed: bool = False,
) -> None:
    """Check, then become `jupyterhub` (signals reach it directly; stopping it stops every server it started);
    OPEN_CLOSED first lets other accounts through the folders on the way to the project (open_folders)."""
    project_root, course_root = project_root.resolve(), course_root.resolve()
    if open_closed and os.geteuid() == 0:
        for part in open_folders(project_root, course_root):
            print(f"course hub: chmod o+x {part} (other accounts may pass through it, not list or read it)")
    check_hub(project_root, course_root, roster, password)
    state_dir.mkdir(parents=True, exist_ok=True)
    state_dir.chmod(0o755)
    env = hub_environment(
        project_root,
        course_root=course_root,
        roster=roster.resolve(),
        state_dir=state_dir.resolve(),
        port=port,
        password=password,
    )
    exe = str(Path(sys.executable).parent / "jupyterhub")
    print(f"course hub: http://127.0.0.1:{port}/ (course root {course_root}); Ctrl-C stops it", flush=True)
    os.chdir(state_dir)
    os.execve(exe, [exe, "-f", str(project_root / "hub" / "jupyterhub_config.py")], env)
