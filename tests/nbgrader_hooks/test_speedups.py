"""The per-process savings for nbgrader: one engine per gradebook URL, each metadata schema checked once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import nbgrader.api
import pytest
import sqlalchemy
from nbgrader.api import Gradebook

from course.grading.gradebook_changes import sqlite_url
from course.nbgrader_hooks.speedups import (
    ENGINES_KEPT,
    SchemasCheckedOnce,
    alembic_head,
    ask_alembic_once,
    check_schemas_once,
    share_engines,
    shared_engine_factory,
)


def test_gradebooks_on_one_url_share_an_engine_and_see_each_others_writes(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")  # alembic
    share_engines()
    share_engines()  # installing twice wraps once
    assert not getattr(nbgrader.api.create_engine.__wrapped__, "shared_by_course", False)
    url = sqlite_url(tmp_path / "gradebook.db")
    with Gradebook(url) as first:
        first.add_student("s1")
        engine = first.engine
    with Gradebook(url) as second:  # after close: the same engine, its pool renewed
        assert second.engine is engine and second.find_student("s1").id == "s1"
    with Gradebook(sqlite_url(tmp_path / "other.db")) as other:
        assert other.engine is not engine and other.students == []


def test_only_the_last_few_urls_keep_their_engines():
    made = []
    shared = shared_engine_factory(lambda url, **options: made.append(url) or object())
    engines = [shared(f"sqlite:///{n}.db", future=True) for n in range(ENGINES_KEPT + 1)]
    assert shared("sqlite:///8.db", future=True) is engines[-1] and len(made) == ENGINES_KEPT + 1
    shared("sqlite:///0.db", future=True)  # the oldest was let go: made again
    assert len(made) == ENGINES_KEPT + 2


GOOD = {"grade": True, "solution": False, "locked": True, "grade_id": "test-1", "points": 1, "schema_version": 3}


@pytest.mark.parametrize(
    "metadata",
    [
        GOOD,
        {**GOOD, "points": "one"},
        {**GOOD, "grade": "yes", "locked": 3},
        {k: v for k, v in GOOD.items() if k != "locked"},
    ],
)
def test_nbgraders_metadata_check_decides_and_explains_as_jsonschema_validate_does(metadata):
    from nbgrader.nbgraderformat import MetadataValidator, common

    check_schemas_once()
    check_schemas_once()
    assert isinstance(common.jsonschema, SchemasCheckedOnce) and common.jsonschema.module is jsonschema
    schema = MetadataValidator().schema
    outcomes = []
    for validate in (jsonschema.validate, common.jsonschema.validate):
        try:
            validate(metadata, schema)
            outcomes.append(None)
        except jsonschema.ValidationError as exc:
            outcomes.append((exc.message, list(exc.path)))
    assert outcomes[0] == outcomes[1]
    assert (outcomes[0] is None) == (metadata is GOOD)


def alembic_heads_printed() -> str:
    """The first revision the `alembic heads` command prints for nbgrader's migrations (what shipped nbgrader asks)."""
    from nbgrader.dbutil import _temp_alembic_ini

    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:
        printed = subprocess.run(["alembic", "-c", ini, "heads"], capture_output=True, text=True, check=True).stdout
    return printed.split()[0]


def test_the_head_read_in_process_is_the_head_alembic_heads_prints(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")  # alembic
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", nbgrader.api.get_alembic_version)
    printed = alembic_heads_printed()
    ask_alembic_once()
    assert nbgrader.api.get_alembic_version is alembic_head and alembic_head() == printed
    url = sqlite_url(tmp_path / "gradebook.db")
    with Gradebook(url):  # a new gradebook is stamped with that head
        pass
    with Gradebook(url) as again:
        assert again.db.execute(sqlalchemy.text("SELECT version_num FROM alembic_version")).scalar_one() == printed


def test_the_course_setting_leaves_nbgrader_as_shipped(tmp_path):
    script = (
        "import nbgrader.api\nfrom nbgrader.nbgraderformat import common\nfrom traitlets.config import Config\n"
        "from course.nbgrader_hooks.speedups import install_for\n"
        "c = Config(); c.AutogradeSavings.enabled = {on}\n"
        "print(install_for(c), hasattr(nbgrader.api.create_engine, 'shared_by_course'), "
        "nbgrader.api.get_alembic_version.__module__, "
        "type(common.jsonschema).__name__, __import__('gc').get_freeze_count() > 0)\n"
    )
    runs = {
        on: subprocess.run(
            [sys.executable, "-c", script.format(on=on)], capture_output=True, text=True, check=True
        ).stdout.split()
        for on in (True, False)
    }
    assert runs[True] == ["True", "True", "course.nbgrader_hooks.speedups", "SchemasCheckedOnce", "True"]
    assert runs[False] == ["False", "False", "nbgrader.api", "module", "False"]


def test_the_imported_code_leaves_the_collectors_passes_and_later_garbage_is_still_collected():
    script = (
        "import gc, weakref\nfrom course.nbgrader_hooks.speedups import freeze_imports\n"
        "freeze_imports()\nfrozen = gc.get_freeze_count()\nfreeze_imports()\n"
        "class Node: pass\n"
        "a, b = Node(), Node()\na.other, b.other = b, a\ngone = weakref.ref(a)\ndel a, b\ngc.collect()\n"
        "print(frozen > 10000, gc.get_freeze_count() == frozen, gone() is None)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True", "True"]  # frozen once, a cycle made afterwards is freed
