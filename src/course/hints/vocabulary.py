"""A lesson's vocabulary and facts for the veto-hint reader, from lessons/lessonNN/veto_hints.yml.

The file is validated (schema veto-hints.v1, cross-references, regular expressions) and every error
names the file, the line and the key. A lesson without the file has no vocabulary, so its answers get
no hints: the reader never borrows another lesson's facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from course.hints.reader import (
    EN_END,
    EN_START,
    Lexicon,
    compile_lexicon,
    cue_value,
    repeat_volume_patterns,
    volume_patterns,
)
from course.lesson.validate import YamlDocument, load_yaml, validate_document

FILE_NAME = "veto_hints.yml"
CHINESE_DIGITS = str.maketrans("零〇一二两三四五六七八九", "001223456789")  # 第二阶段 is stage 2
# Word lists scanned as cues of the same name (the unit and divisor build volume patterns instead).
SCANNED_WORDS = (
    "own_agent",
    "other_agent",
    "static",
    "total",
    "memory",
    "whole",
    "fraction",
    "partition",
    "transient",
    "storage",
    "usage",
    "capacity",
    "scale",
    "quantity",
)


@dataclass(frozen=True)
class StepOp:
    """One operation of a subject's step and the phases it may be said to run in."""

    op: str
    phases: frozenset[str]
    repeated: bool = False  # once per repetition of its condition (per micro-batch), not once per step


@dataclass(frozen=True)
class Condition:
    """A setting under which some subjects' step differs (gradient accumulation, a framework flag)."""

    name: str
    repeat_name: str  # how reasons write the number of repetitions ('m'); '' when nothing repeats
    steps: dict[str, tuple[StepOp, ...]]


@dataclass(frozen=True)
class Subject:
    """Something answers talk about (a ZeRO stage), with the lesson's facts about it."""

    name: str
    partitions: frozenset[str]
    step: tuple[StepOp, ...]


@dataclass(frozen=True)
class Vocabulary:
    """Everything lesson-specific the reader needs: facts, names and the compiled lexicon."""

    path: Path
    vetoes: dict[str, str]  # claim kind (partition, forbidden-partition, quantity, limit) → rubric veto id
    subjects: dict[str, Subject]
    baseline: str | None
    questions: dict[str, frozenset[str]]
    object_names: dict[str, str]
    never_partitioned: frozenset[str]
    collective: frozenset[frozenset[str]]  # groups named by a collective noun: claims about some of the members
    op_volume: dict[str, float]
    op_parts: dict[str, tuple[str, ...]]
    divisor: str | None  # regex of the per-rank share symbol (N_d)
    unit_name: str  # how hint reasons write the unit ('Ψ')
    quantity_name: str  # how hint reasons name the per-step quantity ('每步通信量')
    reasons: dict[str, str]  # claim kind → why such a claim is wrong, for the grader
    conditions: dict[str, Condition]
    lexicon: Lexicon

    @property
    def partitionable(self) -> frozenset[str]:
        """Objects some subject partitions: the ones a partition claim can get wrong."""
        return frozenset().union(*(s.partitions for s in self.subjects.values()))

    def step_volume(self, subject: str) -> float | None:
        """Per-step quantity of a subject: the sum of its step's operations (none when one repeats: it grows with m)."""
        step = self.subjects[subject].step
        if not step or any(s.repeated for s in step):
            return None
        return sum(self.op_volume[s.op] for s in step)

    def repeated_volume(self, subject: str) -> float:
        """Quantity a subject's step moves once per repetition ('3mΨ' says 3)."""
        return sum(self.op_volume[s.op] for s in self.subjects[subject].step if s.repeated)

    def under(self, condition: str | None) -> Vocabulary:
        """The facts as a clause under a condition reads them: the steps it changes replaced."""
        if condition is None:
            return self
        steps = self.conditions[condition].steps
        return replace(self, subjects={k: replace(s, step=steps.get(k, s.step)) for k, s in self.subjects.items()})

    def phase_volumes(self, subject: str, phase: str) -> set[float]:
        """Quantities a subject moves in one phase: each operation in it, or all of them together."""
        vols = [self.op_volume[s.op] for s in self.subjects[subject].step if phase in s.phases]
        return set(vols) | ({sum(vols)} if vols else set())


def vocabulary_path(lessons_dir: Path, lesson: str) -> Path:
    """Where a lesson keeps its vocabulary: lessons/lessonNN/veto_hints.yml."""
    return Path(lessons_dir) / lesson / FILE_NAME


