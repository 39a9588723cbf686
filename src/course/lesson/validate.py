"""One way to read and validate the course's YAML/JSON data: schema errors name the file, the line and the key.

Rubrics, veto records, a lesson's checks and the options written inside a lesson (front matter, `#|` lines)
are all checked here against versioned JSON schemas shipped with the package, so every bad input reads the
same way: 'rubrics/lesson05.yml, line 12: code_items/0/points: expected a number ≥ 0, got -1'.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from course.errors import CourseError, InvalidYaml, Location, SchemaMismatch

FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser, when PyYAML was built with it


@dataclass(frozen=True)
class YamlDocument:
    """Parsed YAML data plus its node tree, so a key path can be turned into a line number."""

    path: Path
    data: Any
    node: yaml.Node | None

    def line(self, key_path: tuple[Any, ...]) -> int:
        """1-based line of the value at key_path (or of its deepest existing parent)."""
        node = self.node
        for key in key_path:
            child = _child(node, key)
            if child is None:
                break
            node = child
        return node.start_mark.line + 1 if node is not None else 1

    def key_line(self, key_path: tuple[Any, ...], key: str) -> int:
        """1-based line of the key KEY inside the mapping at key_path."""
        node = self.node
        for part in key_path:
            node = _child(node, part) or node
        if isinstance(node, yaml.MappingNode):
            for k, _ in node.value:
                if k.value == key:
                    return k.start_mark.line + 1
        return self.line(key_path)

    def error(self, key_path: tuple[Any, ...], message: str, *, line: int | None = None) -> CourseError:
        """A CourseError 'FILE, line N: a/b/0: message'."""
        key = "/".join(str(p) for p in key_path) or "(top level)"
        return CourseError(f"{key}: {message}", Location(display_path(self.path), line or self.line(key_path)))


def display_path(path: Path) -> str:
    """'rubrics/lesson05.yml' or 'lesson05/checks.yml': the file name alone would not say which."""
    path = Path(path)
    return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


def _child(node: yaml.Node | None, key: Any) -> yaml.Node | None:
    """The child node at a mapping key or sequence index, or None."""
    if isinstance(node, yaml.MappingNode):
        return next((v for k, v in node.value if k.value == str(key)), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        return node.value[key]
    return None


def load_yaml(path: Path) -> YamlDocument:
    """Read a YAML file keeping node marks; syntax errors and repeated keys name the line."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise CourseError("file not found", Location(display_path(path))) from None
    except UnicodeDecodeError as exc:
        raise CourseError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", Location(display_path(path))) from None
    return parse_yaml(path, text)


def parse_yaml(path: Path, text: str) -> YamlDocument:
    """Parse YAML text that belongs to PATH, keeping node marks for line numbers: with libyaml where PyYAML has it (a
    lesson's vocabulary parses in a tenth of the time), and where it finds an error, again with PyYAML's own parser,
    whose message and line are the ones reported."""
    if FAST_LOADER is not yaml.SafeLoader:
        try:
            return _parse(path, text, FAST_LOADER)
        except (InvalidYaml, yaml.YAMLError):
            pass
    return _parse(path, text, yaml.SafeLoader)


def _parse(path: Path, text: str, loader_class: type) -> YamlDocument:
    """parse_yaml with one loader."""
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _reject_repeated_keys(path, node)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise InvalidYaml(
            f"not valid YAML: {exc.problem}", Location(display_path(path), mark.line + 1 if mark else None)
        ) from None
    finally:
        loader.dispose()
    return YamlDocument(Path(path), data, node)


