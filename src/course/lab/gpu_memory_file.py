"""The one-GPU measurement's file (lessons/lessonNN/gpu_memory.json): its schema, writing it, reading it back.

Free of torch, so the lesson shows the committed measurement on machines without the lab extra, and light
enough for a GPU machine that has torch and PyYAML but not jsonschema: there the file is written unvalidated
and `--check` validates it on return.
"""

from __future__ import annotations

import json
from pathlib import Path

from course.fileio import write_atomic
from course.lesson.validate import check_json_data, read_json_file

SCHEMA_ID = "course/lab/decoder-memory/v1"  # what the record's "schema" field says
SCHEMA = "decoder-memory.v1"  # its file: src/course/lab/schema/decoder-memory.v1.json


def validate(record: dict, where: Path) -> None:
    """Check a record against the schema, naming the file and the place of the first problem."""
    check_json_data(record, where, "course.lab", SCHEMA)


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
    return read_json_file(
        path,
        "course.lab",
        SCHEMA,
        missing="no GPU measurement here; run `python -m course.lab.decoder_memory` on a GPU",
    )
