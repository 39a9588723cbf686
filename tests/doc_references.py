"""What the course's documents show must exist: `course` subcommands and their flags, make targets, `python -m`
modules and scripts, nbgrader subcommands and their flags, and the files their relative links name.

Commands are read from shell code blocks (```bash, sh, shell, console) and from inline code spans whose first word
is one of the programs checked here (`course …`, `make …`, `nbgrader …`, `python -m …`, `.venv/bin/python …`,
`torchrun … -m …`). A span such as `course build: up to date` quotes what a command prints (the CLI's
`course SUB: message` form) and is not a command.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
PROGRAMS = {"course", "make", "nbgrader", "python", "python3", "torchrun"}
OPERATORS = {"&&", "||", ";", "|", "&"}
ENV_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([^`\s{]*)")
INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
NBGRADER_HELP = {"help", "help-all", "h", "version"}


@dataclass(frozen=True)
class Problem:
    """One thing a document shows that does not exist, located by file and line."""

    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Command:
    """One command a document shows: its words, and the line where it starts."""

    line: int
    words: tuple[str, ...]


def documents(root: Path = ROOT) -> list[Path]:
    """README.md and every guide under docs/."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _split_blocks(text: str) -> tuple[list[tuple[int, str, list[str]]], list[tuple[int, str]]]:
    """Fenced code blocks as (first line, language, lines) and the prose lines outside them as (line, text)."""
    blocks, prose, open_block = [], [], None
    for number, line in enumerate(text.splitlines(), 1):
        fence = FENCE.match(line)
        if open_block is None:
            if fence:
                open_block = (fence.group(1), number + 1, fence.group(2).lower(), [])
            else:
                prose.append((number, line))
        elif (
            fence
            and fence.group(1)[0] == open_block[0][0]
            and len(fence.group(1)) >= len(open_block[0])
            and not fence.group(2)
        ):
            blocks.append(open_block[1:])
            open_block = None
        else:
            open_block[3].append(line)
    if open_block is not None:
        blocks.append(open_block[1:])
    return blocks, prose


def _prose_text(prose: list[tuple[int, str]]) -> tuple[str, list[int], list[int]]:
    """The prose lines joined, with each line's offset in the joined text and its number in the document."""
    starts, text = [], ""
    for number, line in prose:
        starts.append((len(text), number))
        text += line + "\n"
    return text, [start for start, _ in starts], [number for _, number in starts]


def _line_at(offset: int, starts: list[int], numbers: list[int]) -> int:
    """The document line holding character OFFSET of the joined prose."""
    index = max(i for i, start in enumerate(starts) if start <= offset) if starts else 0
    return numbers[index] if numbers else 1


def _words(source: str) -> list[str]:
    """Shell words of SOURCE, operators as words of their own, comments dropped; ValueError on unbalanced quotes."""
    lexer = shlex.shlex(source, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def _commands(line: int, source: str) -> list[Command]:
    """The simple commands of one shell line (split at &&, ||, ;, |), environment assignments dropped."""
    commands, current = [], []
    for word in [*_words(source), ";"]:
        if word in OPERATORS:
            while current and ENV_ASSIGNMENT.match(current[0]):
                current.pop(0)
            if current:
                commands.append(Command(line, tuple(current)))
            current = []
        else:
            current.append(word)
    return commands


def _program(word: str) -> str:
    """The program a command word runs: `.venv/bin/python` is python."""
    return word.rsplit("/", 1)[-1]


def commands_in(text: str) -> tuple[list[Command], list[tuple[int, str]]]:
    """Every command TEXT shows, and the lines whose shell words cannot be read (unbalanced quotes)."""
    blocks, prose = _split_blocks(text)
    commands, unreadable = [], []
    for first, language, lines in blocks:
        if language not in SHELL_LANGUAGES:
            continue
        pending, start = "", first
        for number, raw in enumerate(lines, first):
            stripped = raw.strip()
            if not pending:
                start = number
                stripped = stripped.removeprefix("$ ")
            if stripped.endswith("\\"):
                pending += stripped[:-1] + " "
                continue
            source, pending = pending + stripped, ""
            try:
                commands += _commands(start, source)
            except ValueError:
                unreadable.append((start, source))
    joined, starts, numbers = _prose_text(prose)
    for span in INLINE_CODE.finditer(joined):
        source = " ".join(span.group(2).split())
        first_word = next((w for w in source.split() if not ENV_ASSIGNMENT.match(w)), "")
        if _program(first_word) not in PROGRAMS:
            continue
        line = _line_at(span.start(), starts, numbers)
        try:
            commands += _commands(line, source)
        except ValueError:
            unreadable.append((line, source))
    return commands, unreadable


def links_in(text: str) -> list[tuple[int, str]]:
    """Every link target of TEXT's prose (inline code left out), with its line."""
    _, prose = _split_blocks(text)
    joined, starts, numbers = _prose_text(prose)
    without_code = INLINE_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), joined)
    return [(_line_at(m.start(), starts, numbers), m.group(1)) for m in LINK.finditer(without_code)]


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives TEXT's headings: lower case, punctuation dropped, spaces as hyphens, -1 on repeats."""
    _, prose = _split_blocks(text)
    anchors, seen = set(), {}
    for _, line in prose:
        heading = HEADING.match(line)
        if not heading:
            continue
        title = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(2)).strip().lower()
        slug = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


