"""The one-GPU measurement's file (lessons/lessonNN/gpu_memory.json): its schema, writing it, reading it back.

Free of torch, so the lesson shows the committed measurement on machines without the lab extra, and free of
the course's YAML tooling, so the measurement itself runs on a GPU machine that has torch alone (jsonschema,
where installed there, validates the file before it is written; `--check` validates it on return).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from course.errors import CourseError, Location
from course.fileio import write_atomic

SCHEMA_ID = "course/lab/decoder-memory/v1"


def load_schema() -> dict:
    """The JSON schema of the measurement file."""
    return json.loads(resources.files("course.lab").joinpath("schema/decoder-memory.v1.json").read_text("utf-8"))


def validate(record: dict, where: Path) -> None:
    """Check a record against the schema, naming the file and the place of the first problem."""
    import jsonschema

    try:
        jsonschema.validate(record, load_schema())
    except jsonschema.ValidationError as exc:
        place = "/".join(str(p) for p in exc.absolute_path) or "top level"
        raise CourseError(f"at {place}: {exc.message}; expected a {SCHEMA_ID} file", Location(where)) from exc


def write_record(record: dict, out: Path) -> bool:
    """Write the file atomically, validated first where jsonschema is installed; return whether it was validated."""
    try:
        validate(record, out)
        checked = True
    except ModuleNotFoundError:
        checked = False
    write_atomic(out, json.dumps(record, ensure_ascii=False, indent=1) + "\n")
    return checked


def read_record(path: Path) -> dict:
    """Load and validate a measurement file."""
    path = Path(path)
    if not path.is_file():
        raise CourseError("no GPU measurement here; run `python -m course.lab.decoder_memory` on a GPU", Location(path))
    try:
        record = json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise CourseError(f"not valid JSON ({exc.msg})", Location(path, exc.lineno)) from exc
    validate(record, path)
    return record
