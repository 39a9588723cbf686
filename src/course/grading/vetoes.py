"""Graders' veto records (一票否决): one validated YAML file per lesson, one line per veto.

A grader who finds a veto item in an answer, or in the code (a code item, e.g. after the report's code
diagnosis hints at it), adds one line, by hand or with
`course report lessonNN --veto STUDENT QUESTION VETO_ID --note "…"`; the report fails that student. A new
file's header shows both ways with the lesson's own ids (its rubric's first veto item, question and code item).
"""

from __future__ import annotations

import difflib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import yaml

from course.errors import CourseError, Location
from course.fileio import write_atomic
from course.grading.rubric import Rubric, validate_document
from course.lesson.validate import YamlDocument, display_path, load_yaml, parse_yaml

NEW_FILE = """\
# 一票否决记录 (veto records) of {lesson}, read by `course report {lesson}`: any record fails the student
# whatever the points. Add one in one step:
#   course report {lesson} --veto STUDENT {question} {veto} --note "学生原话或问题所在"
# or by hand, one line at the end of this file, indented like the others:
#     - {{student: STUDENT, question: {question}, veto: {veto}, note: 学生原话或问题所在}}
# The veto ids, and the questions each one applies to, are in autograder/rubrics/{lesson}.yml; any veto may
# also be recorded on a code item (question: {code_item}, the code item's id) when the code shows it.
version: 1
lesson: {lesson}
vetoes:
"""


@dataclass(frozen=True)
class VetoRecord:
    """One veto a grader found in one student's answer to one question, or in one code item."""

    student: str
    question: str
    veto: str
    note: str
    line: int | None = None

    def key(self) -> tuple[str, str, str]:
        """What makes two records the same veto."""
        return self.student, self.question, self.veto


def veto_path(autograder_dir: Path, lesson: str) -> Path:
    """Where a lesson's veto records live inside the nbgrader course root."""
    return Path(autograder_dir) / "vetoes" / f"{lesson}.yml"


def load_vetoes(path: Path, rubric: Rubric, students: Collection[str]) -> tuple[VetoRecord, ...]:
    """The lesson's veto records, each checked against the rubric and the students; no file means none yet."""
    path = Path(path)
    if not path.exists():
        return ()
    return _records(load_yaml(path), rubric, students)


def add_veto(path: Path, rubric: Rubric, students: Collection[str], record: VetoRecord) -> VetoRecord:
    """Append one checked record as a single line (comments and layout of the file are kept)."""
    path = Path(path)
    text = path.read_text("utf-8") if path.exists() else new_file(rubric)
    existing = _records(parse_yaml(path, text), rubric, students)
    problem = record_problem(record, rubric, students)
    if problem:
        raise CourseError(f"veto not recorded: {problem[0]}: {problem[1]}", Location(display_path(path)))
    for old in existing:
        if old.key() == record.key():
            raise CourseError(
                f"veto not recorded: {record.veto} on {record.question} of {record.student} is already recorded",
                Location(display_path(path), old.line),
            )
    line = "  - " + _flow_line(record)
    new_text = text.rstrip("\n") + "\n" + line + "\n"
    try:
        after = _records(parse_yaml(path, new_text), rubric, students)
    except CourseError:
        after = ()
    if [r.key() for r in after] != [r.key() for r in existing] + [record.key()]:
        raise CourseError(
            "veto not recorded: expected `vetoes:` to be the file's last key with one "
            f"'  - {{…}}' line per record; add this line under vetoes: by hand:\n{line}",
            Location(display_path(path)),
        )
    write_atomic(path, new_text)
    return after[-1]


def new_file(rubric: Rubric) -> str:
    """A lesson's empty veto file, its header's examples taken from that lesson's rubric."""
    veto = rubric.vetoes[0] if rubric.vetoes else None
    return NEW_FILE.format(
        lesson=rubric.lesson,
        veto=veto.id if veto else "VETO_ID",
        question=veto.questions[0] if veto else "QUESTION",
        code_item=rubric.code_items[0].id if rubric.code_items else "CODE_ITEM",
    )


def _flow_line(record: VetoRecord) -> str:
    """The record as one YAML flow mapping, quoted wherever YAML needs it."""
    fields = {"student": record.student, "question": record.question, "veto": record.veto, "note": record.note}
    return yaml.safe_dump(
        fields, default_flow_style=True, allow_unicode=True, sort_keys=False, width=float("inf")
    ).strip()


def _records(doc: YamlDocument, rubric: Rubric, students: Collection[str]) -> tuple[VetoRecord, ...]:
    """Validate a veto document and turn it into records; the first problem names its line."""
    if not isinstance(doc.data, dict):
        raise doc.error((), "expected a mapping with keys version, lesson, vetoes")
    validate_document(doc, "vetoes.v1")
    if doc.data["lesson"] != rubric.lesson:
        raise doc.error(("lesson",), f"expected {rubric.lesson!r} (the rubric's lesson), got {doc.data['lesson']!r}")
    records: list[VetoRecord] = []
    first: dict[tuple[str, str, str], int] = {}
    for i, entry in enumerate(doc.data["vetoes"] or ()):
        record = VetoRecord(**entry, line=doc.line(("vetoes", i)))
        problem = record_problem(record, rubric, students)
        if problem:
            raise doc.error(("vetoes", i, problem[0]), problem[1])
        if record.key() in first:
            raise doc.error(
                ("vetoes", i),
                f"expected each veto once per student and question; already recorded at line {first[record.key()]}",
            )
        first[record.key()] = record.line
        records.append(record)
    return tuple(records)


def record_problem(record: VetoRecord, rubric: Rubric, students: Collection[str]) -> tuple[str, str] | None:
    """(field, what was expected) for a record naming an unknown veto, question or student, or without a note."""
    veto = rubric.veto(record.veto)
    if veto is None:
        return (
            "veto",
            f"expected a veto id of {display_path(rubric.path)} "
            f"({', '.join(v.id for v in rubric.vetoes)}), got {record.veto!r}",
        )
    code_items = [c.id for c in rubric.code_items]
    if rubric.question(record.question) is None and record.question not in code_items:
        return (
            "question",
            f"expected one of {', '.join([q.id for q in rubric.questions] + code_items)} "
            f"(a question or a code item), got {record.question!r}",
        )
    if record.question not in code_items and record.question not in veto.questions:
        return (
            "question",
            f"expected a question veto {veto.id!r} applies to ({', '.join(veto.questions)}), got {record.question!r}",
        )
    if not record.note.strip():
        return "note", "expected text saying what in the answer triggers the veto"
    if record.student not in students:
        nearest = difflib.get_close_matches(record.student, sorted(students), n=1, cutoff=0.6)
        return (
            "student",
            f"expected a student with a {rubric.lesson} submission in the gradebook, "
            f"got {record.student!r}" + (f" (did you mean {nearest[0]}?)" if nearest else ""),
        )
    return None