class Project:
    """What exists in the course repository: its CLI parser, Makefile targets, modules, nbgrader's apps, files."""

    def __init__(self, root: Path = ROOT):
        self.root = root

    @functools.cached_property
    def course_commands(self) -> tuple[str, ...]:
        """The subcommands `course` lists."""
        from course.cli import COMMANDS

        return COMMANDS

    @functools.cache
    def course_options(self, command: str | None) -> set[str]:
        """The option strings of `course COMMAND` (of `course` itself for None), from the real parser."""
        from course.cli import _parser

        parser = _parser(command)
        if command is None:
            return set(parser._option_string_actions)
        subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return set(subparsers.choices[command]._option_string_actions)

    @functools.cached_property
    def make_targets(self) -> set[str]:
        """The targets the Makefile's rules name (pattern and variable rules left out)."""
        targets = set()
        for line in (self.root / "Makefile").read_text("utf-8").splitlines():
            rule = re.match(r"^([^\s#=:][^=:]*):(?!=)", line)
            if rule and "$(" not in rule.group(1):
                targets.update(rule.group(1).split())
        return targets

    @staticmethod
    def module_exists(name: str) -> bool:
        """Whether `python -m NAME` finds a module (without running it)."""
        try:
            return importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            return False


def _nbgrader_app(app) -> type:
    """An nbgrader subcommand's application class (nbgrader names some by import string)."""
    if isinstance(app, str):
        from traitlets.utils.importstring import import_item

        return import_item(app)
    return app


def _check_course(project: Project, words: list[str]) -> list[str]:
    """What is wrong with `course WORDS…`."""
    if not words:
        return []
    command = None if words[0].startswith("-") else words[0]
    if command is not None and command.endswith(":"):
        return []  # a message the command prints, not a command
    if command is not None and command not in project.course_commands:
        return [
            f"`course {command}`: course has no subcommand {command!r} (it has {', '.join(project.course_commands)})"
        ]
    options = project.course_options(command)
    flags = [w.strip("[]").split("=", 1)[0] for w in words if w.strip("[").startswith("-")]
    name = f"course {command}" if command else "course"
    return [
        f"`{name}` has no option {flag!r} (it has {', '.join(sorted(options))})"
        for flag in flags
        if flag not in options and flag != "-"
    ]


def _check_nbgrader(words: list[str]) -> list[str]:
    """What is wrong with `nbgrader WORDS…`: its subcommands (db's nested ones too) and their flags."""
    from nbgrader.apps import NbGraderApp

    app, name, problems = NbGraderApp, "nbgrader", []
    for word in (w for w in words if not w.startswith("-")):
        subcommands = app.subcommands if isinstance(app.subcommands, dict) else {}
        if not subcommands:
            break  # the rest are the subcommand's arguments
        if word not in subcommands:
            problems.append(f"`{name}` has no subcommand {word!r} (it has {', '.join(sorted(subcommands))})")
            return problems
        app, name = _nbgrader_app(subcommands[word][0]), f"{name} {word}"
    known = set(app.flags) | set(app.aliases) | NBGRADER_HELP
    for word in words:
        if word.startswith("-"):
            flag = word.lstrip("-").split("=", 1)[0]
            if "." not in flag and flag not in known:
                problems.append(f"`{name}` has no option {word.split('=', 1)[0]!r}")
    return problems


def _check_python_module(project: Project, words: list[str]) -> list[str]:
    """What is wrong with `python … -m MODULE ARGS` (torchrun's too); `-m course` is checked as `course ARGS`."""
    index = words.index("-m")
    if index + 1 >= len(words):
        return ["`-m` without a module"]
    module, rest = words[index + 1], words[index + 2 :]
    if module == "course":
        return _check_course(project, rest)
    return [] if project.module_exists(module) else [f"`python -m {module}`: no module named {module!r}"]


def _check_python(project: Project, words: list[str]) -> list[str]:
    """What is wrong with `python ARGS`: the module run with -m, or the script run, must exist."""
    if "-m" in words:
        return _check_python_module(project, words)
    script = next((w for w in words if not w.startswith("-")), None)
    if "-c" in words or script is None or not script.endswith(".py"):
        return []
    return [] if (project.root / script).is_file() else [f"`python {script}`: no file {script}"]


def check_command(project: Project, command: Command) -> list[str]:
    """What is wrong with one command a document shows (nothing for programs this checker does not know)."""
    program, args = _program(command.words[0]), list(command.words[1:])
    if program == "course":
        return _check_course(project, args)
    if program == "make":
        targets = ", ".join(sorted(project.make_targets))
        return [
            f"`make {target}`: the Makefile has no target {target!r} (it has {targets})"
            for target in args
            if not target.startswith("-") and "=" not in target and target not in project.make_targets
        ]
    if program == "nbgrader":
        return _check_nbgrader(args)
    if program in ("python", "python3"):
        return _check_python(project, args)
    if program == "torchrun" and "-m" in args:
        return _check_python_module(project, args)
    return []


def check_links(project: Project, path: Path, text: str) -> list[Problem]:
    """Relative links of the document at PATH whose file (or heading anchor) does not exist."""
    problems = []
    for line, target in links_in(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # https:, mailto: …
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            problems.append(Problem(path, line, f"link to {target!r}: no file {file_part!r} next to {path.name}"))
        elif anchor and linked.suffix == ".md" and anchor not in heading_anchors(linked.read_text("utf-8")):
            problems.append(Problem(path, line, f"link to {target!r}: {linked.name} has no heading #{anchor}"))
    return problems


def check_document(path: Path, text: str | None = None, project: Project | None = None) -> list[Problem]:
    """Everything the document at PATH (or TEXT, read as if it were there) shows that does not exist."""
    project = project or Project()
    text = path.read_text("utf-8") if text is None else text
    commands, unreadable = commands_in(text)
    problems = [
        Problem(path, line, f"cannot read the shell words of {source!r} (unbalanced quotes?)")
        for line, source in unreadable
    ]
    for command in commands:
        problems += [Problem(path, command.line, message) for message in check_command(project, command)]
    return sorted(problems + check_links(project, path, text), key=lambda p: p.line)
