"""The `course` command: a thin edge over the library; errors become exit codes only here.

Only the chosen command's module is imported (the others' one-line summaries are read from their docstrings
without importing them), so `course --help` and a no-op `course build` do not pay for nbgrader, torch or jsonschema.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import sys
from pathlib import Path

from course import skip_unused_iri_checker
from course.errors import CourseError, Interrupted

# Each subcommand lives in course/commands/<name>.py with add_arguments(parser) and run(args) -> int.
COMMANDS = (
    "build",
    "preview",
    "publish",
    "check",
    "grade",
    "report",
    "similarity",
    "lab",
    "demo",
    "new",
    "hub",
    "roster",
    "extend",
    "stats",
    "hand-in",
    "feedback",
)


def _module(name: str) -> str:
    """The module of command NAME (`hand-in` lives in course/commands/hand_in.py)."""
    return f"course.commands.{name.replace('-', '_')}"


def _summary(name: str) -> str | None:
    """First line of a command module's docstring, read from its source so the module is not imported."""
    spec = importlib.util.find_spec(_module(name))
    doc = ast.get_docstring(ast.parse(Path(spec.origin).read_text("utf-8")))
    return doc.strip().splitlines()[0] if doc else None


def _parser(chosen: str | None) -> argparse.ArgumentParser:
    """The argument parser: every command listed, only the CHOSEN one's options (and module) loaded."""
    parser = argparse.ArgumentParser(prog="course", description="Build, publish and grade the course.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        sp = sub.add_parser(name, help=_summary(name))
        if name == chosen:
            module = importlib.import_module(_module(name))
            module.add_arguments(sp)
            sp.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; a CourseError prints its located message and exits 2."""
    argv = sys.argv[1:] if argv is None else argv
    skip_unused_iri_checker()
    chosen = next((a for a in argv if not a.startswith("-")), None)
    args = _parser(chosen if chosen in COMMANDS else None).parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except CourseError as exc:
        print(f"course {args.command}: {exc}", file=sys.stderr)
        return 2
    except Interrupted as exc:  # Ctrl-C in a command that can resume: no traceback, how far it got and how to go on
        print(f"course {args.command}: {exc.message}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:  # Ctrl-C: no traceback
        return 130


if __name__ == "__main__":
    sys.exit(main())