def _reject_repeated_keys(path: Path, node: yaml.Node) -> None:
    """YAML keeps only the last of two equal keys; a course data file must not silently lose one."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for k, v in node.value:
            if k.value in seen:
                raise CourseError(
                    f"key {k.value!r} appears twice (first at line {seen[k.value]}); expected it once",
                    Location(display_path(path), k.start_mark.line + 1),
                )
            seen[k.value] = k.start_mark.line + 1
            _reject_repeated_keys(path, v)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            _reject_repeated_keys(path, v)


@cache
def load_schema(package: str, name: str) -> dict:
    """A versioned JSON schema shipped with the package (PACKAGE/schema/NAME.json)."""
    return json.loads(resources.files(package).joinpath("schema", f"{name}.json").read_text("utf-8"))


def _errors(data: Any, package: str, name: str) -> list:
    """Every schema error of DATA (jsonschema is imported only when something is validated)."""
    import jsonschema

    return list(jsonschema.Draft202012Validator(load_schema(package, name)).iter_errors(data))


def validate_document(doc: YamlDocument, package: str, name: str) -> None:
    """Check a document against a schema; report the problem that comes first in the file (SchemaMismatch)."""
    placed = [(_error_line(doc, e), e) for e in _errors(doc.data, package, name)]
    if placed:
        line, err = min(placed, key=lambda p: (p[0], len(p[1].absolute_path)))
        located = doc.error(tuple(err.absolute_path), explain(err), line=line)
        raise SchemaMismatch(
            located.message, located.where, found=err.instance, rule=err.validator, expected=err.validator_value
        )


def validate_data(data: Any, package: str, name: str, where: Location, what: str) -> None:
    """Check data that sits at one place of a bigger file (front matter, a cell's options) against a schema."""
    errors = sorted(_errors(data, package, name), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        key = "/".join(str(p) for p in errors[0].absolute_path) or "(top level)"
        raise CourseError(f"{what} {key}: {explain(errors[0])}", where)


def read_json_file(path: Path, package: str, name: str, *, missing: str, remedy: str = "") -> dict:
    """Load a JSON data file and check it against its schema; each failure names the file, the place and the fix."""
    path = Path(path)
    if not path.is_file():
        raise CourseError(missing, Location(path))
    try:
        data = json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise CourseError(f"not valid JSON ({exc.msg}){remedy}", Location(path, exc.lineno)) from exc
    check_json_data(data, path, package, name, remedy=remedy)
    return data


def check_json_data(data: Any, path: Path, package: str, name: str, *, remedy: str = "") -> None:
    """Check data meant for a JSON file against its schema, naming the file and the place of the likeliest problem."""
    import jsonschema

    err = jsonschema.exceptions.best_match(_errors(data, package, name))
    if err is not None:
        where = "/".join(str(p) for p in err.absolute_path) or "top level"
        expected = load_schema(package, name)["$id"]
        raise CourseError(f"at {where}: {err.message}; expected a {expected} file{remedy}", Location(path))


def _error_line(doc: YamlDocument, err) -> int:
    """The line a schema error points at: the unknown key itself, else the value at the path."""
    path = tuple(err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        if extra:
            return doc.key_line(path, str(extra[0]))
    return doc.line(path)


def explain(err) -> str:
    """Turn a schema error into 'expected …' wording."""
    v, value, got = err.validator, err.validator_value, err.instance
    if v == "additionalProperties":
        allowed = sorted(err.schema.get("properties", {}))
        extra = sorted(set(got) - set(allowed))
        return f"unknown key {', '.join(map(repr, extra))}; expected only {', '.join(allowed)}"
    if v == "required":
        missing = [k for k in value if k not in got]
        return f"missing key {', '.join(map(repr, missing))}; expected {', '.join(value)}"
    messages = {
        "type": lambda: f"expected {'a ' + value if isinstance(value, str) else ' or '.join(value)}, got {got!r}",
        "const": lambda: f"expected {value!r}, got {got!r}",
        "enum": lambda: f"{got!r} is not allowed; expected one of {', '.join(map(repr, value))}",
        "pattern": lambda: f"expected text matching {value}, got {got!r}",
        "minItems": lambda: f"expected at least {value} item(s), got {len(got)}",
        "minProperties": lambda: f"expected at least {value} entr{'y' if value == 1 else 'ies'}, got {len(got)}",
        "uniqueItems": lambda: f"expected no repeated entries, got {got!r}",
        "minLength": lambda: "expected non-empty text",
        "minimum": lambda: f"expected a number ≥ {value}, got {got!r}",
        "exclusiveMinimum": lambda: f"expected a number > {value}, got {got!r}",
    }
    return messages[v]() if v in messages else f"expected {err.message}"
