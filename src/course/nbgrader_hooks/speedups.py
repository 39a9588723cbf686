"""Per-process savings for stock nbgrader's autograde: set-up work it repeats for every student, done once.

What nbgrader reads, writes and decides is unchanged; only repeated preparation is kept:
- its Gradebook creates an SQLAlchemy engine each time it is opened — about ten times per autograded student
  (the converter, SaveAutoGrades, OverwriteCells, OverwriteKernelspec, the late penalty, the course's re-check,
  …) — so every query is compiled again each time. share_engines() gives each Gradebook the process's engine
  for its URL and options instead; a Gradebook still closes by disposing the engine's pool, so no connection
  outlives it, and only the compiled statements are kept;
- its cell-metadata check (CheckCellMetadata, run twice per student) calls `jsonschema.validate` for every
  graded cell, which checks nbgrader's own schema against the metaschema each time before using it.
  check_schemas_once() has that check made once per schema, then validates exactly as `jsonschema.validate`
  does (the same validator class, the same best-matching error raised);
- Python's cyclic garbage collector walks every object the process holds on each full pass — after nbgrader,
  nbconvert, SQLAlchemy and jsonschema are imported, some 240,000 of them, about 85 ms a pass, several passes
  every ten students — although the imported modules, classes and functions never become garbage.
  freeze_imports() moves what exists at the first installation in a process into the collector's permanent
  generation (gc.freeze), so its passes only walk what each student's autograde makes, which is still collected;
- a Gradebook opened on a new database stamps it with the head of nbgrader's migrations, which it learns by running
  `alembic heads` in a subprocess (a Python that imports alembic, 1-2 s of CPU) every time. ask_alembic_once() has
  alembic's script directory read in this process, once: the same head, from the same migrations.
Every autograde of the course installs all four (install_for): stock `nbgrader autograde` and formgrader's autograde
through the course's exporter, `course grade` in each worker; `c.AutogradeSavings.enabled = False` leaves nbgrader
exactly as shipped. The nbgrader commands the course tool runs itself (nbgrader_main: the site's throwaway release,
the demo cycle) always read the head in process and skip jsonschema's unused IRI checker: neither changes a result.
"""

from __future__ import annotations

import functools
import gc
import json

from traitlets import Bool
from traitlets.config import Configurable

ENGINES_KEPT = 8  # gradebook URLs per process whose engines stay (a worker's private copy and the real one)


class AutogradeSavings(Configurable):
    """Whether autograde reuses, per process, the set-up work nbgrader repeats for every student."""

    enabled = Bool(
        True,
        help="reuse one SQLAlchemy engine per gradebook URL, check nbgrader's cell-metadata "
        "schema once instead of for every student, read the head of its migrations in "
        "process instead of running `alembic heads`, and keep the imported code out of the "
        "garbage collector's passes (same results; False: nbgrader as shipped)",
    ).tag(config=True)


def install_for(config) -> bool:
    """The savings in this process unless CONFIG turns them off (once; later calls do nothing); whether on."""
    if not AutogradeSavings(config=config).enabled:
        return False
    share_engines()
    check_schemas_once()
    ask_alembic_once()
    freeze_imports()
    return True


@functools.cache
def freeze_imports() -> None:
    """Leave the objects this process holds now (its imported code, mostly) out of the collector's later passes."""
    gc.collect()  # what is garbage already is freed, not kept for good
    gc.freeze()


def share_engines() -> None:
    """Make nbgrader's Gradebook reuse one engine per URL in this process."""
    import nbgrader.api

    if not getattr(nbgrader.api.create_engine, "shared_by_course", False):
        nbgrader.api.create_engine = shared_engine_factory(nbgrader.api.create_engine)


def ask_alembic_once() -> None:
    """Make nbgrader's Gradebook take the head of its migrations from alembic_head() instead of a subprocess."""
    import nbgrader.api

    if nbgrader.api.get_alembic_version is not alembic_head:
        nbgrader.api.get_alembic_version = alembic_head


def nbgrader_main() -> None:
    """Stock nbgrader's command line, as `python -m nbgrader` runs it, without the two start-up costs that repeat
    for every command: jsonschema's IRI checker (unused) and an `alembic heads` subprocess for a new gradebook."""
    from course import skip_unused_iri_checker

    skip_unused_iri_checker()
    ask_alembic_once()
    from nbgrader.apps.nbgraderapp import main

    main()


@functools.cache
def alembic_head() -> str:
    """The revision `alembic heads` prints first for nbgrader's migrations, read once per process."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    config = Config()
    config.set_main_option("script_location", ALEMBIC_DIR)
    return ScriptDirectory.from_config(config).get_heads()[0]


def shared_engine_factory(create_engine):
    """CREATE_ENGINE, remembering the engines it made for the last ENGINES_KEPT URL and option sets."""

    @functools.lru_cache(maxsize=ENGINES_KEPT)
    def shared(url, **options):
        return create_engine(url, **options)

    shared.shared_by_course = True
    return shared


class SchemasCheckedOnce:
    """The jsonschema module as nbgrader's metadata validator uses it, with each schema checked only once."""

    def __init__(self, jsonschema):
        self.module = jsonschema

    def __getattr__(self, name: str):
        return getattr(self.module, name)

    def validate(self, instance, schema) -> None:
        """`jsonschema.validate(INSTANCE, SCHEMA)`: raise the best-matching error, if any."""
        validator = self.validator(json.dumps(schema, sort_keys=True))
        error = self.module.exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            raise error

    @functools.lru_cache(maxsize=8)
    def validator(self, schema_text: str):
        """The validator jsonschema.validate would build for this schema, built (and the schema checked) once."""
        schema = json.loads(schema_text)
        cls = self.module.validators.validator_for(schema)
        cls.check_schema(schema)
        return cls(schema)


def check_schemas_once() -> None:
    """Make nbgrader's metadata validator check its schema once per process instead of once per cell."""
    from nbgrader.nbgraderformat import common

    if not isinstance(common.jsonschema, SchemasCheckedOnce):
        common.jsonschema = SchemasCheckedOnce(common.jsonschema)
