"""One student's autograde done on a private copy of the gradebook, then applied to the real one in one transaction.

`course grade` runs nbgrader's whole autograde for each student in a worker process, against a private SQLite
gradebook that holds what autograde reads: the assignment's rows (courses, the assignment, its notebooks and
cells) and the student's own (the student, their submission of it, its notebooks, grades and comments), copied
from the configured gradebook with their ids. Whatever nbgrader and the course's steps write there comes back as
row changes (`Changes`), which the grading process applies to the configured gradebook in one short transaction,
column by column: a manual score a grader saved through formgrader in the meantime is kept, as it is when stock
`nbgrader autograde` runs while a grader works. Every table is nbgrader's own (nbgrader.api), so the rows are
copied as they are, whatever version of nbgrader made them.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy

Rows = dict[str, dict[str, dict]]  # table → id → column → value


@dataclass
class Changes:
    """Rows autograde inserted or changed (only the changed columns) and ids it deleted, per table."""

    upserts: dict[str, dict[str, dict]] = field(default_factory=dict)
    deletes: dict[str, list[str]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.upserts or self.deletes)


def tables() -> dict[str, sqlalchemy.Table]:
    """nbgrader's gradebook tables by name, in the order their foreign keys allow inserting them."""
    from nbgrader.api import Base

    return {t.name: t for t in Base.metadata.sorted_tables}


def _select(conn, table: str, column: str, values) -> list[dict]:
    """Rows of TABLE whose COLUMN is one of VALUES."""
    t = tables()[table]
    values = list(values)
    if not values:
        return []
    return [dict(r._mapping) for r in conn.execute(sqlalchemy.select(t).where(t.c[column].in_(values)))]


def assignment_rows(conn, assignment: str) -> Rows:
    """Every row nbgrader keeps about ASSIGNMENT itself (and the courses), read from the gradebook on CONN."""
    t = tables()
    rows: dict[str, list[dict]] = {"course": [dict(r._mapping) for r in conn.execute(sqlalchemy.select(t["course"]))]}
    rows["assignment"] = _select(conn, "assignment", "name", [assignment])
    rows["notebook"] = _select(conn, "notebook", "assignment_id", [r["id"] for r in rows["assignment"]])
    notebooks = [r["id"] for r in rows["notebook"]]
    rows["base_cell"] = _select(conn, "base_cell", "notebook_id", notebooks)
    rows["source_cell"] = _select(conn, "source_cell", "notebook_id", notebooks)
    cells = [r["id"] for r in rows["base_cell"]]
    for table in ("grade_cells", "solution_cells", "task_cells"):
        rows[table] = _select(conn, table, "id", cells)
    return {table: {r["id"]: r for r in found} for table, found in rows.items()}


def student_rows(conn, assignment_ids, student: str) -> Rows:
    """The student's row and everything of their submission of the assignment (ASSIGNMENT_IDS), read on CONN."""
    rows = {"student": _select(conn, "student", "id", [student])}
    rows["submitted_assignment"] = [
        r
        for r in _select(conn, "submitted_assignment", "student_id", [student])
        if r["assignment_id"] in set(assignment_ids)
    ]
    rows["submitted_notebook"] = _select(
        conn, "submitted_notebook", "assignment_id", [r["id"] for r in rows["submitted_assignment"]]
    )
    notebooks = [r["id"] for r in rows["submitted_notebook"]]
    rows["grade"] = _select(conn, "grade", "notebook_id", notebooks)
    rows["comment"] = _select(conn, "comment", "notebook_id", notebooks)
    return {table: {r["id"]: r for r in found} for table, found in rows.items()}


def all_rows(conn) -> Rows:
    """Every row of every nbgrader table on CONN (a private copy: one assignment, one student)."""
    return {name: {r.id: dict(r._mapping) for r in conn.execute(sqlalchemy.select(t))} for name, t in tables().items()}


def insert_rows(conn, rows: Rows) -> None:
    """Insert ROWS on CONN, parents before children."""
    for name, t in tables().items():
        if rows.get(name):
            conn.execute(sqlalchemy.insert(t), list(rows[name].values()))


def schema_version(conn) -> str:
    """The alembic stamp of nbgrader's schema in the gradebook on CONN."""
    return conn.execute(sqlalchemy.text("SELECT version_num FROM alembic_version")).scalar_one()


def make_template(path: Path, rows: Rows, version: str) -> Path:
    """A gradebook at PATH with nbgrader's schema, stamped VERSION (the configured gradebook's), holding ROWS."""
    from nbgrader.api import Base

    Path(path).unlink(missing_ok=True)
    engine = sqlalchemy.create_engine(sqlite_url(path), poolclass=sqlalchemy.pool.NullPool)
    try:
        Base.metadata.create_all(engine)
        with engine.begin() as conn:
            conn.execute(sqlalchemy.text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
            conn.execute(sqlalchemy.text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": version})
            insert_rows(conn, rows)
    finally:
        engine.dispose()
    return path


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of a SQLite file."""
    return f"sqlite:///{Path(path).resolve()}"


def copy_engine(path: Path):
    """An engine on a private copy at PATH that opens the file afresh on each connection (the copy is replaced
    for every student) and keeps its compiled statements."""
    return sqlalchemy.create_engine(sqlite_url(path), poolclass=sqlalchemy.pool.NullPool)


def private_copy(template: Path, engine, rows: Rows) -> Rows:
    """Make the copy ENGINE opens from TEMPLATE, add ROWS (one student's); return everything it then holds."""
    shutil.copyfile(template, engine.url.database)
    with engine.begin() as conn:
        insert_rows(conn, rows)
        return all_rows(conn)


def read_copy(engine) -> Rows:
    """Everything the private copy ENGINE opens holds now."""
    with engine.connect() as conn:
        return all_rows(conn)


def changes(before: Rows, after: Rows) -> Changes:
    """What changed from BEFORE to AFTER: new rows whole, changed rows by their changed columns, removed ids."""
    found = Changes()
    for table, rows in after.items():
        old = before.get(table, {})
        for key, row in rows.items():
            changed = row if key not in old else {c: v for c, v in row.items() if old[key].get(c) != v}
            if changed:
                found.upserts.setdefault(table, {})[key] = {**changed, "id": key}
        gone = sorted(set(old) - set(rows))
        if gone:
            found.deletes[table] = gone
    return found


def apply_changes(conn, change: Changes) -> None:
    """Apply CHANGE on CONN (the configured gradebook, inside the caller's transaction).

    A row that exists gets only the changed columns; a new one is inserted (or updated, should it have appeared
    meanwhile); removals go children first.
    """
    t = tables()
    for name, table in t.items():
        rows = change.upserts.get(name, {})
        if not rows:
            continue
        present = {r[0] for r in conn.execute(sqlalchemy.select(table.c.id).where(table.c.id.in_(list(rows))))}
        new = [row for key, row in rows.items() if key not in present]
        if new:
            conn.execute(sqlalchemy.insert(table), new)
        for key in present:
            values = {c: v for c, v in rows[key].items() if c != "id"}
            if values:
                conn.execute(sqlalchemy.update(table).where(table.c.id == key).values(**values))
    for name, table in reversed(t.items()):
        if change.deletes.get(name):
            conn.execute(sqlalchemy.delete(table).where(table.c.id.in_(change.deletes[name])))