def lesson_vocabulary(lessons_dir: Path, lesson: str) -> Vocabulary | None:
    """The lesson's vocabulary, or None when the lesson declares none (its answers then get no hints)."""
    path = vocabulary_path(lessons_dir, lesson)
    return load_vocabulary(path) if path.is_file() else None


def load_vocabulary(path: Path) -> Vocabulary:
    """Read, validate and compile one lesson's veto_hints.yml."""
    doc = load_yaml(path)
    if not isinstance(doc.data, dict):
        raise doc.error((), "expected a mapping with keys version, vetoes, subjects, subject_words")
    validate_document(doc, "course.hints", "veto-hints.v1")
    _check_references(doc)
    d = doc.data
    objects = d.get("objects") or {}
    operations = d.get("operations") or {}
    words = d.get("words") or {}
    lesson: dict[str, list[tuple[str, object]]] = {
        "subject": [_subject_entry(doc, i, w) for i, w in enumerate(d["subject_words"])],
        "object": [
            (_pattern(doc, ("objects", k), o), _object_value(o, k))
            for k, o in objects.items()
            if o.get("zh") or o.get("en")
        ],
        "op": [(_pattern(doc, ("operations", k), o), k) for k, o in operations.items() if o.get("zh") or o.get("en")],
        "phase": [(_pattern(doc, ("phases", k), p), k) for k, p in (d.get("phases") or {}).items()],
    }
    conditions = d.get("conditions") or {}
    lesson["condition"] = [(_pattern(doc, ("conditions", k), c), k) for k, c in conditions.items()]
    for kind in SCANNED_WORDS:
        if kind in words:
            lesson[kind] = [(_pattern(doc, ("words", kind), words[kind]), True)]
    if "unit" in words:
        unit = _pattern(doc, ("words", "unit"), words["unit"])
        multiple = words.get("unit_multiple") and _pattern(doc, ("words", "unit_multiple"), words["unit_multiple"])
        lesson["volume"] = [(p, None) for p in volume_patterns(unit, multiple)]
        lesson["repeat_volume"] = [
            (p, _repeat_value(k))
            for k, c in conditions.items()
            if "repeat" in c
            for p in repeat_volume_patterns(unit, _pattern(doc, ("conditions", k, "repeat"), c["repeat"]))
        ]
    return Vocabulary(
        path=Path(path),
        vetoes=dict(d["vetoes"]),
        subjects={
            k: Subject(s["name"], frozenset(s.get("partitions", ())), _step(s.get("step", ())))
            for k, s in d["subjects"].items()
        },
        baseline=d.get("baseline"),
        questions={q: frozenset(s) for q, s in (d.get("questions") or {}).items()},
        object_names={k: o["name"] for k, o in objects.items()},
        never_partitioned=frozenset(k for k, o in objects.items() if o.get("never_partitioned")),
        collective=frozenset(frozenset(o["group"]) for o in objects.values() if o.get("collective") and o.get("group")),
        op_volume={k: _op_volume(operations, k) for k in operations},
        op_parts={k: tuple(o.get("parts", ())) for k, o in operations.items()},
        divisor=_pattern(doc, ("words", "divisor"), words["divisor"]) if "divisor" in words else None,
        unit_name=(d.get("names") or {}).get("unit", ""),
        quantity_name=(d.get("names") or {}).get("quantity", "量"),
        reasons=dict(d.get("reasons") or {}),
        conditions={
            k: Condition(
                c["name"], (c.get("repeat") or {}).get("name", ""), {s: _step(step) for s, step in c["steps"].items()}
            )
            for k, c in conditions.items()
        },
        lexicon=compile_lexicon(lesson),
    )


def _step(entries: list[dict]) -> tuple[StepOp, ...]:
    """A step's operations as declared."""
    return tuple(StepOp(o["op"], frozenset(o.get("phase", ())), bool(o.get("repeated"))) for o in entries)


def _repeat_value(condition: str):
    """A repeated quantity ('3mΨ') reads as its condition and its units per repetition."""
    return lambda m: (condition, cue_value("volume", m))


def _object_value(entry: dict, key: str) -> frozenset[str]:
    """An object word stands for its group's members, or for itself."""
    return frozenset(entry.get("group") or (key,))


def _op_volume(operations: dict, key: str, seen: tuple[str, ...] = ()) -> float:
    """An operation's quantity: declared, or the sum of its parts'."""
    entry = operations[key]
    if "volume" in entry:
        return float(entry["volume"])
    return sum(_op_volume(operations, p, (*seen, key)) for p in entry["parts"])


