"""The course's one door to nbgrader's gradebook: wherever nbgrader's configured `db_url` puts it.

The URL is resolved as nbgrader's apps resolve it for a command run in the course root: the config files in
the system, environment, `JUPYTER_CONFIG_PATH` and user Jupyter folders, then the course root's
nbgrader_config.py; when nothing sets `c.CourseDirectory.db_url`, nbgrader's default (a SQLite gradebook.db in
the course root) applies. The gradebook itself is nbgrader's `Gradebook` on that URL (SQLite, PostgreSQL or
any database SQLAlchemy reaches), so the course and stock nbgrader always read and write the same one.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from course.errors import CourseError, Location, NoGradebook

CONFIG_FILE = "nbgrader_config"
CONFIG_NAMES = ("jupyter_config", CONFIG_FILE)  # the order nbgrader's apps load them in each folder list
NBGRADER_TABLES = {"assignment", "grade", "alembic_version"}


def config_dirs() -> list[str]:
    """The folders nbgrader's apps read config from besides the course root, highest priority first."""
    from jupyter_core.paths import jupyter_config_dir, jupyter_config_path

    paths = jupyter_config_path()
    if jupyter_config_dir() not in paths:
        paths.insert(0, jupyter_config_dir())
    return paths


def inherited_config_files(*, strict: bool = False, skip: Path | None = None) -> list[tuple[Path, object]]:
    """Each config file nbgrader loads before the course root's (system, hub, user), lowest priority first.

    A file that fails to load is left out, as nbgrader leaves it out (with a warning), unless STRICT; SKIP is
    the course root's own file, which nbgrader loads last and which must not count as inherited.
    """
    from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader

    loaded = []
    for name in CONFIG_NAMES:
        for folder in reversed(config_dirs()):
            for loader, ext in ((PyFileConfigLoader, ".py"), (JSONFileConfigLoader, ".json")):
                path = Path(folder, name + ext)
                if not path.is_file() or (skip is not None and path.resolve() == Path(skip).resolve()):
                    continue
                try:
                    loaded.append((path, loader(name + ext, path=folder).load_config()))
                except Exception as exc:  # nbgrader itself skips a broken file with a warning
                    if strict:
                        raise CourseError(
                            f"nbgrader cannot load this config file: {exc}", Location(str(path))
                        ) from None
    return loaded


def nbgrader_config(course_root: Path):
    """nbgrader's config for a command run in COURSE_ROOT: the inherited files, then the root's nbgrader_config.py."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    root = Path(course_root).resolve()
    own = root / f"{CONFIG_FILE}.py"
    config = Config()
    config.CourseDirectory.root = str(root)  # nbgrader's default root is the folder it runs in
    for _, loaded in inherited_config_files(strict=True, skip=own):
        config.merge(loaded)
    if own.is_file():
        config.merge(PyFileConfigLoader(own.name, path=str(root)).load_config())
    return config


@dataclass(frozen=True)
class GradebookAt:
    """The gradebook nbgrader's config names for a course root."""

    url: str
    course_root: Path

    @property
    def shown(self) -> str:
        """The URL as errors show it: without its password."""
        from sqlalchemy.engine import make_url

        try:
            return make_url(self.url).render_as_string(hide_password=True)
        except Exception:  # not even a URL: shown without anything before an '@'
            return self.url.rpartition("@")[2]

    @property
    def source(self) -> str:
        """Which config file set db_url (the last one nbgrader loads that sets it), or nbgrader's default."""
        own = self.course_root / f"{CONFIG_FILE}.py"
        setters = [str(p) for p, loaded in inherited_config_files(skip=own) if "CourseDirectory.db_url" in loaded]
        if own.is_file():
            from traitlets.config.loader import PyFileConfigLoader

            if "CourseDirectory.db_url" in PyFileConfigLoader(own.name, path=str(own.parent)).load_config():
                setters.append(str(own))
        return setters[-1] if setters else "nbgrader's default: gradebook.db in the course root"

    def location(self, cell: str | None = None) -> Location:
        """Where errors about this gradebook point: its URL, without the password."""
        return Location(f"gradebook {self.shown}", cell=cell)

    def error(self, message: str, kind: type[CourseError] = CourseError) -> CourseError:
        """An error (of KIND) about reaching this gradebook, naming its URL and where db_url was set."""
        return kind(f"{message} (c.CourseDirectory.db_url from {self.source})", self.location())


def configured_gradebook(course_root: Path, config=None) -> GradebookAt:
    """The gradebook nbgrader's apps use in COURSE_ROOT (CONFIG: nbgrader_config(COURSE_ROOT) if already loaded)."""
    from nbgrader.coursedir import CourseDirectory

    root = Path(course_root).resolve()
    config = config if config is not None else nbgrader_config(root)
    return GradebookAt(CourseDirectory(config=config).db_url, root)


def check_gradebook(where: GradebookAt, missing_fix: str) -> None:
    """Stop unless WHERE is a readable nbgrader gradebook (NoGradebook: none there yet); never creates one (opening
    nbgrader's would)."""
    import sqlalchemy
    from sqlalchemy.engine import make_url
    from sqlalchemy.pool import NullPool

    try:
        url = make_url(where.url)
    except Exception as exc:
        raise where.error(
            f"not a database URL ({exc}); expected e.g. sqlite:////path/gradebook.db or "
            "postgresql://user:password@host/dbname"
        ) from None
    if (
        url.get_backend_name() == "sqlite"
        and url.database not in (None, "", ":memory:")
        and not Path(url.database).is_file()
    ):
        raise where.error(f"no gradebook: {missing_fix}", NoGradebook)
    try:
        engine = sqlalchemy.create_engine(url, poolclass=NullPool)
        try:
            tables = set(sqlalchemy.inspect(engine).get_table_names())
        finally:
            engine.dispose()
    except Exception as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        check = (
            "that the file is nbgrader's gradebook"
            if url.get_backend_name() == "sqlite"
            else "that the database server is running and that db_url names it"
        )
        raise where.error(f"cannot read the gradebook: {reason}; check {check}") from None
    if not tables:
        raise where.error(f"no gradebook: the database is empty; {missing_fix}", NoGradebook)
    if not NBGRADER_TABLES <= tables:
        raise where.error("not an nbgrader gradebook: expected its assignment, grade and alembic_version tables")


@contextlib.contextmanager
def gradebook(db_url: str) -> Iterator:
    """nbgrader's Gradebook on DB_URL, without the SQLAlchemy warnings its own add_submission raises."""
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)
        with Gradebook(db_url) as gb:
            yield gb


@contextlib.contextmanager
def course_gradebook(course_root: Path, missing_fix: str, config=None) -> Iterator:
    """The course's gradebook wherever its config puts it, checked first so a missing one is named, not created."""
    where = configured_gradebook(course_root, config)
    check_gradebook(where, missing_fix)
    with gradebook(where.url) as gb:
        yield gb


def gradebook_engine(db_url: str):
    """A SQLAlchemy engine on DB_URL, to read and write nbgrader's tables as rows (course.grading.gradebook_changes)."""
    import sqlalchemy

    return sqlalchemy.create_engine(db_url, future=True)
