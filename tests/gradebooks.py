"""Gradebooks on both databases nbgrader courses use: SQLite (nbgrader's default) and a real PostgreSQL server.

The server is started by the tests themselves (initdb into a temporary folder, unix socket only, no TCP, no
system service) once per run and stopped at its end: under pytest-xdist the first worker that needs it starts it
and the last one to finish stops it (shared_server, as pytest-xdist's docs share a session fixture: a folder all
workers see and a file lock); each test gets its own database, cloned from a template that already holds nbgrader's
empty gradebook tables. PostgreSQL refuses to run as root, so when the
tests run as root the server runs as the `postgres` system user that Debian's package creates.
The course points at a database the way a hub does: a hub-level nbgrader_config.py setting
`c.CourseDirectory.db_url`, found through JUPYTER_CONFIG_PATH.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

PG_PACKAGE = "postgresql"  # the Debian package with initdb / pg_ctl (scripts/setup-system.sh installs it)
TEMPLATE = "gradebook_template"
PG_ROOT = Path("/usr/lib/postgresql")  # Debian: one <major>/bin per installed server version


def pg_bin() -> Path:
    """The newest installed PostgreSQL's bin folder (Debian: /usr/lib/postgresql/<major>/bin)."""
    found = sorted(PG_ROOT.glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if not found:
        pytest.fail(
            f"PostgreSQL server binaries not found ({PG_ROOT}/*/bin/initdb): install the Debian "
            f"package `{PG_PACKAGE}` (apt-get install {PG_PACKAGE}; `make` does it as root)",
            pytrace=False,
        )
    return found[-1].parent


class PostgresServer:
    """A throwaway PostgreSQL cluster in a temporary folder, reachable only through its unix socket; FOLDER: one
    that another process started (attached to, not started); its databases' names begin with PREFIX."""

    def __init__(self, folder: Path | None = None, prefix: str = "gradebook"):
        self.bin = pg_bin()
        self.as_root = os.geteuid() == 0
        self.dir = folder or Path(tempfile.mkdtemp(prefix="course-pg-"))
        self.data, self.socket, self.log = self.dir / "data", self.dir / "socket", self.dir / "server.log"
        if folder is None:
            self.socket.mkdir()
            if self.as_root:
                shutil.chown(self.dir, "postgres")
                shutil.chown(self.socket, "postgres")
        self.prefix, self.names = prefix, itertools.count()

    def _run(self, tool: str, *args: str) -> None:
        """Run a server tool, as the postgres user when we are root; show its output when it fails."""
        command = [str(self.bin / tool), *args]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            log = self.log.read_text(errors="replace") if self.log.exists() else ""
            raise RuntimeError(f"{tool} failed ({proc.returncode}): {proc.stdout}{proc.stderr}{log}")

    def start(self) -> PostgresServer:
        """initdb, then start on the socket only (listen_addresses=''), durability off: it is a test."""
        self._run(
            "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"
        )
        options = (
            f"-c listen_addresses='' -k {self.socket} -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")
        self.admin("CREATE DATABASE " + TEMPLATE)
        import course
        from course.nbgrader_hooks.speedups import ask_alembic_once

        # as tests/conftest.py and the course's own nbgrader commands start: a process that has this module alone (a
        # probe run) makes the template without building the unused IRI checker or running `alembic heads`
        course.skip_unused_iri_checker()
        ask_alembic_once()
        from nbgrader.api import Gradebook

        with pytest.MonkeyPatch.context() as mp:  # nbgrader runs `alembic` from PATH
            mp.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
            Gradebook(self.url(TEMPLATE)).close()  # nbgrader's tables, once; each test's database copies them
        return self

    def stop(self) -> None:
        """Stop the server now, if it runs, and remove its folder."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, database: str, password: str | None = None) -> str:
        """How a user writes the URL: plain postgresql://, the socket folder as host."""
        user = f"postgres:{password}" if password else "postgres"
        return f"postgresql://{user}@/{database}?host={self.socket}"

    def admin(self, sql: str) -> None:
        """One statement outside a transaction (CREATE/DROP DATABASE need that)."""
        import psycopg

        with psycopg.connect(host=str(self.socket), user="postgres", dbname="postgres", autocommit=True) as con:
            con.execute(sql)

    def new_gradebook(self) -> str:
        """A fresh database holding nbgrader's empty gradebook tables; its URL."""
        name = f"{self.prefix}_{next(self.names)}"
        self.admin(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        return self.url(name)

    def copy_gradebook(self, source: str, target: str) -> None:
        """The database at URL TARGET made again as a copy of the one at URL SOURCE (which nothing may be connected
        to): a class stored once, given to each test."""
        source_name, target_name = (urlsplit(url).path.lstrip("/") for url in (source, target))
        self.admin(f"DROP DATABASE {target_name}")
        self.admin(f"CREATE DATABASE {target_name} TEMPLATE {source_name}")


@dataclass(frozen=True)
class ConfiguredGradebook:
    """Which database the course's gradebook is on for this test: its kind, and the URL a hub config sets."""

    kind: str  # "sqlite" (nbgrader's default: gradebook.db in the course root) or "postgresql"
    url: str | None  # None: nothing sets db_url

    def prepare(self, course_root: Path, assignment: str = "lesson05") -> None:
        """Record ASSIGNMENT in the configured gradebook, as an instructor does on a new database."""
        if self.url is not None:
            from course.workflows.grade import run_nbgrader

            run_nbgrader(course_root, "generate_assignment", assignment, "--force")


def _alive(pid: int) -> bool:
    """Whether process PID still runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def shared_server(registry: Path, worker: str) -> Iterator[PostgresServer]:
    """The run's one server, recorded in REGISTRY (a folder every worker sees): started by the first worker that
    asks, stopped by the last to leave. Each worker signs in under its process id, so a worker that died without
    signing out keeps nobody's server running; each names its databases after WORKER and its process (a restarted
    worker reuses the name WORKER)."""
    from filelock import FileLock

    registry.mkdir(exist_ok=True)
    record, users = registry / "server.json", registry / "users"
    prefix = f"gradebook_{worker}_{os.getpid()}"
    with FileLock(registry / "lock"):
        if record.exists():
            server = PostgresServer(Path(json.loads(record.read_text("utf-8"))["dir"]), prefix)
        else:
            server = PostgresServer(prefix=prefix)
            try:
                server.start()
            except BaseException:
                server.stop()
                raise
            record.write_text(json.dumps({"dir": str(server.dir)}), "utf-8")
        users.mkdir(exist_ok=True)
        (users / str(os.getpid())).touch()
    try:
        yield server
    finally:
        with FileLock(registry / "lock"):
            (users / str(os.getpid())).unlink(missing_ok=True)
            if not any(_alive(int(user.name)) for user in users.iterdir()):
                record.unlink()
                server.stop()


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory):
    """One PostgreSQL server for the whole run: under pytest-xdist shared by the workers (shared_server, in the
    folder above each worker's temporary folder); in a single process started here and stopped at the end (or when
    starting it fails)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is not None:
        with shared_server(tmp_path_factory.getbasetemp().parent / "postgres", worker) as server:
            yield server
        return
    server = PostgresServer()
    try:
        yield server.start()
    finally:
        server.stop()


def hub_config(folder: Path, lines: list[str]) -> Path:
    """A hub-level nbgrader_config.py in FOLDER (what JUPYTER_CONFIG_PATH points at)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text("c = get_config()\n" + "\n".join(lines) + "\n", "utf-8")
    return folder


@pytest.fixture(params=["sqlite", "postgresql"])
def gradebook_db(request, tmp_path_factory, monkeypatch) -> ConfiguredGradebook:
    """The course's gradebook on SQLite (nbgrader's default) or on PostgreSQL, set by a hub-level config."""
    hub = tmp_path_factory.mktemp("hub-config")
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(hub))  # no config of the machine's leaks into the test
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if request.param == "sqlite":
        return ConfiguredGradebook("sqlite", None)
    url = request.getfixturevalue("postgres_server").new_gradebook()
    hub_config(hub, [f"c.CourseDirectory.db_url = {url!r}"])
    return ConfiguredGradebook("postgresql", url)


def gradebook_rows(url: str) -> dict[str, list[tuple]]:
    """Every row of every table of the gradebook at URL, sorted: what 'unchanged' means for a gradebook."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    try:
        with engine.connect() as con:
            tables = sqlalchemy.inspect(con).get_table_names()
            return {
                t: sorted(tuple(map(str, row)) for row in con.execute(sqlalchemy.text(f'SELECT * FROM "{t}"')))
                for t in sorted(tables)
            }
    finally:
        engine.dispose()