def _check_references(doc: YamlDocument) -> None:
    """Every id a fact names is declared in this file (subjects, objects, operations, phases)."""
    d = doc.data
    subjects, objects = set(d["subjects"]), set(d.get("objects") or {})
    operations, phases = set(d.get("operations") or {}), set(d.get("phases") or {})

    def need(key_path: tuple, value: Any, known: set[str], what: str) -> None:
        if value not in known:
            raise doc.error(
                key_path,
                f"{value!r} is not a declared {what}; expected one of {', '.join(sorted(known)) or '(none declared)'}",
            )

    def steps(key_path: tuple, step: list[dict], repeats: bool) -> None:
        for i, entry in enumerate(step):
            need((*key_path, i, "op"), entry["op"], operations, "operation")
            for j, phase in enumerate(entry.get("phase", ())):
                need((*key_path, i, "phase", j), phase, phases, "phase")
            if entry.get("repeated") and not repeats:
                raise doc.error(
                    (*key_path, i, "repeated"),
                    "only a step under a condition with 'repeat' words can repeat an operation",
                )

    for name, s in d["subjects"].items():
        for i, obj in enumerate(s.get("partitions", ())):
            need(("subjects", name, "partitions", i), obj, objects, "object")
        steps(("subjects", name, "step"), s.get("step", ()), False)
    for name, c in (d.get("conditions") or {}).items():
        for subject, step in c["steps"].items():
            need(("conditions", name, "steps", subject), subject, subjects, "subject")
            steps(("conditions", name, "steps", subject), step, "repeat" in c)
    if "baseline" in d:
        need(("baseline",), d["baseline"], subjects, "subject")
    for q, names in (d.get("questions") or {}).items():
        for i, name in enumerate(names):
            need(("questions", q, i), name, subjects, "subject")
    for i, entry in enumerate(d["subject_words"]):
        for key, name in (entry.get("numbered") or {}).items():
            need(("subject_words", i, "numbered", key), name, subjects, "subject")
        for j, name in enumerate(entry.get("subjects", ())):
            need(("subject_words", i, "subjects", j), name, subjects, "subject")
    for name, o in (d.get("objects") or {}).items():
        for i, member in enumerate(o.get("group", ())):
            need(("objects", name, "group", i), member, objects - {name}, "object")
    for name, o in (d.get("operations") or {}).items():
        for i, part in enumerate(o.get("parts", ())):
            need(("operations", name, "parts", i), part, operations - {name}, "operation")
            if "parts" in d["operations"][part]:
                raise doc.error(
                    ("operations", name, "parts", i),
                    f"{part!r} is itself a sum of parts; expected an operation with a volume",
                )


def _compile(doc: YamlDocument, key_path: tuple, pattern: str) -> str:
    """A pattern that compiles, or an error naming its key."""
    try:
        re.compile(pattern, re.I)
    except re.error as exc:
        raise doc.error(
            key_path, f"not a valid regular expression ({exc.msg} at position {exc.pos}): {pattern!r}"
        ) from None
    return pattern


def _pattern(doc: YamlDocument, key_path: tuple, words: dict) -> str:
    """One alternation of a word list: zh patterns as written, en patterns as whole English words."""
    zh = [_compile(doc, (*key_path, "zh", i), p) for i, p in enumerate(words.get("zh", ()))]
    en = [_compile(doc, (*key_path, "en", i), p) for i, p in enumerate(words.get("en", ()))]
    parts = zh + ([f"{EN_START}(?:{'|'.join(en)}){EN_END}"] if en else [])
    if not parts:
        raise doc.error(key_path, "expected at least one pattern under zh or en")
    return "|".join(f"(?:{p})" for p in parts)


def _subject_entry(doc: YamlDocument, index: int, entry: dict) -> tuple[str, object]:
    """A subject pattern with its value: fixed subjects, or subjects read from the digits of group n."""
    pattern = _compile(doc, ("subject_words", index, "pattern"), entry["pattern"])
    if "subjects" in entry:
        return pattern, frozenset(entry["subjects"])
    if "n" not in re.compile(pattern).groupindex:
        raise doc.error(
            ("subject_words", index, "pattern"),
            "expected a group (?P<n>…) holding the numbers that 'numbered' maps to subjects",
        )
    numbered = dict(entry["numbered"])
    return pattern, lambda m: frozenset(
        numbered[d] for d in re.findall(r"\d", m.group("n").translate(CHINESE_DIGITS)) if d in numbered
    )
